/**
 * The fast path of the two hot routes (issue 9): `POST /api/v1/execute/:name` and
 * `POST /api/v1/eval` answered straight from node's HTTP server, without fastify's per-request
 * machinery (Request/Reply objects, hook runners, router, content-type parser lookup), which
 * costs about 10 us of CPU per request on these machines: a third of a whole execute request
 * (docs/performance.md, bench/NOTES.md).
 *
 * It takes a request only when it is certainly one of these two routes in its plain form:
 * method POST, the exact path (no query string, no percent-encoding, a ruleset name of plain
 * characters), `Content-Type: application/json` (optionally `; charset=utf-8`), and the server
 * not draining. Anything else goes to fastify untouched, before a byte of the body is read,
 * and gets the same answer it always did. A request taken here is decoded and answered by the
 * same code as the fastify routes (the body reader of ./json-body.ts, the handlers of
 * ./hot-routes.ts, the catalog errors of ./errors.ts), so both paths answer byte for byte
 * alike (test/integration/http-fast-path.test.ts compares them).
 *
 * The fast path is not installed when a request hook must see every request: trace export
 * (`--otlp-endpoint`), per-request debug lines (`--log-level debug`) and debug mode (CORS).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceError } from '../../service/errors.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import { closesEarly, toHttpError } from './errors.js';
import { evalAnswer, executeAnswer } from './hot-routes.js';
import { readJsonBody } from './json-body.js';
import { lingerOnClose } from './linger.js';
import { JSON_TYPE } from './serialize.js';

/** What the fast path needs from the HTTP adapter. */
export interface FastPathOptions {
  readonly service: RuleServiceApi;
  readonly bodyLimit: number;
  readonly requestTimeoutMs: number;
  readonly multiTenancy: boolean;
  /** True once the server drains for shutdown: requests then go to fastify (503 NOT_READY). */
  readonly isClosing: () => boolean;
  /** Logs a non-catalog error that became `e` (a 5xx), as the fastify error handler does. */
  readonly reportUnexpected: (err: unknown, e: ServiceError, url: string) => void;
}

/** Takes `req` and answers it (true), or leaves it untouched for fastify (false). */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const EXECUTE_PREFIX = '/api/v1/execute/';
const EVAL_PATH = '/api/v1/eval';
/** Longest ruleset name (SPEC.md: 1-128 characters). */
const MAX_NAME = 128;

/** Builds the fast path of one HTTP adapter. */
export function createFastPath(o: FastPathOptions): FastPath {
  const { service, bodyLimit, requestTimeoutMs, multiTenancy } = o;

  const send = (res: ServerResponse, status: number, text: string, close: boolean): void => {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string | number> = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) };
    // A request in flight when the drain starts is answered with `Connection: close` (app.ts).
    if (close || o.isClosing()) headers['connection'] = 'close';
    res.writeHead(status, headers);
    res.end(text);
  };

  /** `bodyError`: the body could not be read or parsed; fastify closes the connection then too. */
  const sendError = (req: IncomingMessage, res: ServerResponse, err: unknown, bodyError: boolean): void => {
    const e = toHttpError(err);
    o.reportUnexpected(err, e, req.url ?? '');
    // The same early-answer rule as the fastify error handler (app.ts).
    const early = closesEarly(e);
    if (early) lingerOnClose(req.socket);
    send(res, e.httpStatus, JSON.stringify(e.toBody()), early || bodyError);
  };

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    let name: string | null;
    if (url === EVAL_PATH) name = null;
    else if (url.startsWith(EXECUTE_PREFIX) && isPlainName(url, EXECUTE_PREFIX.length)) name = url.slice(EXECUTE_PREFIX.length);
    else return false;
    if (!isJsonType(req.headers['content-type']) || o.isClosing()) return false;

    readJsonBody(req, bodyLimit, requestTimeoutMs, (err, body) => {
      if (err) {
        sendError(req, res, err, true);
        return;
      }
      let text: string;
      try {
        const ctx: CallContext = { tenant: tenantOf(req, multiTenancy), sourceIp: req.socket?.remoteAddress ?? null, transport: 'http' };
        text = name === null ? evalAnswer(service, ctx, body) : executeAnswer(service, ctx, name, body);
      } catch (e) {
        sendError(req, res, e, false);
        return;
      }
      send(res, 200, text, false);
    });
    return true;
  };
}

/** The tenant of a request: `X-Tenant-Id` in multi-tenancy mode, else `default` (as app.ts). */
export function tenantOf(req: IncomingMessage, multiTenancy: boolean): string {
  if (!multiTenancy) return 'default';
  return headerValue(req, 'x-tenant-id') || 'default';
}

/** The first value of a request header (lower-case `name`), or undefined. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * True when `url` from `start` to its end is a plain ruleset name: 1-128 of A-Z a-z 0-9 _ - .,
 * not starting with '.'. Other names (encoded, with a query, too long, `..`) go to fastify,
 * whose router and the service answer them.
 */
function isPlainName(url: string, start: number): boolean {
  const n = url.length - start;
  if (n < 1 || n > MAX_NAME || url.charCodeAt(start) === 46) return false;
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i);
    // 0-9, A-Z, a-z, '_', '-', '.'
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46)) return false;
  }
  return true;
}

/** The Content-Type forms taken by the fast path; any other goes to fastify (415 or its parser). */
function isJsonType(type: string | undefined): boolean {
  return type === 'application/json' || type === JSON_TYPE || type === 'application/json;charset=utf-8' || type === 'application/json; charset=UTF-8';
}
