/**
 * The hot dispatcher: the route-table entries marked `hot` (`POST /api/v1/execute/:name` and
 * `POST /api/v1/eval`) answered straight from node's HTTP server, without fastify's
 * per-request machinery (Request/Reply objects, hook runners, router, content-type parser
 * lookup).
 *
 * NOTE (speed, bench/NOTES.md "Hot dispatcher vs fastify alone"): serving the hot routes by
 * fastify alone costs about 5 us more server CPU per execute request (48.8 vs 43.7 us, +12%)
 * and 7 us more per eval request (+9%), far outside the 3% that would let fastify serve them;
 * on a quiet machine fastify's per-request machinery measured about 10 us (bench/NOTES.md).
 *
 * It takes a request only when it is certainly a hot route in its plain form: the route's
 * method, its exact path (no query string, no percent-encoding, a parameter of plain
 * characters), `Content-Type: application/json` (optionally `; charset=utf-8`), and the server
 * not draining. Anything else goes to fastify untouched, before a byte of the body is read,
 * and gets the same answer it always did. A request taken here is decoded and answered by the
 * same code as the fastify routes (the body reader of ./json-body.ts, the route's handler, the
 * error rules of ./errors.ts, the drain state of ./drain.ts), so both paths answer byte for
 * byte alike (test/integration/http-hot-dispatch.test.ts compares them).
 *
 * It is not installed when a request hook must see every request: trace export
 * (`--otlp-endpoint`), per-request debug lines (`--log-level debug`) and debug mode (CORS).
 *
 * The request handling itself (`HotRoutes`: matching, the caller check, the handler, the
 * answer or error answer as text) does not touch node's request and response objects, so that
 * the HTTP/1.1 fast path (./fast-path.ts) answers with the very same code from bytes it parsed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkAnswerText } from '../answer-bound.js';
import type { Principal } from '../../auth/index.js';
import { requestCheck, type HttpAuth, type RequestCheck } from './auth.js';
import { callContextWith, type RequestHead } from './call-context.js';
import type { Drain } from './drain.js';
import { closesEarly, errorAnswer, errorHeaders, type ReportUnexpected } from './errors.js';
import { readJsonBody } from './json-body.js';
import { type Route, type RouteDeps, type TextRoute, paramName } from './route.js';
import { JSON_TYPE } from './serialize.js';

/** What the hot routes need from the HTTP adapter. */
export interface HotDispatchOptions {
  readonly deps: RouteDeps;
  readonly bodyLimit: number;
  readonly requestTimeoutMs: number;
  readonly multiTenancy: boolean;
  readonly drain: Drain;
  readonly reportUnexpected: ReportUnexpected;
  /** Authentication (absent: off). */
  readonly auth?: HttpAuth;
}

/** Takes `req` and answers it (true), or leaves it untouched for fastify (false). */
export type HotDispatch = (req: IncomingMessage, res: ServerResponse) => boolean;

/** A hot route compiled to a matcher: the exact path, or a prefix followed by one parameter. */
export interface HotMatcher {
  readonly method: string;
  /** The whole path of a route without a parameter, else null. */
  readonly exact: string | null;
  /** The path up to its parameter (the parameter is the last segment). */
  readonly prefix: string;
  readonly route: TextRoute;
  /** The check of the route's callers with authentication on; null: auth off or an open route. */
  readonly check: RequestCheck | null;
}

/** One answer of a hot route, as the request paths write it. */
export interface HotAnswer {
  readonly status: number;
  /** The JSON text of the body (`application/json; charset=utf-8`). */
  readonly text: string;
  /** `Connection: close` (an early error, a body that could not be read, or the server draining). */
  readonly close: boolean;
  /** Headers besides Content-Type, Content-Length and Connection (the decision id, WWW-Authenticate, Retry-After). */
  readonly extra: Readonly<Record<string, string>> | null;
}

/**
 * The hot routes without node's request and response objects: what both request paths in
 * front of fastify (the dispatcher below and ./fast-path.ts) do with a request.
 */
export interface HotRoutes {
  /** The body limit (a larger body is not taken by the fast path: the dispatcher answers its 413). */
  readonly bodyLimit: number;
  /**
   * The hot route of a plain request, or null (then it is not for the hot routes): the
   * method, the exact path, a JSON Content-Type, and the server not draining.
   */
  match(method: string | undefined, url: string, contentType: string | undefined): HotMatcher | null;
  /** The route's path parameter in `url` (a matched url). */
  param(m: HotMatcher, url: string): string;
  /** The answer of a request whose body parsed to `body`, for the checked caller (undefined: auth off or open route). */
  answer(m: HotMatcher, head: RequestHead, param: string, body: unknown, principal: Principal | undefined): HotAnswer;
  /** The error answer of `err`; `bodyError`: the body could not be read or parsed (the connection is closed then). */
  error(err: unknown, head: RequestHead, bodyError: boolean): HotAnswer;
}

/** Longest path parameter (SPEC.md: ruleset names are 1-128 characters); fastify's router uses it too. */
export const MAX_PATH_PARAM = 128;

/** Compiles the hot routes of `routes` into matchers (once per adapter). */
export function compileHotRoutes(routes: readonly Route[], auth?: HttpAuth, multiTenancy = false): HotMatcher[] {
  const matchers: HotMatcher[] = [];
  for (const route of routes) {
    if (route.reply !== 'text' || route.hot !== true) continue;
    const param = paramName(route.path);
    if (route.requestSchema === 'none') throw new Error(`hot route ${route.id}: the hot dispatcher reads a JSON body`);
    const check = auth === undefined ? null : requestCheck(route, auth, multiTenancy);
    if (param === null) matchers.push({ method: route.method, exact: route.path, prefix: route.path, route, check });
    else if (route.path.endsWith(`/:${param}`))
      matchers.push({ method: route.method, exact: null, prefix: route.path.slice(0, -param.length - 1), route, check });
    else throw new Error(`hot route ${route.id}: the parameter must be the last path segment`);
  }
  return matchers;
}

/** Builds the hot routes of one HTTP adapter over the hot entries of `routes`. */
export function createHotRoutes(routes: readonly Route[], o: HotDispatchOptions): HotRoutes {
  const { deps, multiTenancy, drain, auth } = o;
  const maxResponseBytes = deps.maxResponseBytes;
  const matchers = compileHotRoutes(routes, auth, multiTenancy);
  const count = matchers.length;

  const error = (err: unknown, head: RequestHead, bodyError: boolean): HotAnswer => {
    const e = errorAnswer(err, head, o.reportUnexpected);
    return { status: e.httpStatus, text: JSON.stringify(e.toBody()), close: closesEarly(e) || bodyError || drain.closing, extra: errorHeaders(e) };
  };

  return {
    bodyLimit: o.bodyLimit,
    match(method, url, contentType) {
      // NOTE (speed): a loop over the (two) compiled matchers, string compares and a char scan;
      // no regular expression, no allocation.
      for (let i = 0; i < count; i++) {
        const m = matchers[i] as HotMatcher;
        if (m.method !== method) continue;
        if (m.exact !== null) {
          if (url !== m.exact) continue;
        } else if (!url.startsWith(m.prefix) || !isPlainParam(url, m.prefix.length)) continue;
        return isJsonType(contentType) && !drain.closing ? m : null;
      }
      return null;
    },
    param: (m, url) => (m.exact !== null ? '' : url.slice(m.prefix.length)),
    answer(m, head, param, body, principal) {
      const route = m.route;
      let text: string;
      let extra: Readonly<Record<string, string>> | null = null;
      try {
        text = route.handle(deps, callContextWith(head, multiTenancy, principal), param, body, head);
        if (route.headers !== undefined) extra = route.headers(deps);
        checkAnswerText(text, maxResponseBytes);
      } catch (e) {
        return error(e, head, false);
      }
      return { status: 200, text, close: drain.closing, extra };
    },
    error,
  };
}

/** Builds the hot dispatcher of one HTTP adapter: `hot`'s requests answered from node's request and response. */
export function createHotDispatch(hot: HotRoutes, requestTimeoutMs: number): HotDispatch {
  const bodyLimit = hot.bodyLimit;

  const send = (res: ServerResponse, a: HotAnswer): void => {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string | number> = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(a.text) };
    if (a.close) headers['connection'] = 'close';
    if (a.extra !== null) Object.assign(headers, a.extra);
    res.writeHead(a.status, headers);
    res.end(a.text);
  };

  /** Reads the body and answers, for the checked caller `principal` (undefined: auth off). */
  const serve = (req: IncomingMessage, res: ServerResponse, m: HotMatcher, param: string, principal: Principal | undefined): void => {
    readJsonBody(req, bodyLimit, requestTimeoutMs, (err, body) => {
      send(res, err ? hot.error(err, req, true) : hot.answer(m, req, param, body, principal));
    });
  };

  return (req, res) => {
    const url = req.url ?? '';
    const m = hot.match(req.method, url, req.headers['content-type']);
    if (m === null) return false;
    const param = hot.param(m, url);
    const check = m.check;
    if (check === null) {
      serve(req, res, m, param, undefined);
      return true;
    }
    // NOTE (EXTENSIONS.md 1): checked before a byte of the body is read; node discards the
    // unread body of an answered request.
    let principal: Principal | Promise<Principal>;
    try {
      principal = check(req);
    } catch (e) {
      send(res, hot.error(e, req, false));
      return true;
    }
    if (principal instanceof Promise) {
      principal.then(
        (p) => serve(req, res, m, param, p),
        (e: unknown) => send(res, hot.error(e, req, false)),
      );
    } else serve(req, res, m, param, principal);
    return true;
  };
}

/**
 * True when `url` from `start` to its end is a plain path parameter: 1-128 of A-Z a-z 0-9 _ - .,
 * not starting with '.' (SPEC.md ruleset names). Other values (encoded, with a query, too long,
 * `..`) go to fastify, whose router and the service answer them.
 */
function isPlainParam(url: string, start: number): boolean {
  const n = url.length - start;
  if (n < 1 || n > MAX_PATH_PARAM || url.charCodeAt(start) === 46) return false;
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i);
    // 0-9, A-Z, a-z, '_', '-', '.'
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46)) return false;
  }
  return true;
}

/** The Content-Type forms taken here; any other goes to fastify (415 or its parser). */
function isJsonType(type: string | undefined): boolean {
  return type === 'application/json' || type === JSON_TYPE || type === 'application/json;charset=utf-8' || type === 'application/json; charset=UTF-8';
}
