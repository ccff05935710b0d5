/**
 * Multi-tenancy against the real built server process, over HTTP and gRPC: tenant
 * isolation, unknown and disabled tenants, per-tenant limits (rate limit, max_rulesets,
 * execution timeout), persistence and restart, and the off mode that ignores tenant headers.
 * Every process is stopped by pid, also when a test fails.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, Status, type TestClient } from '../helpers/grpc-client.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

/** A ruleset answering `code` (after one decision step). */
function rules(name: string, code: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    config: { name, entry_step: 'check', ...extra },
    steps: {
      check: { type: 'decision', branches: [{ condition: 'n > 1', next_step: 'done' }], default_next: 'done' },
      done: { type: 'terminal', result: { code, message: code } },
    },
  };
}

/** A ruleset that cycles until a timeout or the step limit ends it. */
function loop(name: string): Record<string, unknown> {
  return {
    config: { name, entry_step: 'a' },
    steps: {
      a: { type: 'decision', branches: [], default_next: 'b' },
      b: { type: 'decision', branches: [{ condition: 'false', next_step: 'end' }], default_next: 'a' },
      end: { type: 'terminal', result: { code: 'NEVER' } },
    },
  };
}

const as = (tenant: string) => ({ 'x-tenant-id': tenant });

describe('multi-tenancy on (persistent)', () => {
  const dir = tempDir('svc-tenancy-');
  let server: ServerProcess | undefined;
  let client: TestClient | undefined;
  const args = ['--multi-tenancy-enabled', '--rules-dir', dir.path, '--execution-timeout-ms', '0', '--max-steps', '100000000'];

  before(async () => {
    server = await startServer(args);
    client = connect(server.grpcAddress);
    const url = server.url;
    for (const t of [
      { id: 'alpha', name: 'Alpha' },
      { id: 'beta' },
      { id: 'sleepy', enabled: false },
      { id: 'tight', qps_limit: 0.001, burst: 3 },
      { id: 'small', max_rulesets: 1 },
      { id: 'quick', execution_timeout_ms: 1 },
    ]) {
      assert.equal((await http(url, 'POST', '/api/v1/tenants', t)).status, 201);
    }
    for (const [tenant, code] of [
      ['alpha', 'A'],
      ['beta', 'B'],
      ['tight', 'T'],
    ]) {
      assert.equal((await http(url, 'POST', '/api/v1/rulesets', rules('shared', code!), as(tenant!))).body.status, 'created');
    }
    await http(url, 'POST', '/api/v1/rulesets', loop('spin'), as('quick'));
  });
  after(async () => {
    client?.close();
    await server?.stop();
    dir.remove();
  });

  it('HTTP: each tenant sees and runs only its own ruleset of a shared name', async () => {
    const url = server!.url;
    for (const [tenant, code] of [
      ['alpha', 'A'],
      ['beta', 'B'],
    ] as const) {
      assert.deepEqual(
        (await http(url, 'GET', '/api/v1/rulesets', undefined, as(tenant))).body.map((r: { name: string }) => r.name),
        ['shared'],
      );
      assert.equal((await http(url, 'GET', '/api/v1/rulesets/shared', undefined, as(tenant))).body.steps.done.result.code, code);
      assert.equal((await http(url, 'POST', '/api/v1/execute/shared', { input: { n: 2 } }, as(tenant))).body.code, code);
    }
    assert.deepEqual((await http(url, 'GET', '/api/v1/rulesets')).body, [], 'no header: the default tenant, which holds nothing');
  });

  it('gRPC: the same isolation through metadata x-tenant-id', async () => {
    const c = client!;
    for (const [tenant, code] of [
      ['alpha', 'A'],
      ['beta', 'B'],
    ] as const) {
      const list = await c.ok('ListRuleSets', {}, as(tenant));
      assert.deepEqual(
        list.rulesets.map((r: { name: string }) => r.name),
        ['shared'],
      );
      const got = await c.ok('GetRuleSet', { name: 'shared' }, as(tenant));
      assert.equal(JSON.parse(got.ruleset_json).steps.done.result.code, code);
      assert.equal((await c.ok('Execute', { name: 'shared', input_json: '{"n": 2}' }, as(tenant))).code, code);
      const batch = await c.ok('BatchExecute', { name: 'shared', inputs_json: ['{}', '{"n": 3}'] }, as(tenant));
      assert.deepEqual(
        batch.results.map((r: { result: { code: string } }) => r.result.code),
        [code, code],
      );
    }
    assert.equal((await c.ok('ListRuleSets', {})).rulesets.length, 0);
    assert.equal((await c.ok('Eval', { expression: '1 + 2', context_json: '{}' }, as('beta'))).result_json, '3');
  });

  it('unknown and disabled tenants: HTTP 404 TENANT_NOT_FOUND, gRPC NOT_FOUND', async () => {
    for (const tenant of ['ghost', 'sleepy']) {
      const res = await http(server!.url, 'POST', '/api/v1/execute/shared', { input: {} }, as(tenant));
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'TENANT_NOT_FOUND');
      for (const [method, req] of [
        ['Execute', { name: 'shared', input_json: '{}' }],
        ['ListRuleSets', {}],
        ['GetRuleSet', { name: 'shared' }],
        ['Eval', { expression: '1', context_json: '{}' }],
        ['BatchExecute', { name: 'shared', inputs_json: ['{}'] }],
      ] as const) {
        const out = await client!.call(method, req, as(tenant));
        assert.equal(out.ok, false, `${method} as ${tenant}`);
        if (!out.ok) {
          assert.equal(out.code, Status.NOT_FOUND, `${method} as ${tenant}`);
          assert.equal(out.svcCode, 'TENANT_NOT_FOUND');
        }
      }
    }
    assert.equal((await client!.ok('Health', {}, as('ghost'))).status, 'healthy', 'Health is not tenant-scoped');
  });

  it('rate limit: of N immediate requests beyond the burst, some are refused (HTTP 429, gRPC RESOURCE_EXHAUSTED)', async () => {
    // qps_limit 0.001, burst 3: the bucket holds 3 tokens and refills one every 1000 s.
    const N = 8;
    const statuses = await Promise.all(
      Array.from({ length: N }, () => http(server!.url, 'POST', '/api/v1/execute/shared', { input: {} }, as('tight')).then((r) => r.status)),
    );
    const rejected = statuses.filter((s) => s === 429).length;
    assert.ok(rejected > 0, `some of ${N} requests are rejected: ${statuses.join(',')}`);
    assert.ok(statuses.filter((s) => s === 200).length <= 3, 'no more than the burst passes');
    assert.ok(statuses.every((s) => s === 200 || s === 429));
    const res = await http(server!.url, 'POST', '/api/v1/eval', { expression: '1', context: {} }, as('tight'));
    assert.equal(res.body.code, 'RATE_LIMITED');
    const out = await client!.call('Execute', { name: 'shared', input_json: '{}' }, as('tight'));
    assert.equal(out.ok, false);
    if (!out.ok) {
      assert.equal(out.code, Status.RESOURCE_EXHAUSTED);
      assert.equal(out.svcCode, 'RATE_LIMITED');
    }
    // Another tenant is not affected.
    assert.equal((await http(server!.url, 'POST', '/api/v1/execute/shared', { input: {} }, as('alpha'))).status, 200);
  });

  it('max_rulesets: one more is 400; an update of the existing one is fine', async () => {
    assert.equal((await http(server!.url, 'POST', '/api/v1/rulesets', rules('one', 'X'), as('small'))).status, 200);
    const two = await http(server!.url, 'POST', '/api/v1/rulesets', rules('two', 'X'), as('small'));
    assert.equal(two.status, 400);
    assert.match(two.body.error, /max_rulesets limit is 1/);
    assert.equal((await http(server!.url, 'POST', '/api/v1/rulesets', rules('one', 'Y'), as('small'))).body.status, 'updated');
  });

  it('execution_timeout_ms of the tenant applies (server default disabled): HTTP 500 TIMEOUT, gRPC DEADLINE_EXCEEDED', async () => {
    const res = await http(server!.url, 'POST', '/api/v1/execute/spin', { input: {} }, as('quick'));
    assert.equal(res.status, 500);
    assert.equal(res.body.code, 'TIMEOUT');
    assert.equal(res.body.timeout_ms, 1);
    const out = await client!.call('Execute', { name: 'spin', input_json: '{}' }, as('quick'));
    assert.equal(out.ok, false);
    if (!out.ok) {
      assert.equal(out.code, Status.DEADLINE_EXCEEDED);
      assert.equal(out.svcCode, 'TIMEOUT');
    }
  });

  it('deleting a tenant that owns rulesets is 409 CONFLICT', async () => {
    const res = await http(server!.url, 'DELETE', '/api/v1/tenants/alpha');
    assert.equal(res.status, 409);
    assert.match(res.body.error, /tenant 'alpha' still owns 1 ruleset \(shared\)/);
  });

  it('tenants and their rulesets survive a restart (tenants.json, tenants/<id>/)', async () => {
    assert.ok(existsSync(join(dir.path, 'tenants.json')));
    assert.ok(existsSync(join(dir.path, 'tenants', 'alpha', 'shared.json')));
    assert.ok(existsSync(join(dir.path, 'tenants', 'beta', 'shared.json')));
    await http(server!.url, 'DELETE', '/api/v1/tenants/sleepy');
    client!.close();
    assert.equal(await server!.stop(), 0);
    server = await startServer(args);
    client = connect(server.grpcAddress);
    const list = (await http(server.url, 'GET', '/api/v1/tenants')).body.map((t: { id: string }) => t.id);
    assert.deepEqual(list, ['alpha', 'beta', 'default', 'quick', 'small', 'tight']);
    assert.equal((await http(server.url, 'GET', '/api/v1/tenants/alpha')).body.name, 'Alpha');
    assert.equal((await http(server.url, 'GET', '/api/v1/tenants/small')).body.max_rulesets, 1);
    assert.equal((await http(server.url, 'POST', '/api/v1/execute/shared', { input: {} }, as('beta'))).body.code, 'B');
    assert.equal((await client.ok('Execute', { name: 'shared', input_json: '{}' }, as('alpha'))).code, 'A');
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', rules('two', 'X'), as('small'))).status, 400, 'limits are back too');
    assert.equal((await http(server.url, 'GET', '/api/v1/rulesets', undefined, as('sleepy'))).body.code, 'TENANT_NOT_FOUND');
  });
});

describe('multi-tenancy: start-up with a broken tenants.json', () => {
  it('refuses to start and names the file and the problem', async () => {
    const dir = tempDir('svc-tenancy-bad-');
    try {
      writeFileSync(join(dir.path, 'tenants.json'), JSON.stringify({ tenants: [{ id: 'a', qps_limit: -1 }] }));
      await assert.rejects(
        startServer(['--multi-tenancy-enabled', '--rules-dir', dir.path], { timeoutMs: 10_000 }),
        /tenants\.json is invalid: tenants\[0\]\.qps_limit/,
      );
      assert.equal(JSON.parse(readFileSync(join(dir.path, 'tenants.json'), 'utf8')).tenants[0].qps_limit, -1, 'the file is left alone');
    } finally {
      dir.remove();
    }
  });
});

describe('multi-tenancy off', () => {
  let server: ServerProcess | undefined;
  let client: TestClient | undefined;
  before(async () => {
    server = await startServer([]);
    client = connect(server.grpcAddress);
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('tenant headers and metadata are ignored; the tenant routes are 404', async () => {
    const url = server!.url;
    assert.equal((await http(url, 'POST', '/api/v1/rulesets', rules('plain', 'P'), as('acme'))).body.status, 'created');
    assert.deepEqual(
      (await http(url, 'GET', '/api/v1/rulesets')).body.map((r: { name: string }) => r.name),
      ['plain'],
    );
    assert.equal((await http(url, 'POST', '/api/v1/execute/plain', { input: {} }, as('ghost'))).body.code, 'P');
    assert.equal((await client!.ok('Execute', { name: 'plain', input_json: '{}' }, as('ghost'))).code, 'P');
    assert.equal((await client!.ok('ListRuleSets', {}, as('other'))).rulesets.length, 1);
    for (const [method, path] of [
      ['GET', '/api/v1/tenants'],
      ['POST', '/api/v1/tenants'],
      ['GET', '/api/v1/tenants/acme'],
    ] as const) {
      const res = await http(url, method, path, method === 'POST' ? { id: 'acme' } : undefined);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
    assert.match(metrics, /svc_executions_total\{ruleset="plain",result="success"\} 2/);
    assert.doesNotMatch(metrics, /tenant=/);
  });
});
