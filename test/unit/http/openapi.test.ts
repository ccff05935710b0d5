/**
 * The OpenAPI document (src/transport/http/openapi.ts) against the route table: every route of
 * every mode (plain, multi-tenancy, debug, authentication) is an operation with its method,
 * path, parameters, body, permission and security; the document is structurally valid
 * OpenAPI 3.1 (version, info, every `$ref` resolves, unique operation ids, every path
 * parameter declared, every schema compiles as JSON Schema 2020-12); and the server serves
 * exactly it, built once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ERROR_CATALOG } from '../../../src/service/errors.js';
import type { RuleServiceApi } from '../../../src/service/types.js';
import type { TenantManagerApi } from '../../../src/service/tenant-manager.js';
import { buildOpenApi, openApiPath, routeErrors, type OpenApiOptions } from '../../../src/transport/http/openapi.js';
import { type Route, type RouteDeps, activeRoutes, paramName } from '../../../src/transport/http/route.js';
import { ROUTES } from '../../../src/transport/http/routes.js';
import { VERSION } from '../../../src/version.js';
import { makeHarness, type Harness } from './harness.js';
import { DocSchemas, operations, pointerToken, resolveRef } from './openapi-support.js';

const service = {} as RuleServiceApi;
const BASE: RouteDeps = { service, debugMode: false, maxResponseBytes: 10485760 };

/** The server modes: which routes exist, and what the document depends on. */
const MODES: ReadonlyArray<{ name: string; deps: RouteDeps; options: OpenApiOptions }> = [
  { name: 'plain', deps: BASE, options: { version: '1.2.3', multiTenancy: false, auth: null } },
  {
    name: 'multi-tenancy + debug + auth',
    deps: { ...BASE, debugMode: true, debugRuleset: () => null, tenants: {} as TenantManagerApi },
    options: { version: '1.2.3', multiTenancy: true, auth: { publicMetrics: false } },
  },
  { name: 'auth with public metrics', deps: BASE, options: { version: '1.2.3', multiTenancy: false, auth: { publicMetrics: true } } },
];

const docs = MODES.map((m) => ({ ...m, routes: activeRoutes(ROUTES, m.deps), doc: buildOpenApi(activeRoutes(ROUTES, m.deps), m.options) as any }));

describe('OpenAPI document: every route of the table', () => {
  it('the modes together cover every route of the table', () => {
    const covered = new Set(docs.flatMap((d) => d.routes.map((r) => r.id)));
    assert.deepEqual(
      ROUTES.map((r) => r.id).filter((id) => !covered.has(id)),
      [],
    );
  });

  for (const { name, routes, doc, options } of docs) {
    it(`${name}: each active route is one operation with its method, path, parameters, body and permission`, () => {
      assert.equal(operations(doc).length, routes.length, 'one operation per route, nothing else');
      for (const r of routes) assertOperation(doc, r, options);
    });
  }

  it('every route documents a summary, and a success schema unless it answers 204 or raw text', () => {
    for (const r of ROUTES) {
      assert.ok(r.doc.summary.length > 0, `${r.id}: summary`);
      assert.equal(r.doc.response === undefined, r.reply === 'empty' || r.reply === 'raw', `${r.id}: success schema`);
    }
  });

  it('the diff takes a seq, "current" or a document for from and to (oneOf)', () => {
    const { doc } = docs[0]!;
    const schemas = new DocSchemas(doc);
    const ptr = `#/paths/${pointerToken('/api/v1/rulesets/{name}/diff')}/post/requestBody/content/application~1json/schema`;
    for (const ok of [
      { from: 1, to: 'current' },
      { from: { config: {}, steps: {} }, to: 2 },
    ])
      assert.equal(schemas.check(ptr, ok), null, JSON.stringify(ok));
    for (const bad of [{ from: 'latest', to: 1 }, { from: 0, to: 1 }, { from: 1.5, to: 1 }, { from: 1 }])
      assert.notEqual(schemas.check(ptr, bad), null, JSON.stringify(bad));
  });

  it('routeErrors: statuses come from the catalog, /eval answers LIMIT_EXCEEDED with 400 and 500', () => {
    const opts = MODES[1]!.options;
    for (const r of ROUTES) {
      for (const e of routeErrors(r, opts)) {
        const entry: { http: number; evalHttp?: number } = ERROR_CATALOG[e.code];
        assert.ok(e.status === entry.http || e.status === entry.evalHttp, `${r.id}: ${e.code} ${e.status}`);
      }
    }
    const ev = routeErrors(
      ROUTES.find((r) => r.id === 'eval')!,
      opts,
    ).filter((e) => e.code === 'LIMIT_EXCEEDED');
    assert.deepEqual(ev.map((e) => e.status).sort(), [400, 500]);
  });
});

function assertOperation(doc: any, r: Route, options: OpenApiOptions): void {
  const where = `${r.method} ${r.path}`;
  const op = doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()];
  assert.ok(op, `${where}: in the document`);
  assert.equal(op.operationId, r.id, where);
  assert.equal(op['x-svc-permission'], r.permission, `${where}: permission`);
  assert.equal(op['x-svc-scope'], r.scope, `${where}: scope`);
  const params: any[] = (op.parameters ?? []).map((p: any) => (p.$ref ? resolveRef(doc, p.$ref) : p));
  const name = paramName(r.path);
  const pathParams = params.filter((p) => p.in === 'path');
  assert.deepEqual(
    pathParams.map((p) => p.name),
    name === null ? [] : [name],
    `${where}: path parameters`,
  );
  for (const p of pathParams) assert.equal(p.required, true, `${where}: a path parameter is required`);
  const tenantHeader = params.some((p) => p.in === 'header' && p.name === 'X-Tenant-Id');
  assert.equal(tenantHeader, options.multiTenancy && r.scope !== 'global' && r.permission !== 'public', `${where}: X-Tenant-Id`);
  assert.equal(op.requestBody !== undefined, r.requestSchema !== 'none', `${where}: request body`);
  if (r.requestSchema !== 'none')
    assert.deepEqual(
      op.requestBody.content['application/json'].schema,
      JSON.parse(JSON.stringify(r.requestSchema)),
      `${where}: the request schema of the table`,
    );
  const success = r.reply === 'empty' ? '204' : r.reply === 'json' && r.status !== undefined ? String(r.status) : '200';
  assert.ok(op.responses[success], `${where}: ${success}`);
  assert.equal(
    op.responses['200']?.headers?.['X-Svc-Decision-Id'] !== undefined,
    r.reply === 'text' && r.headers !== undefined,
    `${where}: decision id header`,
  );
  if (options.auth === null) assert.equal(op.security, undefined, `${where}: no security with authentication off`);
  else {
    const open = r.permission === 'public' || (r.id === 'metrics' && options.auth.publicMetrics);
    assert.deepEqual(op.security, open ? [] : [{ apiKey: [] }, { jwt: [] }], `${where}: security`);
    if (!open) for (const s of ['401', '403', '429']) assert.ok(op.responses[s], `${where}: ${s} with authentication on`);
    if (!open) assert.ok(op.responses['429'].headers['Retry-After'], `${where}: Retry-After on 429`);
  }
  // Every error response lists catalog codes of its status.
  for (const [status, res] of Object.entries<any>(op.responses)) {
    if (Number(status) < 400) continue;
    const codes: string[] = res.content['application/json'].schema.properties.code.enum;
    assert.ok(codes.length > 0, `${where}: ${status} codes`);
  }
}

describe('OpenAPI document: structurally valid OpenAPI 3.1', () => {
  for (const { name, doc } of docs) {
    it(`${name}: version, info, paths, operation ids, $refs, path parameters, schemas`, () => {
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(typeof doc.info.title, 'string');
      assert.equal(typeof doc.info.version, 'string');
      assert.equal(typeof doc.paths, 'object');
      const ids = new Set<string>();
      for (const { path, method, op } of operations(doc)) {
        const where = `${method} ${path}`;
        assert.ok(path.startsWith('/'), where);
        assert.ok(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'].includes(method), where);
        assert.equal(typeof op.operationId, 'string', where);
        assert.ok(!ids.has(op.operationId), `${where}: operationId ${op.operationId} unique`);
        ids.add(op.operationId);
        // every {param} of the path is declared as a required path parameter, and no other
        const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        const declared = (op.parameters ?? []).map((p: any) => (p.$ref ? resolveRef(doc, p.$ref) : p)).filter((p: any) => p.in === 'path');
        assert.deepEqual(declared.map((p: any) => p.name).sort(), inPath.sort(), `${where}: path parameters`);
        assert.ok(Object.keys(op.responses).length > 0, `${where}: responses`);
        for (const [status, res] of Object.entries<any>(op.responses)) {
          assert.match(status, /^[1-5]\d\d$/, `${where}: status ${status}`);
          assert.equal(typeof res.description, 'string', `${where} ${status}: description`);
        }
      }
      // every $ref resolves
      const refs: string[] = [];
      walk(doc, (node) => {
        if (typeof node['$ref'] === 'string') refs.push(node['$ref']);
      });
      assert.ok(refs.length > 0);
      for (const ref of refs) assert.notEqual(resolveRef(doc, ref), undefined, `$ref ${ref}`);
      // every schema compiles as JSON Schema 2020-12
      const schemas = new DocSchemas(doc);
      for (const { path, method, op } of operations(doc)) {
        const base = `#/paths/${pointerToken(path)}/${method.toLowerCase()}`;
        if (op.requestBody) schemas.validator(`${base}/requestBody/content/application~1json/schema`);
        for (const [status, res] of Object.entries<any>(op.responses)) {
          for (const media of Object.keys(res.content ?? {})) schemas.validator(`${base}/responses/${status}/content/${pointerToken(media)}/schema`);
        }
      }
      // security requirements name declared schemes
      for (const { op } of operations(doc))
        for (const req of op.security ?? []) for (const s of Object.keys(req)) assert.ok(doc.components.securitySchemes[s], s);
    });
  }
});

function walk(node: unknown, visit: (n: Record<string, unknown>) => void): void {
  if (Array.isArray(node)) for (const n of node) walk(n, visit);
  else if (node !== null && typeof node === 'object') {
    visit(node as Record<string, unknown>);
    for (const v of Object.values(node)) walk(v, visit);
  }
}

describe('GET /api/v1/openapi.json', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
  });
  after(() => h.close());

  it('serves the document of the server routes, public, the same text every time', async () => {
    const r1 = await h.request('GET', '/api/v1/openapi.json');
    assert.equal(r1.status, 200, r1.text);
    assert.match(String(r1.headers['content-type']), /^application\/json/);
    assert.equal(r1.body.info.version, VERSION);
    const expected = buildOpenApi(activeRoutes(ROUTES, { ...BASE, metrics: async () => ({ contentType: '', body: '' }) }), {
      version: VERSION,
      multiTenancy: false,
      auth: null,
    });
    assert.deepEqual(r1.body, expected);
    const r2 = await h.request('GET', '/api/v1/openapi.json');
    assert.equal(r2.text, r1.text);
    assertMethodNotAllowed(await h.request('POST', '/api/v1/openapi.json', {}));
  });
});

function assertMethodNotAllowed(r: { status: number; body: any; headers: Record<string, unknown> }): void {
  assert.equal(r.status, 405);
  assert.equal(r.body.code, 'METHOD_NOT_ALLOWED');
  assert.equal(r.headers['allow'], 'GET');
}
