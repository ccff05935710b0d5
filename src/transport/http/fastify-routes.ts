/**
 * Registers the route table (./routes.ts) on fastify: one fastify route per active entry, its
 * handler called with the same arguments as the hot dispatcher calls it, its answer written
 * by the entry's `reply` kind. Requests the hot dispatcher leaves (and every request when it is
 * off) are answered here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteHandlerMethod } from 'fastify';
import { requestCheck, type HttpAuth } from './auth.js';
import { setPrincipal } from './call-context.js';
import { ServiceError } from '../../service/errors.js';
import { checkAnswerText } from '../answer-bound.js';
import type { CallContext } from '../../service/types.js';
import { type Route, type RouteDeps, paramName } from './route.js';
import { JSON_TYPE } from './serialize.js';

/** The call context of a fastify request (with the trace context when tracing is on). */
export type FastifyCallContext = (req: FastifyRequest) => CallContext;

/** Authentication of the fastify routes (absent: off). */
export interface RouteAuth {
  readonly auth: HttpAuth;
  readonly multiTenancy: boolean;
}

/**
 * Registers every route of `routes` (already filtered by `when`) on `app`; with `auth`, each
 * route that is not open checks its caller in `onRequest`, before the body is read.
 */
export function registerRoutes(app: FastifyInstance, routes: readonly Route[], deps: RouteDeps, ctxOf: FastifyCallContext, auth?: RouteAuth): void {
  for (const route of routes) {
    const onRequest = auth === undefined ? undefined : authHook(route, auth);
    app.route({ method: route.method, url: route.path, handler: fastifyHandler(route, deps, ctxOf), ...(onRequest ? { onRequest } : {}) });
  }
}

/** The `onRequest` hook checking a route's caller, or undefined for an open route. */
function authHook(route: Route, { auth, multiTenancy }: RouteAuth): onRequestHookHandler | undefined {
  const check = requestCheck(route, auth, multiTenancy);
  if (check === null) return undefined;
  return (req, _reply, done) => {
    let principal;
    try {
      principal = check(req.raw);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (principal instanceof Promise) {
      principal.then(
        (p) => {
          setPrincipal(req.raw, p);
          done();
        },
        (err: unknown) => done(err as Error),
      );
      return;
    }
    setPrincipal(req.raw, principal);
    done();
  };
}

/** The fastify handler of one route, chosen once by its `reply` kind. */
function fastifyHandler(route: Route, deps: RouteDeps, ctxOf: FastifyCallContext): RouteHandlerMethod {
  const name = paramName(route.path);
  const paramOf = name === null ? () => '' : (req: FastifyRequest) => (req.params as Record<string, string>)[name] ?? '';
  switch (route.reply) {
    case 'text': {
      const { handle, headers } = route;
      const max = deps.maxResponseBytes;
      return (req, reply) => {
        const text = handle(deps, ctxOf(req), paramOf(req), req.body, req.raw);
        const extra = headers === undefined ? null : headers(deps);
        checkAnswerText(text, max);
        if (extra !== null) void reply.headers(extra);
        void reply.type(JSON_TYPE).send(text);
      };
    }
    case 'json': {
      const { handle, status } = route;
      const max = deps.maxResponseBytes;
      return (req, reply) => {
        const value = handle(deps, ctxOf(req), paramOf(req), req.body, req.raw);
        // NOTE: fastify sends what a returned promise resolves to (async façade methods).
        if (value instanceof Promise) {
          if (status !== undefined) void reply.code(status);
          return value.then((v: unknown) => {
            sendJson(reply, v, max);
          });
        }
        if (status !== undefined) void reply.code(status);
        sendJson(reply, value, max);
        return undefined;
      };
    }
    case 'empty': {
      const handle = route.handle;
      return (req, reply) =>
        handle(deps, ctxOf(req), paramOf(req), req.body, req.raw).then(() => {
          void reply.code(204).send();
        });
    }
    case 'raw': {
      const handle = route.handle;
      const max = deps.maxResponseBytes;
      return (req, reply) =>
        handle(deps, ctxOf(req), paramOf(req), req.body, req.raw).then(({ contentType, body }) => {
          checkAnswerText(body, max);
          void reply.header('content-type', contentType).send(body);
        });
    }
    default:
      return assertNever(route);
  }
}

/**
 * Sends a JSON answer; a returned ServiceError is answered with its status and catalog body.
 * NOTE (EXTENSIONS.md 6 "Answers"): serialized here (what fastify's default serializer does,
 * JSON.stringify) so that the text is bounded by `max` before it is sent; a larger answer
 * throws LIMIT_EXCEEDED to the error handler.
 */
function sendJson(reply: FastifyReply, value: unknown, max: number): void {
  if (value instanceof ServiceError) {
    void reply.code(value.httpStatus).send(value.toBody());
    return;
  }
  const text = JSON.stringify(value);
  if (text === undefined) {
    void reply.send(value);
    return;
  }
  checkAnswerText(text, max);
  void reply.type(JSON_TYPE).send(text);
}

function assertNever(route: never): never {
  throw new Error(`unknown reply kind of route ${(route as Route).id}`);
}
