/**
 * Authentication and authorization over HTTP (EXTENSIONS.md 1) against the real built
 * `svc-server` process, with a keys file made the way `svc-apikey` makes it:
 *
 * - every route of the route table (`ROUTES`) × every role and no credential: open routes stay
 *   open, a missing permission is 403 naming it, an allowed route never answers 401/403, no
 *   credential is 401 with `WWW-Authenticate: Bearer`. The hot routes are checked on both
 *   request paths (plain: the hot dispatcher; with a query string: fastify). A route added to
 *   the table is covered without editing this file (a server mode in which it exists is
 *   required);
 * - tenants: a key for `acme` acts for acme only; global routes need `*`; `--auth-public-metrics`;
 * - credentials: expired, unknown, garbage, Basic, empty Bearer, a JWT without a JWKS: 401,
 *   unknown and expired alike;
 * - brute force: the 22nd request after 21 failures from one address is 429 (other addresses
 *   and `/health` unaffected; missing credentials alone never lead to 429);
 * - audit: `principal` on mutation and execution lines, `auth_failed` at most once per address
 *   per second, no secret in any line;
 * - authentication off: unchanged answers, no `principal`.
 *
 * Callers are told apart by their source address: every loopback address 127.0.0.0/8 reaches
 * the server, so each test that fails authentication on purpose uses an address of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AuthRole, Permission } from '../../src/auth/index.js';
import type { TenantManagerApi } from '../../src/service/tenant-manager.js';
import type { RuleServiceApi } from '../../src/service/types.js';
import { activeRoutes, type Route, type RouteDeps } from '../../src/transport/http/route.js';
import { ROUTES } from '../../src/transport/http/routes.js';
import { JWT_LOOKING_TOKEN, ROLE_KEYS, UNKNOWN_KEY, bearer, writeKeysFile, type KeysFile } from '../helpers/auth-fixtures.js';
import { startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { rawRequest, type RawReply } from './http-support.js';

const API = '/api/v1';

/** The contract's roles → permissions (EXTENSIONS.md 1), written out here, not imported. */
const GRANTS: Record<AuthRole, readonly Permission[]> = {
  executor: ['execute'],
  viewer: ['execute', 'read'],
  editor: ['execute', 'read', 'write'],
  admin: ['execute', 'read', 'write', 'admin'],
};
const ROLES = Object.keys(GRANTS) as AuthRole[];

/** A ruleset answering `code`. */
function rules(name: string, code = 'DONE'): Record<string, unknown> {
  return {
    config: { name, entry_step: 'check' },
    steps: {
      check: { type: 'decision', branches: [{ condition: 'n > 1', next_step: 'done' }], default_next: 'done' },
      done: { type: 'terminal', result: { code, message: code } },
    },
  };
}

/** One request over a fresh connection from `from` (a loopback source address; default 127.0.0.1). */
function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, from = '127.0.0.1'): Promise<RawReply> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return rawRequest(base, method, path, text, headers, false, from);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `lines` holds a line satisfying `pred` (audit lines arrive on the child's stdout). */
async function waitForLine(lines: Record<string, unknown>[], pred: (l: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const found = lines.find(pred);
    if (found) return found;
    await sleep(25);
  }
  throw new Error(`audit line not seen: ${what}`);
}

/** A 401 as the contract gives it. */
function assertUnauthenticated(r: RawReply, what: string): void {
  assert.equal(r.status, 401, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.body?.code, 'UNAUTHENTICATED', `${what}: ${r.text}`);
  assert.equal(typeof r.body?.error, 'string', what);
  assert.equal(r.headers['www-authenticate'], 'Bearer', `${what}: WWW-Authenticate`);
}

/** A 403 naming the missing permission or tenant. */
function assertForbidden(r: RawReply, what: string, missing: { permission: string } | { tenant: string }): void {
  assert.equal(r.status, 403, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.body?.code, 'FORBIDDEN', `${what}: ${r.text}`);
  if ('permission' in missing) {
    assert.equal(r.body?.missing_permission, missing.permission, `${what}: missing_permission (${r.text})`);
    assert.equal(r.body?.missing_tenant, undefined, what);
  } else {
    assert.equal(r.body?.missing_tenant, missing.tenant, `${what}: missing_tenant (${r.text})`);
    assert.equal(r.body?.missing_permission, undefined, what);
  }
}

/** Any answer of the route itself (not an authentication or authorization refusal). */
function assertPassed(r: RawReply, what: string): void {
  assert.ok(r.status !== 401 && r.status !== 403 && r.status !== 429, `${what}: ${r.status} ${r.text}`);
}

// ------------------------------------------------------------------ the route matrix

/** How the server modes of the matrix build their route deps (as src/server.ts wires them). */
interface Mode {
  readonly label: string;
  readonly args: readonly string[];
  readonly deps: RouteDeps;
}

const service = {} as RuleServiceApi;
const MODES: readonly Mode[] = [
  {
    // Hot dispatcher on (no debug mode, tracing or request log): both request paths.
    label: 'multi-tenancy',
    args: ['--multi-tenancy-enabled'],
    deps: { service, debugMode: false, maxResponseBytes: 1, tenants: {} as TenantManagerApi, debugRuleset: () => null },
  },
  {
    label: 'multi-tenancy + debug mode',
    args: ['--multi-tenancy-enabled', '--debug-mode'],
    deps: { service, debugMode: true, maxResponseBytes: 1, tenants: {} as TenantManagerApi, debugRuleset: () => null },
  },
];

/** Each route and the first mode in which it exists. */
const ASSIGNED: ReadonlyArray<{ route: Route; mode: number }> = ROUTES.map((route) => ({
  route,
  mode: MODES.findIndex((m) => activeRoutes([route], m.deps).length === 1),
}));

/** Valid bodies for the routes that should answer 200 when allowed; others get `{}`. */
const BODIES: Record<string, unknown> = {
  execute: { input: { n: 2 } },
  eval: { expression: '1 + 1' },
  executeBatch: { inputs: [{ n: 2 }] },
};

/** The stored ruleset the execution routes run; every other path parameter names nothing. */
const MATRIX_RULESET = 'matrix';

function pathOf(route: Route): string {
  const value = route.method === 'POST' && (route.permission === 'execute' || route.hot === true) ? MATRIX_RULESET : 'absent';
  return route.path.replace(/:[A-Za-z]+/, value);
}

/** Keys of server A: the four roles with `*`, and the keys of the tenant, credential and audit tests. */
const KEY_SPECS = [
  ...ROLE_KEYS,
  { id: 'acme-editor', role: 'editor', tenants: ['acme'] },
  { id: 'acme-admin', role: 'admin', tenants: ['acme'] },
  { id: 'expired-admin', role: 'admin', expiresAt: '2020-01-01T00:00:00Z' },
  { id: 'deployer', role: 'editor' },
] as const;

describe('HTTP authentication: the route table × every role', () => {
  const dir = tempDir('svc-auth-http-');
  let keys: KeysFile;
  const servers: Array<ServerProcess | undefined> = MODES.map(() => undefined);

  before(async () => {
    keys = writeKeysFile(dir.path, KEY_SPECS);
    for (let i = 0; i < MODES.length; i++) {
      if (!ASSIGNED.some((a) => a.mode === i)) continue;
      const s = await startServer(['--disable-grpc', '--audit-sample-rate', '100', '--auth-keys-file', keys.path, ...MODES[i]!.args]);
      servers[i] = s;
      const admin = bearer(keys.keys['admin']!);
      assert.equal((await call(s.url, 'POST', `${API}/rulesets`, rules(MATRIX_RULESET), admin)).status, 200);
    }
  });
  after(async () => {
    await Promise.all(servers.map((s) => s?.stop('SIGKILL')));
    dir.remove();
  });

  it('every route of the table exists in one of the server modes of this test', () => {
    for (const a of ASSIGNED) assert.ok(a.mode >= 0, `${a.route.method} ${a.route.path}: no server mode of this test has it; add one to MODES`);
    assert.ok(
      ASSIGNED.some((a) => a.route.hot === true),
      'the table has hot routes',
    );
  });

  for (const { route, mode } of ASSIGNED) {
    const variants = route.hot === true ? ['', '?x=1'] : [''];
    const label = `${route.method} ${route.path} (${route.permission}${route.hot === true ? ', hot dispatcher and fastify' : ''})`;
    it(label, async () => {
      const server = servers[mode];
      assert.ok(server, `server of mode ${MODES[mode]?.label} is running`);
      const body = route.requestSchema === 'none' ? undefined : (BODIES[route.id] ?? {});
      for (const suffix of variants) {
        const path = pathOf(route) + suffix;
        const none = await call(server.url, route.method, path, body);
        if (route.permission === 'public') assertPassed(none, `${path} without a credential`);
        else assertUnauthenticated(none, `${path} without a credential`);

        for (const role of ROLES) {
          const what = `${route.method} ${path} as ${role}`;
          const r = await call(server.url, route.method, path, body, bearer(keys.keys[role]!));
          if (route.permission === 'public' || GRANTS[role].includes(route.permission)) {
            assertPassed(r, what);
            if (route.hot === true) assert.equal(r.status, 200, `${what}: ${r.text}`);
          } else {
            assertForbidden(r, what, { permission: route.permission });
          }
        }
      }
    });
  }

  it('other spellings of a route are checked too: HEAD of every GET route, encoded path parameters and letters, a trailing slash or "?"', async () => {
    for (const { route, mode } of ASSIGNED) {
      if (route.method !== 'GET' || route.permission === 'public') continue;
      const r = await call(servers[mode]!.url, 'HEAD', pathOf(route));
      assert.equal(r.status, 401, `HEAD ${route.path}`);
      assert.equal(r.headers['www-authenticate'], 'Bearer', `HEAD ${route.path}`);
    }
    const url = servers[0]!.url;
    for (const [method, path] of [
      ['GET', `${API}/%72ulesets`],
      ['GET', `${API}/rulesets/`],
      ['GET', `${API}/rulesets?`],
      ['GET', `${API}/tenants/%61cme`],
      ['GET', `${API}/rulesets/..%2F..%2Fhealth`],
      ['POST', `${API}/execute/${MATRIX_RULESET.replace('m', '%6d')}`],
      ['POST', `${API}/execute/a%2Fb`],
    ] as const) {
      const r = await call(url, method, path, method === 'POST' ? { input: { n: 2 } } : undefined);
      assertUnauthenticated(r, `${method} ${path}`);
    }
  });

  it('debug mode: a CORS preflight needs no credential and allows the Authorization header', async () => {
    const mode = MODES.findIndex((m) => m.deps.debugMode);
    const server = servers[mode];
    assert.ok(server, 'the debug-mode server is running');
    const r = await call(server.url, 'OPTIONS', `${API}/rulesets`, undefined, {
      origin: 'http://console.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization, x-tenant-id',
    });
    assert.equal(r.status, 204, r.text);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(String(r.headers['access-control-allow-headers']), /\bauthorization\b/);
    const get = await call(server.url, 'GET', `${API}/rulesets`, undefined, { origin: 'http://console.example', ...bearer(keys.keys['viewer']!) });
    assert.equal(get.status, 200, get.text);
    assert.equal(get.headers['access-control-allow-origin'], '*');
    assert.equal(get.headers['access-control-expose-headers'], 'X-Svc-Decision-Id, Retry-After, ETag', "svc's answer headers are readable by a page");
  });

  it('the execution routes really run for an allowed role, on both request paths', async () => {
    const s = servers[0]!;
    const key = bearer(keys.keys['executor']!);
    for (const suffix of ['', '?x=1']) {
      const r = await call(s.url, 'POST', `${API}/execute/${MATRIX_RULESET}${suffix}`, { input: { n: 2 } }, key);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.code, 'DONE');
      const e = await call(s.url, 'POST', `${API}/eval${suffix}`, { expression: '1 + 1' }, key);
      assert.equal(e.status, 200, e.text);
      assert.equal(e.body.result, 2);
    }
  });

  // ------------------------------------------------------------------ tenants
  describe('tenants', () => {
    before(async () => {
      const s = servers[0]!;
      const admin = bearer(keys.keys['admin']!);
      for (const id of ['acme', 'other']) assert.equal((await call(s.url, 'POST', `${API}/tenants`, { id }, admin)).status, 201);
      assert.equal((await call(s.url, 'POST', `${API}/rulesets`, rules('shared', 'OTHER'), { ...admin, 'x-tenant-id': 'other' })).status, 200);
    });

    it('a key for ["acme"] acts for acme, and is 403 missing_tenant for another tenant and for the default one', async () => {
      const s = servers[0]!;
      const acme = bearer(keys.keys['acme-editor']!);
      const created = await call(s.url, 'POST', `${API}/rulesets`, rules('shared', 'ACME'), { ...acme, 'x-tenant-id': 'acme' });
      assert.equal(created.status, 200, created.text);
      for (const suffix of ['', '?x=1']) {
        const run = await call(s.url, 'POST', `${API}/execute/shared${suffix}`, { input: { n: 2 } }, { ...acme, 'x-tenant-id': 'acme' });
        assert.equal(run.status, 200, run.text);
        assert.equal(run.body.code, 'ACME');
        const other = await call(s.url, 'POST', `${API}/execute/shared${suffix}`, { input: { n: 2 } }, { ...acme, 'x-tenant-id': 'other' });
        assertForbidden(other, `execute${suffix} for tenant other`, { tenant: 'other' });
        const dflt = await call(s.url, 'POST', `${API}/execute/${MATRIX_RULESET}${suffix}`, { input: { n: 2 } }, acme);
        assertForbidden(dflt, `execute${suffix} without X-Tenant-ID`, { tenant: 'default' });
      }
      assertForbidden(await call(s.url, 'GET', `${API}/rulesets/shared`, undefined, { ...acme, 'x-tenant-id': 'other' }), 'get for tenant other', {
        tenant: 'other',
      });
      assertForbidden(await call(s.url, 'DELETE', `${API}/rulesets/shared`, undefined, { ...acme, 'x-tenant-id': 'other' }), 'delete for tenant other', {
        tenant: 'other',
      });
      // other's ruleset is still there and still its own
      const admin = bearer(keys.keys['admin']!);
      const kept = await call(s.url, 'POST', `${API}/execute/shared`, { input: { n: 2 } }, { ...admin, 'x-tenant-id': 'other' });
      assert.equal(kept.body.code, 'OTHER');
    });

    it('global routes (metrics, server settings, tenant management) are 403 missing_tenant "*" for an acme admin, allowed for a "*" admin', async () => {
      const s = servers[0]!;
      const globals = activeRoutes(ROUTES, MODES[0]!.deps).filter((r) => r.scope === 'global');
      assert.deepEqual(globals.map((r) => r.id).sort(), [
        'createTenant',
        'deleteTenant',
        'getAuditSampleRate',
        'getTenant',
        'listTenants',
        'metrics',
        'setAuditSampleRate',
        'updateTenant',
      ]);
      for (const route of globals) {
        const path = route.path.replace(/:[A-Za-z]+/, 'absent');
        const body = route.requestSchema === 'none' ? undefined : {};
        for (const tenant of [undefined, 'acme']) {
          const headers = { ...bearer(keys.keys['acme-admin']!), ...(tenant ? { 'x-tenant-id': tenant } : {}) };
          assertForbidden(await call(s.url, route.method, path, body, headers), `${route.method} ${path} as acme-admin (X-Tenant-ID ${tenant})`, {
            tenant: '*',
          });
        }
        assertPassed(
          await call(s.url, route.method, path, body, { ...bearer(keys.keys['admin']!), 'x-tenant-id': 'acme' }),
          `${route.method} ${path} as admin`,
        );
      }
      const metrics = await call(s.url, 'GET', '/metrics', undefined, bearer(keys.keys['viewer']!));
      assert.equal(metrics.status, 200);
      assert.match(metrics.text, /^# (HELP|TYPE) /m);
    });
  });

  // ------------------------------------------------------------------ credentials
  it('expired, unknown, garbage, Basic, empty Bearer, a JWT without a JWKS: 401; unknown and expired answer the same body', async () => {
    const s = servers[0]!;
    const from = '127.0.0.3';
    const cases: Record<string, string> = {
      expired: `Bearer ${keys.keys['expired-admin']!}`,
      unknown: `Bearer ${UNKNOWN_KEY}`,
      garbage: 'Bearer not-a-credential',
      basic: `Basic ${Buffer.from('admin:secret').toString('base64')}`,
      'basic with a valid key': `Basic ${keys.keys['admin']!}`,
      'empty bearer': 'Bearer ',
      'jwt without jwks': `Bearer ${JWT_LOOKING_TOKEN}`,
    };
    const bodies: Record<string, string[]> = {};
    for (const [name, authorization] of Object.entries(cases)) {
      for (const [method, path, body] of [
        ['GET', `${API}/rulesets`, undefined],
        ['POST', `${API}/execute/${MATRIX_RULESET}`, { input: { n: 2 } }],
        ['POST', `${API}/execute/${MATRIX_RULESET}?x=1`, { input: { n: 2 } }],
      ] as const) {
        const r = await call(s.url, method, path, body, { authorization }, from);
        assertUnauthenticated(r, `${name}: ${method} ${path}`);
        (bodies[name] ??= []).push(r.text);
      }
    }
    assert.deepEqual(bodies['expired'], bodies['unknown'], 'the answer never says whether a key exists');
    for (const texts of Object.values(bodies)) {
      for (const t of texts) {
        assert.ok(!t.includes('expired-admin') && !t.includes('admin:secret'), `no key id or secret in the answer: ${t}`);
        for (const key of Object.values(keys.keys)) assert.ok(!t.includes(key), 'no key in the answer');
      }
    }
    // the scheme name is case-insensitive (RFC 9110): a valid key after "bearer" works
    const lower = await call(s.url, 'GET', `${API}/rulesets`, undefined, { authorization: `bearer ${keys.keys['viewer']!}` }, '127.0.0.9');
    assert.equal(lower.status, 200, lower.text);
  });

  // ------------------------------------------------------------------ brute force
  it('after 21 failed attempts from one address the 22nd request, even with a valid key, is 429 with Retry-After; /health stays 200; other addresses unaffected', async () => {
    const s = servers[0]!;
    const from = '127.0.0.4';
    const admin = bearer(keys.keys['admin']!);
    for (let i = 1; i <= 21; i++) {
      const path = i % 2 === 0 ? `${API}/rulesets` : `${API}/execute/${MATRIX_RULESET}`;
      const r = await call(s.url, i % 2 === 0 ? 'GET' : 'POST', path, i % 2 === 0 ? undefined : { input: { n: 2 } }, bearer(UNKNOWN_KEY), from);
      assertUnauthenticated(r, `failed attempt ${i}`);
    }
    for (const [method, path, body] of [
      ['GET', `${API}/rulesets`, undefined],
      ['POST', `${API}/execute/${MATRIX_RULESET}`, { input: { n: 2 } }],
      ['POST', `${API}/execute/${MATRIX_RULESET}?x=1`, { input: { n: 2 } }],
      ['POST', `${API}/eval`, { expression: '1' }],
    ] as const) {
      const r = await call(s.url, method, path, body, admin, from);
      assert.equal(r.status, 429, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.code, 'RATE_LIMITED');
      assert.equal(typeof r.body.retry_after_ms, 'number');
      const retry = Number(r.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After: ${String(r.headers['retry-after'])}`);
    }
    // the address is the socket's: X-Forwarded-For does not move the caller elsewhere
    const forwarded = await call(s.url, 'GET', `${API}/rulesets`, undefined, { ...admin, 'x-forwarded-for': '203.0.113.9' }, from);
    assert.equal(forwarded.status, 429, forwarded.text);
    const health = await call(s.url, 'GET', '/health', undefined, {}, from);
    assert.equal(health.status, 200, health.text);
    const elsewhere = await call(s.url, 'GET', `${API}/rulesets`, undefined, admin, '127.0.0.5');
    assert.equal(elsewhere.status, 200, elsewhere.text);
  });

  it('missing credentials alone never lead to 429: 30 requests without a credential are 401, then a valid key works', async () => {
    const s = servers[0]!;
    const from = '127.0.0.6';
    for (let i = 0; i < 30; i++) {
      const r = await call(s.url, 'GET', `${API}/rulesets`, undefined, {}, from);
      assertUnauthenticated(r, `request ${i} without a credential`);
    }
    const ok = await call(s.url, 'GET', `${API}/rulesets`, undefined, bearer(keys.keys['viewer']!), from);
    assert.equal(ok.status, 200, ok.text);
  });

  // ------------------------------------------------------------------ audit
  it('audit: rule_created / rule_deleted / rule_executed carry the principal; auth_failed at most once per address per second; no secret in any line', async () => {
    const s = servers[0]!;
    const deployer = bearer(keys.keys['deployer']!);
    assert.equal((await call(s.url, 'POST', `${API}/rulesets`, rules('audited'), deployer)).status, 200);
    const executor = bearer(keys.keys['executor']!);
    for (const suffix of ['', '?x=1']) {
      const r = await call(s.url, 'POST', `${API}/execute/audited${suffix}`, { input: { n: 2 } }, executor);
      assert.equal(r.status, 200, r.text);
    }
    assert.equal((await call(s.url, 'DELETE', `${API}/rulesets/audited`, undefined, deployer)).status, 204);
    const deleted = await waitForLine(s.stdout, (l) => l['event'] === 'rule_deleted' && l['rule_name'] === 'audited', 'rule_deleted');
    assert.equal(deleted['principal'], 'deployer');
    const created = s.stdout.find((l) => l['event'] === 'rule_created' && l['rule_name'] === 'audited');
    assert.equal(created?.['principal'], 'deployer');
    const executed = s.stdout.filter((l) => l['event'] === 'rule_executed' && l['rule_name'] === 'audited');
    assert.deepEqual(
      executed.map((l) => l['principal']),
      ['executor', 'executor'],
      'hot dispatcher and fastify both pass the principal',
    );

    // A burst of 10 failures from one address: one line per second at most.
    const from = '127.0.0.8';
    const start = Date.now();
    const burst = await Promise.all(Array.from({ length: 10 }, () => call(s.url, 'GET', `${API}/rulesets`, undefined, bearer(UNKNOWN_KEY), from)));
    const elapsed = Date.now() - start;
    for (const r of burst) assertUnauthenticated(r, 'burst');
    // a later line from another caller: once it is read, every line before it has been read too
    assert.equal((await call(s.url, 'POST', `${API}/rulesets`, rules('marker'), deployer)).status, 200);
    await waitForLine(s.stdout, (l) => l['event'] === 'rule_created' && l['rule_name'] === 'marker', 'marker');
    const failed = s.stdout.filter((l) => l['event'] === 'auth_failed' && l['source_ip'] === from);
    assert.ok(failed.length >= 1, 'a failed authentication is audited');
    assert.ok(failed.length <= 1 + Math.floor(elapsed / 1000), `${failed.length} auth_failed lines for 10 failures within ${elapsed} ms`);
    assert.ok(!('principal' in failed[0]!), 'a failed authentication has no principal');
    assert.deepEqual(failed[0], { ...failed[0], source_ip: from, reason: 'unknown_key' });

    // earlier failures were audited with their reasons (no credential: "missing")
    assert.ok(s.stdout.some((l) => l['event'] === 'auth_failed' && l['reason'] === 'missing'));
    // no key, and not its hash either, in any audit or log line
    const everything = JSON.stringify([...s.stdout, ...s.logs]);
    for (const [id, key] of Object.entries(keys.keys)) assert.ok(!everything.includes(key), `key ${id} in an audit or log line`);
    for (const record of keys.records) assert.ok(!everything.includes(String(record['hash']).slice(7)), 'a key hash in an audit or log line');
  });
});

// ------------------------------------------------------------------ --auth-public-metrics
describe('HTTP authentication: --auth-public-metrics; the check comes before the body is read', () => {
  const dir = tempDir('svc-auth-http-metrics-');
  let server: ServerProcess | undefined;
  let keys: KeysFile;
  before(async () => {
    keys = writeKeysFile(dir.path, [...ROLE_KEYS, { id: 'acme-viewer', role: 'viewer', tenants: ['acme'] }]);
    server = await startServer(['--disable-grpc', '--auth-keys-file', keys.path, '--auth-public-metrics', '--max-request-body-bytes', '1000']);
  });
  after(async () => {
    await server?.stop('SIGKILL');
    dir.remove();
  });

  it('opens /metrics without a credential, and nothing else', async () => {
    const url = server!.url;
    const metrics = await call(url, 'GET', '/metrics');
    assert.equal(metrics.status, 200, metrics.text);
    assert.match(metrics.text, /^# (HELP|TYPE) /m);
    // with a credential lacking "read" it is open too (the route needs nothing)
    assert.equal((await call(url, 'GET', '/metrics', undefined, bearer(keys.keys['executor']!))).status, 200);
    assertUnauthenticated(await call(url, 'GET', `${API}/config/audit-sample-rate`), 'audit-sample-rate');
    assertUnauthenticated(await call(url, 'GET', `${API}/rulesets`), 'list');
    assertUnauthenticated(await call(url, 'POST', `${API}/eval`, { expression: '1' }), 'eval');
  });

  it('without multi-tenancy every request is for tenant "default": a key for ["acme"] is 403 missing_tenant "default"', async () => {
    const url = server!.url;
    const acme = bearer(keys.keys['acme-viewer']!);
    assertForbidden(await call(url, 'GET', `${API}/rulesets`, undefined, { ...acme, 'x-tenant-id': 'acme' }), 'list', { tenant: 'default' });
    assert.equal((await call(url, 'GET', `${API}/rulesets`, undefined, { ...bearer(keys.keys['viewer']!), 'x-tenant-id': 'acme' })).status, 200);
  });

  it('a body over --max-request-body-bytes or not JSON is 401 without a credential (413 / 400 with one), on both request paths', async () => {
    const url = server!.url;
    const admin = bearer(keys.keys['admin']!);
    const big = JSON.stringify({ input: { pad: 'x'.repeat(5000) } });
    for (const path of [`${API}/execute/any`, `${API}/execute/any?x=1`, `${API}/eval`, `${API}/eval?x=1`, `${API}/rulesets`]) {
      assertUnauthenticated(await call(url, 'POST', path, big), `${path}: large body`);
      assertUnauthenticated(await call(url, 'POST', path, '{not json'), `${path}: not JSON`);
      const withKey = await call(url, 'POST', path, big, admin);
      assert.equal(withKey.status, 413, `${path} with a key: ${withKey.text}`);
      assert.equal((await call(url, 'POST', path, '{not json', admin)).status, 400, `${path} with a key: not JSON`);
    }
  });
});

// ------------------------------------------------------------------ authentication off
describe('HTTP authentication off: unchanged', () => {
  let server: ServerProcess | undefined;
  before(async () => {
    server = await startServer(['--disable-grpc', '--audit-sample-rate', '100']);
  });
  after(async () => {
    await server?.stop('SIGKILL');
  });

  it('every kind of route answers without a credential (an Authorization header is ignored), and audit lines have no principal', async () => {
    const url = server!.url;
    assert.equal((await call(url, 'POST', `${API}/rulesets`, rules('plain'))).status, 200);
    assert.equal((await call(url, 'GET', `${API}/rulesets`)).status, 200);
    assert.equal((await call(url, 'GET', `${API}/rulesets/plain`)).status, 200);
    for (const suffix of ['', '?x=1']) {
      const run = await call(url, 'POST', `${API}/execute/plain${suffix}`, { input: { n: 2 } });
      assert.equal(run.status, 200, run.text);
      assert.equal(run.body.code, 'DONE');
      const garbage = await call(url, 'POST', `${API}/execute/plain${suffix}`, { input: { n: 2 } }, { authorization: 'Bearer nonsense' });
      assert.equal(garbage.status, 200, garbage.text);
      assert.equal((await call(url, 'POST', `${API}/eval${suffix}`, { expression: '1 + 1' })).body.result, 2);
    }
    assert.equal((await call(url, 'PUT', `${API}/config/audit-sample-rate`, { sample_rate: 100 })).status, 200);
    assert.equal((await call(url, 'GET', '/metrics')).status, 200);
    const missing = await call(url, 'GET', `${API}/rulesets/absent`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['www-authenticate'], undefined);
    assert.equal((await call(url, 'DELETE', `${API}/rulesets/plain`)).status, 204);

    const deleted = await waitForLine(server!.stdout, (l) => l['event'] === 'rule_deleted' && l['rule_name'] === 'plain', 'rule_deleted');
    const lines = server!.stdout.filter((l) => ['rule_created', 'rule_deleted', 'rule_executed', 'sample_rate_changed'].includes(String(l['event'])));
    assert.ok(lines.length >= 6 && lines.includes(deleted));
    for (const l of lines) assert.ok(!('principal' in l), `no principal with authentication off: ${JSON.stringify(l)}`);
    assert.ok(!server!.stdout.some((l) => l['event'] === 'auth_failed'));
  });
});
