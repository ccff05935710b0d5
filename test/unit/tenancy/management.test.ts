/**
 * Tenant management over HTTP, in process: create / get / list / replace / delete, conflicts,
 * validation, the default tenant, 405s, reader rejection, audit events, and `tenants.json`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { codeRules, makeTenancyHarness, type TenancyHarness } from './harness.js';

describe('tenant management', () => {
  let h: TenancyHarness;
  before(async () => {
    h = await makeTenancyHarness({ rulesDir: true });
  });
  after(() => h.close());

  test('POST creates (201 with the record, defaults applied); a second POST is 409 CONFLICT', async () => {
    const res = await h.request('POST', '/api/v1/tenants', { id: 'acme', name: 'ACME', qps_limit: 10 });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { id: 'acme', name: 'ACME', enabled: true, qps_limit: 10, burst: null, execution_timeout_ms: null, max_rulesets: null });
    const again = await h.request('POST', '/api/v1/tenants', { id: 'acme' });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'CONFLICT');
    assert.match(again.body.error, /already exists; use PUT/);
    const dflt = await h.request('POST', '/api/v1/tenants', { id: 'default' });
    assert.equal(dflt.status, 409);
    assert.match(dflt.body.error, /always exists/);
  });

  test('GET lists every tenant sorted by id (default included) and gets one', async () => {
    await h.request('POST', '/api/v1/tenants', { id: 'zed' });
    const list = await h.request('GET', '/api/v1/tenants');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((t: { id: string }) => t.id),
      ['acme', 'default', 'zed'],
    );
    assert.equal((await h.request('GET', '/api/v1/tenants/acme')).body.name, 'ACME');
    const missing = await h.request('GET', '/api/v1/tenants/nobody');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'TENANT_NOT_FOUND');
    assert.equal((await h.request('GET', '/api/v1/tenants/.hidden')).status, 400, 'an invalid id is 400');
  });

  test('PUT replaces the whole record (omitted fields take defaults); 404 for an unknown id', async () => {
    const res = await h.request('PUT', '/api/v1/tenants/acme', { max_rulesets: 5 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: 'acme', name: 'acme', enabled: true, qps_limit: null, burst: null, execution_timeout_ms: null, max_rulesets: 5 });
    const mismatch = await h.request('PUT', '/api/v1/tenants/acme', { id: 'zed' });
    assert.equal(mismatch.status, 400);
    const unknown = await h.request('PUT', '/api/v1/tenants/nobody', { name: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'TENANT_NOT_FOUND');
    const dflt = await h.request('PUT', '/api/v1/tenants/default', { qps_limit: 1000 });
    assert.equal(dflt.status, 200, 'default may get limits');
    assert.equal((await h.request('PUT', '/api/v1/tenants/default', { enabled: false })).status, 400, 'but cannot be disabled');
  });

  test('validation: 400 BAD_REQUEST listing every problem', async () => {
    const res = await h.request('POST', '/api/v1/tenants', { id: 'bad id', qps_limit: 0, burst: -1, max_rulesets: 1.5, colour: 'red' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    assert.deepEqual(res.body.problems.map((p: { path: string }) => p.path).sort(), ['burst', 'colour', 'id', 'max_rulesets', 'qps_limit']);
    assert.equal((await h.request('POST', '/api/v1/tenants', [1, 2])).status, 400);
    assert.equal((await h.request('GET', '/api/v1/tenants/bad%20id')).status, 400);
  });

  test('DELETE: 409 while the tenant owns rulesets (naming them), 204 once empty; default never', async () => {
    await h.request('POST', '/api/v1/tenants', { id: 'owner' });
    await h.request('POST', '/api/v1/rulesets', codeRules('r1', 'A'), 'owner');
    await h.request('POST', '/api/v1/rulesets', codeRules('r2', 'A'), 'owner');
    const blocked = await h.request('DELETE', '/api/v1/tenants/owner');
    assert.equal(blocked.status, 409);
    assert.equal(blocked.body.code, 'CONFLICT');
    assert.equal(blocked.body.error, "tenant 'owner' still owns 2 rulesets (r1, r2); delete them first");
    await h.request('DELETE', '/api/v1/rulesets/r1', undefined, 'owner');
    await h.request('DELETE', '/api/v1/rulesets/r2', undefined, 'owner');
    assert.equal((await h.request('DELETE', '/api/v1/tenants/owner')).status, 204);
    assert.equal((await h.request('GET', '/api/v1/tenants/owner')).status, 404);
    assert.equal((await h.request('GET', '/api/v1/rulesets', undefined, 'owner')).body.code, 'TENANT_NOT_FOUND');
    assert.equal((await h.request('DELETE', '/api/v1/tenants/owner')).status, 404);
    const dflt = await h.request('DELETE', '/api/v1/tenants/default');
    assert.equal(dflt.status, 409);
    assert.match(dflt.body.error, /cannot be deleted/);
  });

  test('405 with Allow for a known tenant path and a wrong method', async () => {
    const res = await h.request('PATCH', '/api/v1/tenants/acme');
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, PUT, DELETE');
    assert.equal((await h.request('DELETE', '/api/v1/tenants')).headers['allow'], 'GET, POST');
  });

  test('audit events for tenant changes, with source_ip', async () => {
    const lines = h.auditLines().filter((l) => String(l['event']).startsWith('tenant_'));
    const created = lines.find((l) => l['event'] === 'tenant_created' && l['tenant_id'] === 'acme');
    assert.equal(created?.['source_ip'], '198.51.100.7');
    assert.equal((created?.['tenant'] as { qps_limit: number }).qps_limit, 10);
    const updated = lines.find((l) => l['event'] === 'tenant_updated' && l['tenant_id'] === 'acme');
    assert.equal((updated?.['from'] as { qps_limit: number }).qps_limit, 10);
    assert.equal((updated?.['to'] as { max_rulesets: number }).max_rulesets, 5);
    assert.equal(lines.find((l) => l['event'] === 'tenant_deleted')?.['tenant_id'], 'owner');
    assert.ok(lines.every((l) => l['source_ip'] === '198.51.100.7'));
  });

  test('tenants.json holds the registry (a changed default included), sorted by id', () => {
    const doc = JSON.parse(readFileSync(join(h.rulesDir!, 'tenants.json'), 'utf8'));
    assert.deepEqual(
      doc.tenants.map((t: { id: string }) => t.id),
      ['acme', 'default', 'zed'],
    );
    assert.equal(doc.tenants[1].qps_limit, 1000);
  });
});

describe('tenant management on a reader', () => {
  let h: TenancyHarness;
  before(async () => {
    h = await makeTenancyHarness({ role: 'reader' });
  });
  after(() => h.close());

  test('writes are 409 READ_ONLY with the reader body; reads work', async () => {
    for (const [method, url, body] of [
      ['POST', '/api/v1/tenants', { id: 'acme' }],
      ['PUT', '/api/v1/tenants/default', { qps_limit: 1 }],
      ['DELETE', '/api/v1/tenants/default', undefined],
    ] as const) {
      const res = await h.request(method, url, body);
      assert.equal(res.status, 409, `${method} ${url}`);
      assert.deepEqual(res.body, {
        error: 'read_only',
        code: 'READ_ONLY',
        message: 'this instance is a reader and does not accept writes',
        writer: 'http://writer:8080',
        hint: 'send writes to the writer',
      });
    }
    assert.equal((await h.request('GET', '/api/v1/tenants')).status, 200);
    assert.equal((await h.request('GET', '/api/v1/tenants/default')).status, 200);
  });
});

describe('tenant management in memory-only mode', () => {
  test('tenants live in memory; no file is involved', async () => {
    const h = await makeTenancyHarness();
    try {
      assert.equal((await h.request('POST', '/api/v1/tenants', { id: 'mem' })).status, 201);
      assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('r', 'M'), 'mem')).body.status, 'created');
      assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'mem')).body.code, 'M');
      assert.equal(h.rulesDir, null);
    } finally {
      await h.close();
    }
  });
});
