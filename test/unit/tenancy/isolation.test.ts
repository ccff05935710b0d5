/**
 * Multi-tenancy through the HTTP adapter, in process: two tenants hold rulesets of the same
 * name without seeing each other on every endpoint; unknown and disabled tenants are 404
 * TENANT_NOT_FOUND everywhere; audit lines and metrics name the tenant. And with multi-tenancy
 * off the header is ignored and the tenant routes do not exist.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { codeRules, makeTenancyHarness, type TenancyHarness } from './harness.js';

/** Every tenant-scoped route, with a body where it needs one. */
const SCOPED: Array<[string, string, unknown?]> = [
  ['GET', '/api/v1/rulesets'],
  ['POST', '/api/v1/rulesets', codeRules('shared', 'X')],
  ['GET', '/api/v1/rulesets/shared'],
  ['DELETE', '/api/v1/rulesets/shared'],
  ['GET', '/api/v1/rulesets/shared/versions'],
  ['POST', '/api/v1/rulesets/shared/rollback', { seq: 1 }],
  ['POST', '/api/v1/rulesets/shared/filter', { known_input: {}, target_results: ['A'] }],
  ['POST', '/api/v1/execute/shared', { input: { x: 1 } }],
  ['POST', '/api/v1/execute/shared/batch', { inputs: [{ x: 1 }] }],
  ['POST', '/api/v1/eval', { expression: '1 + 1', context: {} }],
];

describe('isolation between tenants (persistent store)', () => {
  let h: TenancyHarness;
  before(async () => {
    h = await makeTenancyHarness({ rulesDir: true });
    for (const id of ['alpha', 'beta']) assert.equal((await h.request('POST', '/api/v1/tenants', { id })).status, 201);
    assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('shared', 'A'), 'alpha')).body.status, 'created');
    assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('shared', 'B'), 'beta')).body.status, 'created', 'same name, other tenant: created');
    await h.request('POST', '/api/v1/rulesets', codeRules('shared', 'A2', '2.0.0'), 'alpha');
    await h.request('POST', '/api/v1/rulesets', codeRules('only-alpha', 'OA'), 'alpha');
  });
  after(() => h.close());

  test('list and get show only the caller tenant; default sees none of them', async () => {
    assert.deepEqual(
      (await h.request('GET', '/api/v1/rulesets', undefined, 'alpha')).body.map((r: { name: string }) => r.name),
      ['only-alpha', 'shared'],
    );
    assert.deepEqual(
      (await h.request('GET', '/api/v1/rulesets', undefined, 'beta')).body.map((r: { name: string }) => r.name),
      ['shared'],
    );
    assert.deepEqual((await h.request('GET', '/api/v1/rulesets')).body, []);
    assert.equal((await h.request('GET', '/api/v1/rulesets/shared', undefined, 'beta')).body.steps.done.result.code, 'B');
    assert.equal((await h.request('GET', '/api/v1/rulesets/only-alpha', undefined, 'beta')).status, 404);
    assert.equal((await h.request('GET', '/api/v1/rulesets/shared', undefined, 'default')).status, 404);
  });

  test('execute, batch and filter run the tenant’s own ruleset', async () => {
    assert.equal((await h.request('POST', '/api/v1/execute/shared', { input: { x: 1 } }, 'alpha')).body.code, 'A2');
    assert.equal((await h.request('POST', '/api/v1/execute/shared', { input: { x: 1 } }, 'beta')).body.code, 'B');
    const batch = await h.request('POST', '/api/v1/execute/shared/batch', { inputs: [{ x: 1 }, { x: 2 }] }, 'beta');
    assert.deepEqual(
      batch.body.results.map((r: { code: string }) => r.code),
      ['B', 'B'],
    );
    const fa = await h.request('POST', '/api/v1/rulesets/shared/filter', { known_input: {}, target_results: ['A2'] }, 'alpha');
    const fb = await h.request('POST', '/api/v1/rulesets/shared/filter', { known_input: {}, target_results: ['A2'] }, 'beta');
    assert.equal(fa.body.always_matches, true);
    assert.equal(fb.body.never_matches, true);
    assert.equal((await h.request('POST', '/api/v1/eval', { expression: '2 * 3', context: {} }, 'beta')).body.result, 6);
  });

  test('versions and rollback are per tenant; files live under tenants/<id>/', async () => {
    const va = await h.request('GET', '/api/v1/rulesets/shared/versions', undefined, 'alpha');
    const vb = await h.request('GET', '/api/v1/rulesets/shared/versions', undefined, 'beta');
    assert.equal(va.body.versions.length, 1);
    assert.equal(vb.body.versions.length, 0);
    assert.equal((await h.request('POST', '/api/v1/rulesets/shared/rollback', { seq: 1 }, 'beta')).status, 404);
    const rolled = await h.request('POST', '/api/v1/rulesets/shared/rollback', { seq: 1 }, 'alpha');
    assert.equal(rolled.body.to_version, '1.0.0');
    assert.equal((await h.request('POST', '/api/v1/execute/shared', { input: { x: 1 } }, 'beta')).body.code, 'B', 'beta untouched');
    const { existsSync } = await import('node:fs');
    assert.ok(existsSync(`${h.rulesDir}/tenants/alpha/shared.json`));
    assert.ok(existsSync(`${h.rulesDir}/tenants/beta/shared.json`));
    assert.ok(!existsSync(`${h.rulesDir}/shared.json`));
  });

  test('audit lines of rule events carry tenant_id; metrics carry a tenant label', async () => {
    const lines = h.auditLines();
    const created = lines.filter((l) => l['event'] === 'rule_created' && l['rule_name'] === 'shared');
    assert.deepEqual(created.map((l) => l['tenant_id']).sort(), ['alpha', 'beta']);
    const executed = lines.filter((l) => l['event'] === 'rule_executed');
    assert.ok(executed.length > 0 && executed.every((l) => l['tenant_id'] === 'alpha' || l['tenant_id'] === 'beta'));
    const scrape = await h.metrics.render();
    assert.match(scrape, /svc_executions_total\{ruleset="shared",tenant="alpha",result="success"\} [1-9]/);
    assert.match(scrape, /svc_executions_total\{ruleset="shared",tenant="beta",result="success"\} [1-9]/);
    assert.match(scrape, /svc_compilation_duration_seconds_count\{ruleset="shared",tenant="beta"\}/);
  });

  test('delete in one tenant leaves the other; its metrics series go, the other’s stay', async () => {
    await h.request('POST', '/api/v1/rulesets', codeRules('gone', 'G'), 'alpha');
    await h.request('POST', '/api/v1/rulesets', codeRules('gone', 'G'), 'beta');
    await h.request('POST', '/api/v1/execute/gone', { input: { x: 1 } }, 'beta');
    assert.equal((await h.request('DELETE', '/api/v1/rulesets/gone', undefined, 'beta')).status, 204);
    assert.equal((await h.request('GET', '/api/v1/rulesets/gone', undefined, 'alpha')).status, 200);
    assert.equal((await h.request('GET', '/api/v1/rulesets/gone', undefined, 'beta')).status, 404);
    const scrape = await h.metrics.render();
    assert.doesNotMatch(scrape, /ruleset="gone",tenant="beta"/);
    assert.match(scrape, /ruleset="gone",tenant="alpha"/);
    const deleted = h.auditLines().find((l) => l['event'] === 'rule_deleted' && l['rule_name'] === 'gone');
    assert.equal(deleted?.['tenant_id'], 'beta');
  });

  test('an unknown or disabled tenant is 404 TENANT_NOT_FOUND on every tenant-scoped route', async () => {
    assert.equal((await h.request('POST', '/api/v1/tenants', { id: 'sleepy', enabled: false })).status, 201);
    for (const tenant of ['ghost', 'sleepy', '../x']) {
      for (const [method, url, body] of SCOPED) {
        const res = await h.request(method, url, body, tenant);
        assert.equal(res.status, 404, `${method} ${url} as '${tenant}'`);
        assert.equal(res.body.code, 'TENANT_NOT_FOUND', `${method} ${url} as '${tenant}'`);
      }
    }
    assert.match((await h.request('GET', '/api/v1/rulesets', undefined, 'sleepy')).body.error, /tenant 'sleepy' is disabled/);
    assert.deepEqual((await h.request('GET', '/api/v1/rulesets', undefined, '')).body, [], 'empty X-Tenant-ID = default');
    // Health, metrics and the audit sample rate are not tenant-scoped.
    assert.equal((await h.request('GET', '/health', undefined, 'ghost')).status, 200);
    assert.equal((await h.request('GET', '/api/v1/config/audit-sample-rate', undefined, 'ghost')).status, 200);
  });
});

describe('multi-tenancy off', () => {
  let h: TenancyHarness;
  before(async () => {
    h = await makeTenancyHarness({ multiTenancy: false });
  });
  after(() => h.close());

  test('X-Tenant-ID is ignored: everything is tenant default; the tenant routes do not exist', async () => {
    assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('r', 'R'), 'acme')).body.status, 'created');
    assert.equal((await h.request('GET', '/api/v1/rulesets/r')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'whatever')).body.code, 'R');
    assert.deepEqual(h.store.tenants(), ['default']);
    for (const [method, url] of [
      ['GET', '/api/v1/tenants'],
      ['POST', '/api/v1/tenants'],
      ['GET', '/api/v1/tenants/acme'],
      ['PATCH', '/api/v1/tenants/acme'],
    ] as const) {
      const res = await h.request(method, url, method === 'POST' ? { id: 'acme' } : undefined);
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    const created = h.auditLines().find((l) => l['event'] === 'rule_created');
    assert.equal(created?.['tenant_id'], undefined, 'no tenant_id on audit lines');
    assert.match(await h.metrics.render(), /svc_executions_total\{ruleset="r",result="success"\} 1/);
  });
});
