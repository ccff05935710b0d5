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
export function readJsonBody(
  raw: IncomingMessage,
  limit: number,
  timeoutMs: number,
  done: (err: Error | null, body?: unknown) => void,
): void {
  const declared = raw.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    done(tooLarge(limit));
    raw.resume();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: unknown) => {
    if (finished) return;
    finished = true;
    if (timer) timer.cancel();
    raw.off('data', onData);
    raw.off('end', onEnd);
    raw.off('error', onError);
    done(err, body);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      finish(tooLarge(limit));
      raw.resume();
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    try {
      finish(null, parseJsonText(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    } catch (err) {
      finish(err as Error);
    }
  };
  const onError = (err: Error) => finish(new ServiceError('BAD_REQUEST', `request body could not be read: ${err.message}`));
  // NOTE (speed, issue 9): one shared timer per timeout length instead of one per request.
  const timer: Deadline | undefined =
    timeoutMs > 0
      ? deadlinesFor(timeoutMs).add(() =>
          finish(new ServiceError('REQUEST_TIMEOUT', `request body not received within ${Math.round(timeoutMs / 1000)} s (--request-timeout-secs)`)),
        )
      : undefined;
  raw.on('data', onData);
  raw.on('end', onEnd);
  raw.on('error', onError);
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
