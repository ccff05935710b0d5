/**
 * The JSON body parser of the HTTP adapter: reads the body with a size limit (413) and a
 * read timeout (408), rejects empty bodies, malformed JSON, nesting deeper than
 * `MAX_JSON_DEPTH` and `__proto__` / `constructor.prototype` keys (400). Errors carry a
 * ServiceError so the error handler answers with the catalog body.
 */
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../../service/errors.js';
import { DeadlineQueue, type Deadline } from './deadlines.js';

/** Deepest nesting of arrays and objects accepted in a request body. */
export const MAX_JSON_DEPTH = 512;

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

/** Parses JSON text under the body rules (empty, malformed, depth, prototype keys). */
export function parseJsonText(text: string): unknown {
  if (text.length === 0 || text.trim().length === 0) throw new ServiceError('BAD_REQUEST', 'request body is empty; send a JSON object');
  // NOTE: depth needs at least one character per level, so short bodies skip the scan.
  if (text.length > MAX_JSON_DEPTH && jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new ServiceError('BAD_REQUEST', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ServiceError('BAD_REQUEST', `malformed JSON: ${(err as Error).message}`);
  }
  if (PROTO_HINT.test(text) && hasPrototypeKey(value)) {
    throw new ServiceError('BAD_REQUEST', 'request body contains a forbidden key (__proto__ or constructor.prototype)');
  }
  return value;
}

const PROTO_HINT = /__proto__|\\u005[fF]|constructor/;

/** True when the JSON text nests arrays/objects deeper than `max` (strings are skipped). */
function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Iterative scan for `__proto__` keys or `constructor` objects holding `prototype`. */
function hasPrototypeKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    if (Object.hasOwn(v, '__proto__')) return true;
    const ctor = (v as Record<string, unknown>)['constructor'];
    if (Object.hasOwn(v, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return true;
    for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
  }
  return false;
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes (--max-request-body-bytes)`);
}
