/**
 * The OpenAPI 3.1 document of the HTTP adapter (`GET /api/v1/openapi.json`, docs/openapi.md),
 * generated from the route table: one operation per active route (./route.ts), its request
 * body from `requestSchema`, its success answer and route-specific errors from `doc`, and the
 * errors every route of its kind can answer derived here (`routeErrors`). Built once per
 * adapter, at the first request (./app.ts); never on the path of another request.
 */
import { ERROR_CATALOG, type ErrorCode } from '../../service/errors.js';
import { routeCheck } from './auth.js';
import { type Route, type RouteError, type SchemaNode, paramName } from './route.js';

/** What the document depends on besides the routes: the server's modes. */
export interface OpenApiOptions {
  /** The server version (`info.version`). */
  readonly version: string;
  /** `--multi-tenancy-enabled`: tenant-scoped routes take `X-Tenant-Id`. */
  readonly multiTenancy: boolean;
  /** Authentication (null: off, every route open); `publicMetrics` is `--auth-public-metrics`. */
  readonly auth: { readonly publicMetrics: boolean } | null;
}

/** One error a route can answer. */
export interface DocumentedError {
  readonly code: ErrorCode;
  readonly status: number;
}

type Json = Record<string, unknown>;

const ERROR_REF = '#/components/schemas/Error';

/** `/api/v1/rulesets/:name` → `/api/v1/rulesets/{name}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/**
 * Every catalog error `route` can answer under `options`: its own (`doc.errors`) and those of
 * every route of its kind, in catalog order, each (code, status) once.
 */
export function routeErrors(route: Route, options: OpenApiOptions): DocumentedError[] {
  const codes: RouteError[] = [...route.doc.errors, 'INTERNAL_ERROR', 'NOT_READY'];
  // Every answer with a body is bounded by --max-response-bytes.
  if (route.reply !== 'empty') codes.push('LIMIT_EXCEEDED');
  // A body may come with every method but GET: malformed JSON, too large, not JSON, too slow.
  if (route.method !== 'GET') codes.push('BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'REQUEST_TIMEOUT');
  // A path parameter over 128 characters, or one that is not a valid name.
  if (paramName(route.path) !== null) codes.push('BAD_REQUEST');
  // Another method on this path.
  if (route.allowHeader !== false) codes.push('METHOD_NOT_ALLOWED');
  const checked = options.auth !== null && routeCheck(route, options.auth).need !== null;
  if (checked) codes.push('UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED');
  if (tenantScoped(route, options)) codes.push('TENANT_NOT_FOUND', 'RATE_LIMITED');
  if ((route.permission === 'write' || route.permission === 'admin') && route.method !== 'GET') codes.push('READ_ONLY');
  const seen = new Set<string>();
  const out: DocumentedError[] = [];
  for (const c of codes) {
    const e = typeof c === 'string' ? { code: c, status: ERROR_CATALOG[c].http } : c;
    const key = `${e.code} ${e.status}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  const order = Object.keys(ERROR_CATALOG);
  return out.sort((a, b) => order.indexOf(a.code) - order.indexOf(b.code) || a.status - b.status);
}

/** True when `route` acts for the request's tenant (`X-Tenant-Id`) in multi-tenancy mode. */
function tenantScoped(route: Route, options: OpenApiOptions): boolean {
  return options.multiTenancy && route.scope !== 'global' && route.permission !== 'public';
}

/** The OpenAPI 3.1 document of `routes` (the active routes of one adapter). */
export function buildOpenApi(routes: readonly Route[], options: OpenApiOptions): Json {
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const route of routes) {
    const path = openApiPath(route.path);
    const tag = tagOf(route.path);
    tags.add(tag);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, tag, options);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc rule evaluation service',
      version: options.version,
      description:
        'The HTTP API of this server, generated from its route table. Every error answer is `{error, code, ...details}` with `code` from the error catalog; ' +
        `multi-tenancy is ${options.multiTenancy ? 'on' : 'off'} and authentication is ${options.auth === null ? 'off' : 'on'} on this server.`,
    },
    servers: [{ url: '/' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: components(),
  };
}

function operation(route: Route, tag: string, options: OpenApiOptions): Json {
  const op: Json = { operationId: route.id, summary: route.doc.summary };
  if (route.doc.description !== undefined) op['description'] = route.doc.description;
  op['tags'] = [tag];
  op['x-svc-permission'] = route.permission;
  if (route.scope === 'global') op['x-svc-scope'] = 'global';
  const parameters: Json[] = [];
  const param = paramName(route.path);
  if (param !== null) {
    parameters.push({
      name: param,
      in: 'path',
      required: true,
      description: param === 'id' ? 'the tenant id' : 'the name (1-128 of A-Z a-z 0-9 _ - ., not starting with a dot)',
      schema: { type: 'string', minLength: 1, maxLength: 128 },
    });
  }
  if (tenantScoped(route, options)) parameters.push({ $ref: '#/components/parameters/TenantId' });
  for (const h of route.doc.headers ?? [])
    parameters.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } });
  if (parameters.length > 0) op['parameters'] = parameters;
  if (route.requestSchema !== 'none') {
    const schema = route.requestSchema;
    op['requestBody'] = {
      required: (schema.required?.length ?? 0) > 0 || schema.type === undefined,
      content: { 'application/json': { schema: toSchema(schema) } },
    };
  }
  op['responses'] = { ...successResponse(route), ...errorResponses(routeErrors(route, options)) };
  if (options.auth !== null) {
    op['security'] = routeCheck(route, options.auth).need === null ? [] : [{ apiKey: [] }, { jwt: [] }];
  }
  return op;
}

function successResponse(route: Route): Record<string, Json> {
  switch (route.reply) {
    case 'empty':
      return { '204': { description: 'Done (no body).' } };
    case 'raw':
      return { '200': { description: route.doc.summary, content: { 'text/plain': { schema: { type: 'string' } } } } };
    case 'text':
    case 'json': {
      const status = route.reply === 'json' ? (route.status ?? 200) : 200;
      const answer: Json = { description: route.doc.summary, content: { 'application/json': { schema: toSchema(route.doc.response ?? {}) } } };
      if (route.reply === 'text' && route.headers !== undefined) {
        answer['headers'] = { 'X-Svc-Decision-Id': { $ref: '#/components/headers/DecisionId' } };
      }
      return { [String(status)]: answer };
    }
  }
}

function errorResponses(errors: readonly DocumentedError[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const e of errors) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e.code]);
  const out: Record<string, Json> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const codes = byStatus.get(status) ?? [];
    const response: Json = {
      description: codes.map((c) => `\`${c}\``).join(', '),
      content: { 'application/json': { schema: { allOf: [{ $ref: ERROR_REF }], properties: { code: { enum: codes } } } } },
    };
    if (status === 401) response['headers'] = { 'WWW-Authenticate': { $ref: '#/components/headers/WwwAuthenticate' } };
    if (status === 429) response['headers'] = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };
    out[String(status)] = response;
  }
  return out;
}

/** A `SchemaNode` as a JSON Schema 2020-12 object (they are one already; copied as plain JSON). */
function toSchema(node: SchemaNode): Json {
  return JSON.parse(JSON.stringify(node)) as Json;
}

function tagOf(path: string): string {
  if (path.includes('/shadow')) return 'shadow runs';
  if (/\/(diff|impact)$/.test(path) || path.startsWith('/api/v1/draft/')) return 'changes';
  if (path.startsWith('/api/v1/execute') || path === '/api/v1/eval') return 'execution';
  if (path.startsWith('/api/v1/rulesets')) return 'rulesets';
  if (path.startsWith('/api/v1/data')) return 'reference data';
  if (path.startsWith('/api/v1/tenants')) return 'tenants';
  if (path.startsWith('/api/v1/debug')) return 'debug';
  return 'operations';
}

function components(): Json {
  return {
    securitySchemes: {
      apiKey: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'svc API key',
        description: 'An API key made by `svc-apikey`, sent as `Authorization: Bearer <key>`.',
      },
      jwt: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'A JWT verified against the configured JWKS, sent as `Authorization: Bearer <token>`.',
      },
    },
    parameters: {
      TenantId: {
        name: 'X-Tenant-Id',
        in: 'header',
        required: false,
        description: 'The tenant the request acts for (default: `default`).',
        schema: { type: 'string', minLength: 1, maxLength: 128 },
      },
    },
    headers: {
      DecisionId: {
        description:
          'The id of the decision record of this execution (batch items are `<id>.<index>`); only when the decision log is on and the call was recorded.',
        schema: { type: 'string' },
      },
      RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
      WwwAuthenticate: { description: '`Bearer`.', schema: { type: 'string' } },
    },
    schemas: {
      Error: {
        type: 'object',
        description: 'Every error answer. Some codes add fields (docs/errors.md), e.g. `problems` on a 400 or `retry_after_ms` on a 429.',
        properties: {
          error: { type: 'string', description: 'what went wrong, for a human' },
          code: { type: 'string', enum: Object.keys(ERROR_CATALOG), description: 'the stable code of the error catalog' },
          problems: { type: 'array', items: { $ref: '#/components/schemas/Problem' }, description: 'every problem at once (400 BAD_REQUEST, INPUT_INVALID)' },
        },
        required: ['error', 'code'],
      },
      Problem: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } }, required: ['path', 'message'] },
    },
  };
}
