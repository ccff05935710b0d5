/**
 * The route table (src/transport/http/routes.ts) walked as data: every route declares a
 * permission of the product contract and a request-body description (or `none`), no two routes
 * share a method and path, hot routes are ones the hot dispatcher can serve; the 405 `Allow`
 * lists derived from it; and the harness really drives the production listener (the hot
 * dispatcher in front of fastify).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Permission, type Route, type SchemaNode, activeRoutes, paramName } from '../../../src/transport/http/route.js';
import { compileAllowedMethods } from '../../../src/transport/http/route-match.js';
import { ROUTES } from '../../../src/transport/http/routes.js';
import { compileHotRoutes } from '../../../src/transport/http/hot-dispatch.js';
import type { RuleServiceApi } from '../../../src/service/types.js';
import type { TenantManagerApi } from '../../../src/service/tenant-manager.js';
import { ageRules, makeHarness, type Harness } from './harness.js';

const PERMISSIONS: readonly Permission[] = ['public', 'read', 'write', 'execute', 'admin'];

/** The permission of each route by the product contract. */
const CONTRACT: Record<string, Permission> = {
  'GET /api/v1/rulesets': 'read',
  'POST /api/v1/rulesets': 'write',
  'GET /api/v1/rulesets/:name': 'read',
  'DELETE /api/v1/rulesets/:name': 'write',
  'GET /api/v1/rulesets/:name/versions': 'read',
  'GET /api/v1/rulesets/:name/analysis': 'read',
  'POST /api/v1/rulesets/:name/rollback': 'write',
  'POST /api/v1/rulesets/:name/filter': 'execute',
  'POST /api/v1/rulesets/:name/test': 'read',
  'POST /api/v1/execute/:name': 'execute',
  'POST /api/v1/execute/:name/batch': 'execute',
  'POST /api/v1/eval': 'execute',
  'GET /api/v1/config/audit-sample-rate': 'read',
  'PUT /api/v1/config/audit-sample-rate': 'admin',
  'GET /health': 'public',
  'GET /healthz/live': 'public',
  'GET /healthz/ready': 'public',
  'GET /metrics': 'read',
  'GET /api/v1/openapi.json': 'public',
  'GET /api/v1/tenants': 'admin',
  'POST /api/v1/tenants': 'admin',
  'GET /api/v1/tenants/:id': 'admin',
  'PUT /api/v1/tenants/:id': 'admin',
  'DELETE /api/v1/tenants/:id': 'admin',
  'GET /api/v1/debug/rulesets/:name': 'read',
  // Input schema (EXTENSIONS.md 2).
  'GET /api/v1/rulesets/:name/schema': 'read',
  // Reference data (EXTENSIONS.md 3).
  'GET /api/v1/data': 'read',
  'GET /api/v1/data/:name': 'read',
  'PUT /api/v1/data/:name': 'write',
  'DELETE /api/v1/data/:name': 'write',
  // Judging a change: drafts execute; the diff and impact read (they report on stored versions).
  'POST /api/v1/draft/validate': 'execute',
  'POST /api/v1/draft/execute': 'execute',
  'POST /api/v1/draft/filter': 'execute',
  'POST /api/v1/draft/test': 'execute',
  'POST /api/v1/rulesets/:name/diff': 'read',
  'POST /api/v1/rulesets/:name/impact': 'read',
  // Shadow runs (EXTENSIONS.md 4): starting, promoting and ending one write, reading its counts reads.
  'PUT /api/v1/rulesets/:name/shadow': 'write',
  'GET /api/v1/rulesets/:name/shadow': 'read',
  'DELETE /api/v1/rulesets/:name/shadow': 'write',
  'POST /api/v1/rulesets/:name/shadow/promote': 'write',
};

const key = (r: Route): string => `${r.method} ${r.path}`;

const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

function assertSchema(node: SchemaNode, where: string): void {
  const types = node.type === undefined ? [] : typeof node.type === 'string' ? [node.type] : node.type;
  for (const t of types) assert.ok(TYPES.includes(t), `${where}: type ${t}`);
  for (const [name, child] of Object.entries(node.properties ?? {})) assertSchema(child, `${where}.${name}`);
  for (const name of node.required ?? []) assert.ok(node.properties?.[name] !== undefined, `${where}: required ${name} is described`);
  if (node.items) assertSchema(node.items, `${where}[]`);
  for (const [i, alt] of [...(node.oneOf ?? []), ...(node.anyOf ?? [])].entries()) assertSchema(alt, `${where}|${i}`);
}

describe('route table', () => {
  it('every route has an id, a permission of the contract and a request schema (or none)', () => {
    for (const r of ROUTES) {
      assert.match(r.id, /^[a-z][A-Za-z]+$/, `${key(r)}: id`);
      assert.ok(PERMISSIONS.includes(r.permission), `${key(r)}: permission ${String(r.permission)}`);
      assert.equal(r.permission, CONTRACT[key(r)], `${key(r)}: permission by the product contract`);
      assert.ok(r.requestSchema !== undefined && r.requestSchema !== null, `${key(r)}: request schema`);
      if (r.requestSchema !== 'none') assertSchema(r.requestSchema, key(r));
      const bodyless = r.method === 'GET' || r.method === 'DELETE';
      assert.equal(r.requestSchema === 'none', bodyless, `${key(r)}: a body schema exactly on routes with a body`);
    }
    assert.deepEqual(ROUTES.map(key).sort(), Object.keys(CONTRACT).sort(), 'the table holds exactly the routes of the contract');
  });

  it('authentication columns: permissions of the contract only, public exactly /health, /healthz/* and the OpenAPI document, every admin route global', () => {
    for (const r of ROUTES) assert.ok(['public', 'execute', 'read', 'write', 'admin'].includes(r.permission), `${key(r)}: permission ${String(r.permission)}`);
    assert.deepEqual(
      ROUTES.filter((r) => r.permission === 'public')
        .map((r) => r.path)
        .sort(),
      ['/api/v1/openapi.json', '/health', '/healthz/live', '/healthz/ready'],
    );
    const isPublicPath = (path: string): boolean => path === '/health' || path.startsWith('/healthz/') || path === '/api/v1/openapi.json';
    for (const r of ROUTES) {
      if (r.permission === 'public') assert.ok(isPublicPath(r.path), `${key(r)}: public`);
      else assert.ok(!isPublicPath(r.path), `${key(r)}: a health route or the OpenAPI document is public`);
      if (r.permission === 'admin') assert.equal(r.scope, 'global', `${key(r)}: an admin route is about every tenant`);
      assert.ok(r.scope === undefined || r.scope === 'global', `${key(r)}: scope`);
    }
  });

  it('no two routes share a method and path, or an id', () => {
    const seen = new Set<string>();
    const ids = new Set<string>();
    for (const r of ROUTES) {
      assert.ok(!seen.has(key(r)), `duplicate route ${key(r)}`);
      assert.ok(!ids.has(r.id), `duplicate id ${r.id}`);
      seen.add(key(r));
      ids.add(r.id);
    }
  });

  it('no route has more than one path parameter', () => {
    for (const r of ROUTES) assert.ok((r.path.match(/\/:/g) ?? []).length <= 1, key(r));
    assert.equal(paramName('/api/v1/rulesets/:name/versions'), 'name');
    assert.equal(paramName('/api/v1/eval'), null);
  });

  it('hot routes are execute and eval, compiled into exact and prefix matchers', () => {
    assert.deepEqual(
      ROUTES.filter((r) => r.hot === true).map((r) => r.id),
      ['execute', 'eval'],
    );
    const matchers = compileHotRoutes(ROUTES).map((m) => [m.method, m.exact, m.prefix, m.route.id]);
    assert.deepEqual(matchers, [
      ['POST', null, '/api/v1/execute/', 'execute'],
      ['POST', '/api/v1/eval', '/api/v1/eval', 'eval'],
    ]);
  });

  it('tenant routes exist only with a tenant manager, the debug route only in debug mode with a renderer', () => {
    const service = {} as RuleServiceApi;
    const ids = (deps: Parameters<typeof activeRoutes>[1]) => activeRoutes(ROUTES, deps).map((r) => r.id);
    const plain = ids({ service, debugMode: false, maxResponseBytes: 10485760 });
    assert.ok(!plain.some((id) => /Tenant/.test(id)) && !plain.includes('debugRuleset'));
    assert.ok(ids({ service, debugMode: false, maxResponseBytes: 10485760, tenants: {} as TenantManagerApi }).includes('createTenant'));
    assert.ok(!ids({ service, debugMode: true, maxResponseBytes: 10485760 }).includes('debugRuleset'));
    assert.ok(ids({ service, debugMode: true, maxResponseBytes: 10485760, debugRuleset: () => null }).includes('debugRuleset'));
  });

  it('405 Allow lists are derived from the table, in table order (tenants only when they exist)', () => {
    const service = {} as RuleServiceApi;
    const plain = compileAllowedMethods(activeRoutes(ROUTES, { service, debugMode: true, maxResponseBytes: 10485760, debugRuleset: () => null }));
    const tenants = compileAllowedMethods(activeRoutes(ROUTES, { service, debugMode: false, maxResponseBytes: 10485760, tenants: {} as TenantManagerApi }));
    const cases: Array<[string, string[], string[]]> = [
      ['/api/v1/rulesets', ['GET', 'POST'], ['GET', 'POST']],
      ['/api/v1/rulesets/x', ['GET', 'DELETE'], ['GET', 'DELETE']],
      ['/api/v1/rulesets/x/versions', ['GET'], ['GET']],
      ['/api/v1/rulesets/x/rollback', ['POST'], ['POST']],
      ['/api/v1/rulesets/x/filter', ['POST'], ['POST']],
      ['/api/v1/execute/x', ['POST'], ['POST']],
      ['/api/v1/execute/x/batch', ['POST'], ['POST']],
      ['/api/v1/eval', ['POST'], ['POST']],
      ['/api/v1/config/audit-sample-rate', ['GET', 'PUT'], ['GET', 'PUT']],
      ['/health', ['GET'], ['GET']],
      ['/healthz/live', ['GET'], ['GET']],
      ['/healthz/ready', ['GET'], ['GET']],
      ['/metrics', ['GET'], ['GET']],
      ['/api/v1/data', ['GET'], ['GET']],
      ['/api/v1/data/x', ['GET', 'PUT', 'DELETE'], ['GET', 'PUT', 'DELETE']],
      ['/api/v1/tenants', [], ['GET', 'POST']],
      ['/api/v1/tenants/t1', [], ['GET', 'PUT', 'DELETE']],
      // NOTE: a wrong method on the debug route has always been 404
      ['/api/v1/debug/rulesets/x', [], []],
      ['/api/v1/execute', [], []],
      ['/api/v1/execute/x/y', [], []],
      ['/api/v1/rulesets/', [], []],
    ];
    for (const [path, withoutTenants, withTenants] of cases) {
      assert.deepEqual(plain(path), withoutTenants, path);
      assert.deepEqual(tenants(path), withTenants, `${path} (tenants)`);
    }
  });
});

describe('the harness drives the production listener', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
    assert.equal((await h.request('POST', '/api/v1/rulesets', ageRules('age'))).status, 200);
  });
  after(() => h.close());

  it('plain execute and eval requests are answered by the hot dispatcher, their variants by fastify', async () => {
    const cases: Array<[string, unknown, boolean]> = [
      ['/api/v1/execute/age', { input: { user: { age: 30 } } }, true],
      ['/api/v1/eval', { expression: '1 + 1' }, true],
      ['/api/v1/execute/nope', { input: {} }, true],
      ['/api/v1/execute/age?x=1', { input: { user: { age: 30 } } }, false],
      ['/api/v1/execute/age/batch', { inputs: [{ user: { age: 30 } }] }, false],
    ];
    for (const [url, body, hot] of cases) {
      const before = h.fastifyRequests();
      const r = await h.request('POST', url, body);
      assert.ok(r.status === 200 || r.status === 404, `${url}: ${r.status} ${r.text}`);
      assert.equal(h.fastifyRequests() - before, hot ? 0 : 1, `${url}: ${hot ? 'hot dispatcher' : 'fastify'}`);
    }
  });
});
