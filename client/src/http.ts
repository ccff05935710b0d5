/**
 * One call of the client over `fetch`: headers (credential, tenant), the call's deadline and
 * signal, the answer's decoding, and the retries on 429 and 503 (see `retryWait`).
 */
import { SvcError, SvcRequestError, UNEXPECTED_ANSWER, type ErrorBody } from './errors.js';

/** Retries of a call on 429 and 503 answers. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0: none). */
  retries?: number;
  /** The first backoff in ms (default 100); it doubles at each retry. */
  baseDelayMs?: number;
  /** The longest backoff in ms (default 5000). */
  maxDelayMs?: number;
  /** The longest `Retry-After` waited for, in ms (default 30000); a longer one fails the call at once. */
  maxRetryAfterMs?: number;
}

/** Options of one call; each overrides the client's option of the same name. */
export interface CallOptions {
  /** Aborts the call (also while it waits to retry). */
  signal?: AbortSignal;
  /** Deadline of the whole call, retries and waits included, in ms; 0: none. */
  timeoutMs?: number;
  /** The tenant (`X-Tenant-Id`); null: send none (the server's `default`). */
  tenant?: string | null;
  /** Retry settings, or false: no retry. */
  retry?: RetryOptions | false;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/** How the answer's body is read. */
export type AnswerKind = 'json' | 'text' | 'empty';

/** One request of a client method. */
export interface Call {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path with its parameter filled in. */
  readonly path: string;
  /** The JSON body; undefined: none. */
  readonly body?: unknown;
  /**
   * Whether sending the request twice has the effect of sending it once: such requests are
   * retried on 503 too (every request is retried on 429, which svc answers before doing work).
   */
  readonly idempotent: boolean;
  readonly answer: AnswerKind;
  readonly headers?: Record<string, string>;
  /** The method's own retry default (false for the health probes: they report the state now). */
  readonly retry?: false;
}

/** The answer of a call. */
export interface Answer {
  readonly value: unknown;
  readonly headers: Headers;
}

/** What the transport needs of the client's options. */
export interface TransportSettings {
  readonly baseUrl: string;
  readonly fetch: typeof fetch;
  readonly authorization: () => string | undefined | Promise<string | undefined>;
  readonly tenant: string | null;
  readonly timeoutMs: number;
  readonly retry: Required<RetryOptions> | false;
  readonly headers: Record<string, string>;
  readonly random: () => number;
}

/** Default retry settings. */
export const DEFAULT_RETRY: Readonly<Required<RetryOptions>> = Object.freeze({ retries: 3, baseDelayMs: 100, maxDelayMs: 5000, maxRetryAfterMs: 30_000 });

/** Sends `call`, retrying as `retryWait` says; resolves to the 2xx answer or throws. */
export async function send(settings: TransportSettings, call: Call, options: CallOptions = {}): Promise<Answer> {
  const { method, path } = call;
  const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
  const retry = callRetry(settings.retry, call.retry, options.retry);
  const signal = options.signal;
  const controller = new AbortController();
  let why: 'timeout' | 'aborted' | null = null;
  const onAbort = (): void => {
    why ??= 'aborted';
    controller.abort(signal?.reason);
  };
  if (signal?.aborted) throw aborted(call, signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          why ??= 'timeout';
          controller.abort(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
  const failed = (err: unknown): SvcRequestError => {
    if (why === 'timeout') return new SvcRequestError('timeout', `${method} ${path} timed out after ${timeoutMs} ms`, method, path, { cause: err });
    if (why === 'aborted') return aborted(call, signal?.reason);
    return new SvcRequestError('network', `${method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`, method, path, { cause: err });
  };
  try {
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    for (let attempt = 0; ; attempt++) {
      const headers = await requestHeaders(settings, call, options, body !== undefined);
      let response: Response;
      let text: string;
      try {
        response = await settings.fetch(settings.baseUrl + path, { method, headers, body, signal: controller.signal });
        text = await response.text();
      } catch (err) {
        throw failed(err);
      }
      if (response.ok) return { value: decode(call, response, text), headers: response.headers };
      const error = toError(call, response, text);
      const wait = retry === false ? null : retryWait(call, error, attempt, retry, settings.random);
      if (wait === null || Date.now() + wait >= deadline) throw error;
      try {
        await sleep(wait, controller.signal);
      } catch (err) {
        throw failed(err);
      }
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The retry settings of one call: the call's option over the client's settings (field by
 * field), else the method's default (`false` for the health probes), else the client's.
 */
function callRetry(client: Required<RetryOptions> | false, method: false | undefined, call: RetryOptions | false | undefined): Required<RetryOptions> | false {
  if (call === false) return false;
  if (call !== undefined) return { ...(client === false ? DEFAULT_RETRY : client), ...call };
  return method === false ? false : client;
}

/** Retry settings with the defaults filled in. */
export function retrySettings(retry: RetryOptions | false): Required<RetryOptions> | false {
  return retry === false ? false : { ...DEFAULT_RETRY, ...retry };
}

/**
 * How long to wait before retrying after `error` (the answer of attempt `attempt`, 0-based), or
 * null: do not retry.
 *
 * - 429: every request is retried (svc refuses an over-limit request before running it),
 *   except when the body says `retry_after_ms: null` (a batch larger than the tenant's burst:
 *   waiting cannot help).
 * - 503: only idempotent requests (the answer may come from something in front of svc after
 *   the request reached it, so a create or a rollback could have been done).
 * - The wait is the backoff `min(maxDelayMs, baseDelayMs * 2^attempt)` with jitter (between half
 *   of it and all of it); with `Retry-After` (or the body's `retry_after_ms`), that time plus up
 *   to `baseDelayMs` of jitter, unless it is over `maxRetryAfterMs` (then no retry).
 */
export function retryWait(call: Call, error: SvcError, attempt: number, retry: Required<RetryOptions>, random: () => number): number | null {
  if (attempt >= retry.retries) return null;
  if (error.status === 429) {
    if (error.body.retry_after_ms === null) return null;
  } else if (error.status !== 503 || !call.idempotent) {
    return null;
  }
  if (error.retryAfterMs !== null) {
    if (error.retryAfterMs > retry.maxRetryAfterMs) return null;
    return error.retryAfterMs + random() * retry.baseDelayMs;
  }
  const backoff = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return backoff / 2 + (random() * backoff) / 2;
}

async function requestHeaders(settings: TransportSettings, call: Call, options: CallOptions, hasBody: boolean): Promise<Record<string, string>> {
  const headers: Record<string, string> = { accept: 'application/json', ...settings.headers };
  if (hasBody) headers['content-type'] = 'application/json';
  const authorization = await settings.authorization();
  if (authorization !== undefined) headers['authorization'] = authorization;
  const tenant = options.tenant === undefined ? settings.tenant : options.tenant;
  if (tenant !== null) headers['x-tenant-id'] = tenant;
  Object.assign(headers, call.headers, options.headers);
  return headers;
}

function decode(call: Call, response: Response, text: string): unknown {
  if (call.answer === 'empty' || response.status === 204) return undefined;
  if (call.answer === 'text') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SvcError(response.status, { error: `${call.method} ${call.path}: the answer is not JSON`, code: UNEXPECTED_ANSWER }, call, null);
  }
}

/** The error of a non-2xx answer: the catalog body, or `UNEXPECTED_ANSWER` when it is not one. */
export function toError(call: Call, response: Response, text: string): SvcError {
  let body: ErrorBody | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as ErrorBody).code === 'string' && typeof (parsed as ErrorBody).error === 'string') {
      body = parsed as ErrorBody;
    }
  } catch {
    // not JSON: the body below
  }
  body ??= { error: `HTTP ${response.status} ${response.statusText}: ${text.slice(0, 200)}`.trim(), code: UNEXPECTED_ANSWER };
  return new SvcError(response.status, body, call, retryAfter(response.headers, body));
}

/** `Retry-After` in ms (delay-seconds or an HTTP date), else the body's `retry_after_ms`, else null. */
export function retryAfter(headers: Headers, body: ErrorBody): number | null {
  const value = headers.get('retry-after');
  if (value !== null) {
    const trimmed = value.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
    const at = Date.parse(trimmed);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return typeof body.retry_after_ms === 'number' && body.retry_after_ms >= 0 ? body.retry_after_ms : null;
}

function aborted(call: Call, reason: unknown): SvcRequestError {
  return new SvcRequestError('aborted', `${call.method} ${call.path} was aborted`, call.method, call.path, { cause: reason });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
