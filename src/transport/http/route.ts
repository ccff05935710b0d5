/**
 * The shape of one HTTP route of the route table (./routes.ts): method, path, permission, a
 * description of the request body, the handler and how its answer is written. Both request
 * paths are built from these entries: fastify registers every active entry
 * (./fastify-routes.ts) and the hot dispatcher serves the entries marked `hot`
 * (./hot-dispatch.ts), so a route's decoding and answer exist once.
 */
import type { RoutePermission } from '../../auth/index.js';
import type { ErrorCode } from '../../service/errors.js';
import type { DataServiceApi } from '../../service/data-service.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import type { RequestHead } from './call-context.js';

/** HTTP methods of the routes. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Who may call a route (EXTENSIONS.md 1 permission names, or `public`); checked by ./auth.ts. */
export type Permission = RoutePermission;

/** JSON types of a schema node. */
export type SchemaType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

/**
 * A description of a JSON value: a subset of JSON Schema 2020-12, so that it is the OpenAPI 3.1
 * schema as is (./openapi.ts). For docs and OpenAPI; not used to validate requests. A node
 * without `type` (and without `oneOf`/`anyOf`/`enum`/`const`) is any JSON value.
 */
export interface SchemaNode {
  readonly type?: SchemaType | readonly SchemaType[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  /** Object keys not in `properties`: allowed when absent (JSON Schema's default). */
  readonly additionalProperties?: boolean | SchemaNode;
  readonly items?: SchemaNode;
  /** Exactly one of these (the diff's `from`: a seq, "current", or a document). */
  readonly oneOf?: readonly SchemaNode[];
  /** At least one of these (alternatives that overlap, e.g. `{"seq": N}` is also an object). */
  readonly anyOf?: readonly SchemaNode[];
  readonly enum?: readonly (string | number | boolean | null)[];
  readonly const?: string | number | boolean | null;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly format?: string;
}

/**
 * A catalog error a route can answer: its code (the catalog's HTTP status), or the code with
 * another status (`/eval` answers LIMIT_EXCEEDED with 400, the catalog's `evalHttp`).
 */
export type RouteError = ErrorCode | { readonly code: ErrorCode; readonly status: number };

/**
 * What the OpenAPI document (./openapi.ts) says of a route besides what the table already
 * says (method, path, permission, scope, request body, reply kind). Required on every route,
 * so a route cannot be added without its documentation.
 */
export interface RouteDoc {
  readonly summary: string;
  readonly description?: string;
  /** The body of the success answer (200/201); absent for a 204 or a raw (non-JSON) answer. */
  readonly response?: SchemaNode;
  /**
   * The catalog errors of this route beyond those ./openapi.ts `commonErrors` derives from the
   * table for every route of its kind (body, path parameter, authentication, tenant, write on a
   * reader, 500s).
   */
  readonly errors: readonly RouteError[];
  /** Request headers the route reads besides `Authorization` and `X-Tenant-Id`. */
  readonly headers?: readonly { readonly name: string; readonly description: string }[];
}

/**
 * The request body of a route: a schema description, or `none` for a route without a body.
 * NOTE: validation stays in the handlers and the façade, so that error texts do not change.
 */
export type BodySchema = SchemaNode | 'none';

/** What the handlers reach: the façade and the optional parts of the adapter. */
export interface RouteDeps {
  readonly service: RuleServiceApi;
  readonly debugMode: boolean;
  /** Largest answer body in bytes (`--max-response-bytes`); larger is LIMIT_EXCEEDED. */
  readonly maxResponseBytes: number;
  /** Tenant management (`--multi-tenancy-enabled`). */
  readonly tenants?: TenantManagerApi;
  /** Reference data (EXTENSIONS.md 3, ./data-routes.ts); absent: its routes answer 404. */
  readonly data?: DataServiceApi;
  /** Renders `/metrics`; undefined when metrics are disabled. */
  readonly metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Debug rendering of a ruleset's conditions (`--debug-mode`). */
  readonly debugRuleset?: (ctx: CallContext, name: string) => unknown;
  /** The OpenAPI document of this adapter's routes as JSON text (built once, at the first call). */
  readonly openApi?: () => string;
}

/**
 * A route handler: `param` is the value of the route's one path parameter ('' when it has
 * none), `body` the parsed JSON body (undefined without one), `raw` the request's head (headers; node's request or the fast path's).
 * NOTE (speed): one string instead of a params object, so the hot dispatcher allocates nothing
 * for it; no route has more than one parameter (test/unit/http/route-table.test.ts).
 */
export type Handler<T> = (deps: RouteDeps, ctx: CallContext, param: string, body: unknown, raw: RequestHead) => T;

interface RouteBase {
  /** Stable identifier (docs, OpenAPI operation id, metrics). */
  readonly id: string;
  readonly method: HttpMethod;
  /** fastify path syntax, e.g. `/api/v1/execute/:name`. */
  readonly path: string;
  readonly permission: Permission;
  /**
   * `global`: the route is about no single tenant (metrics, server settings, tenant
   * management), so with authentication on the credential must cover every tenant (`*`).
   * Absent: the route acts for the request's tenant.
   */
  readonly scope?: 'global';
  readonly requestSchema: BodySchema;
  /** Summary, success body and errors, for the OpenAPI document (./openapi.ts). */
  readonly doc: RouteDoc;
  /** Whether the route exists for these deps (tenant routes, debug route); always when absent. */
  readonly when?: (deps: RouteDeps) => boolean;
  /** False: a wrong method on this path is 404, not 405 (kept as the route always answered). */
  readonly allowHeader?: false;
}

/** A route answering JSON text it wrote itself (`application/json; charset=utf-8`, 200). */
export interface TextRoute extends RouteBase {
  readonly reply: 'text';
  /** Served by the hot dispatcher when its request is plain (./hot-dispatch.ts). */
  readonly hot?: boolean;
  readonly handle: Handler<string>;
  /** Extra headers of the 200 answer, read right after `handle` returned (the decision id); null: none. */
  readonly headers?: (deps: RouteDeps) => Readonly<Record<string, string>> | null;
}

/**
 * A route answering a value serialized by fastify (JSON.stringify), with `status` (200). A
 * ServiceError returned (not thrown) is answered with its status and catalog body as is.
 */
export interface JsonRoute extends RouteBase {
  readonly reply: 'json';
  readonly status?: 200 | 201;
  readonly hot?: never;
  readonly handle: Handler<unknown>;
}

/** A route answering 204 without a body once its handler has finished. */
export interface EmptyRoute extends RouteBase {
  readonly reply: 'empty';
  readonly hot?: never;
  readonly handle: Handler<Promise<unknown>>;
}

/** A route answering a body of its own content type (`/metrics`). */
export interface RawRoute extends RouteBase {
  readonly reply: 'raw';
  readonly hot?: never;
  readonly handle: Handler<Promise<{ contentType: string; body: string }>>;
}

/** One entry of the route table. */
export type Route = TextRoute | JsonRoute | EmptyRoute | RawRoute;

/** The name of a path's parameter (`name` of `/api/v1/rulesets/:name`), or null. */
export function paramName(path: string): string | null {
  const i = path.indexOf('/:');
  if (i < 0) return null;
  const end = path.indexOf('/', i + 2);
  return path.slice(i + 2, end < 0 ? path.length : end);
}

/** The routes of `routes` that exist for `deps`, in table order. */
export function activeRoutes(routes: readonly Route[], deps: RouteDeps): Route[] {
  return routes.filter((r) => r.when === undefined || r.when(deps));
}
