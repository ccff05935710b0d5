/**
 * The JSON body reader of the HTTP adapter: reads the body with a size limit (413) and a
 * read timeout (408), then parses it under the JSON text rules of ../json-text.ts (400 for
 * empty, malformed, too deep, prototype keys). Errors carry a ServiceError so the error
 * handler answers with the catalog body.
 */
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../../service/errors.js';
import { parseJsonText } from '../json-text.js';
import { DeadlineQueue, type Deadline } from './deadlines.js';

/** Reads and parses a JSON body. */
export function readJsonBody(raw: IncomingMessage, limit: number, timeoutMs: number, done: (err: Error | null, body?: unknown) => void): void {
  const declared = raw.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    done(tooLarge(limit));
    raw.resume();
    return;
  }
  const read = new BodyRead(limit, done);
  (raw as ReadingMessage)[READ] = read;
  // NOTE (speed, bench/NOTES.md): one shared timer per timeout length instead of one per request.
  if (timeoutMs > 0) read.deadline = deadlinesFor(timeoutMs).add(() => read.timedOut(timeoutMs));
  raw.on('data', onData);
  raw.on('end', onEnd);
  raw.on('error', onError);
}

const READ = Symbol('svc.bodyRead');
type ReadingMessage = IncomingMessage & { [READ]: BodyRead };

/**
 * The state of one body read. NOTE (speed, bench/NOTES.md): the stream listeners below are shared by
 * every read (an emitter calls them with `this` = the stream) and stay attached once the read
 * has finished (the `finished` flag makes later events no-ops, and a late 'error' is absorbed
 * instead of being unhandled): no closures per request, no listener removal.
 */
class BodyRead {
  finished = false;
  size = 0;
  first: Buffer | null = null;
  rest: Buffer[] | null = null;
  deadline: Deadline | undefined = undefined;

  constructor(
    readonly limit: number,
    readonly done: (err: Error | null, body?: unknown) => void,
  ) {}

  finish(err: Error | null, body?: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.first = null;
    this.rest = null;
    if (this.deadline !== undefined) this.deadline.cancel();
    this.done(err, body);
  }

  timedOut(timeoutMs: number): void {
    this.finish(new ServiceError('REQUEST_TIMEOUT', `request body not received within ${Math.round(timeoutMs / 1000)} s (--request-timeout-secs)`));
  }

  text(): string {
    if (this.first === null) return '';
    if (this.rest === null) return this.first.toString('utf8');
    return Buffer.concat([this.first, ...this.rest]).toString('utf8');
  }
}

function onData(this: ReadingMessage, chunk: Buffer): void {
  const read = this[READ];
  if (read.finished) return;
  read.size += chunk.length;
  if (read.size > read.limit) {
    read.finish(tooLarge(read.limit));
    this.resume();
    return;
  }
  if (read.first === null) read.first = chunk;
  else (read.rest ??= []).push(chunk);
}

function onEnd(this: ReadingMessage): void {
  const read = this[READ];
  if (read.finished) return;
  let body: unknown;
  try {
    body = parseJsonText(read.text());
  } catch (err) {
    read.finish(err as Error);
    return;
  }
  read.finish(null, body);
}

function onError(this: ReadingMessage, err: Error): void {
  this[READ].finish(new ServiceError('BAD_REQUEST', `request body could not be read: ${err.message}`));
}

const queues = new Map<number, DeadlineQueue>();

/** The deadline queue of one timeout length (every read of a server has the same). */
function deadlinesFor(timeoutMs: number): DeadlineQueue {
  let q = queues.get(timeoutMs);
  if (q === undefined) {
    q = new DeadlineQueue(timeoutMs);
    queues.set(timeoutMs, q);
  }
  return q;
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes (--max-request-body-bytes)`);
}
