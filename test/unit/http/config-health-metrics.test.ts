/**
 * HTTP routes: GET/PUT /config/audit-sample-rate, /health, /healthz/live, /healthz/ready and
 * /metrics (SPEC.md "Endpoints", "GET /metrics"; DECISIONS.md 3).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RwLock } from '../../../src/store/index.js';
import { find, parseExposition, value } from '../observe/exposition.js';
import { CLIENT_IP, ageRules, assertError, makeHarness, type Harness } from './harness.js';

describe('audit sample rate', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ sampleRate: 10 });
  });
  after(() => h.close());

  const rate = async () => (await h.request('GET', '/api/v1/config/audit-sample-rate')).body;
  const changes = () => h.auditLines().filter((l) => l['event'] === 'sample_rate_changed');

  it('GET answers {sample_rate} (the configured start value)', async () => {
    const r = await h.request('GET', '/api/v1/config/audit-sample-rate');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { sample_rate: 10 });
  });

  it('PUT sets it live, answers {sample_rate, previous} and audits sample_rate_changed', async () => {
    const r = await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 25 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { sample_rate: 25, previous: 10 });
    assert.deepEqual(await rate(), { sample_rate: 25 });
    const line = changes().at(-1)!;
    assert.equal(line['from_rate'], 10);
    assert.equal(line['to_rate'], 25);
    assert.equal(line['source_ip'], CLIENT_IP);
  });

  it('accepts the edges 0 and 100 and fractions', async () => {
    for (const [to, previous] of [
      [0, 25],
      [100, 0],
      [12.5, 100],
    ]) {
      const r = await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: to });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { sample_rate: to, previous });
    }
  });

  it('out of range or not a number is 400, the rate unchanged and nothing audited', async () => {
    const before = changes().length;
    for (const body of [
      { sample_rate: -1 },
      { sample_rate: 100.5 },
      { sample_rate: 1000 },
      { sample_rate: '50' },
      { sample_rate: null },
      { sample_rate: true },
      {},
      [50],
    ]) {
      assertError(await h.request('PUT', '/api/v1/config/audit-sample-rate', body), 400, 'BAD_REQUEST', /sample_rate/);
      assert.deepEqual(await rate(), { sample_rate: 12.5 }, JSON.stringify(body));
    }
    assert.equal(changes().length, before);
  });
});

describe('health endpoints', () => {
  it('memory mode: /health and /healthz/ready answer the same healthy body; /healthz/live is alive', async () => {
    const h = await makeHarness();
    try {
      await h.request('POST', '/api/v1/rulesets', ageRules('one'));
      const health = await h.request('GET', '/health');
      assert.equal(health.status, 200);
      assert.deepEqual(Object.keys(health.body).sort(), ['role', 'status', 'storage', 'uptime_seconds', 'version']);
      assert.equal(health.body.status, 'healthy');
      assert.equal(health.body.version, '9.9.9-test');
      assert.equal(health.body.role, 'standalone');
      assert.ok(Number.isInteger(health.body.uptime_seconds) && health.body.uptime_seconds >= 0);
      assert.deepEqual(health.body.storage, { mode: 'memory', rules_dir: null, rules_count: 1 });
      const ready = await h.request('GET', '/healthz/ready');
      assert.equal(ready.status, 200);
      assert.deepEqual({ ...ready.body, uptime_seconds: 0 }, { ...health.body, uptime_seconds: 0 });
      const live = await h.request('GET', '/healthz/live');
      assert.equal(live.status, 200);
      assert.deepEqual(live.body, { status: 'alive' });
    } finally {
      await h.close();
    }
  });

  it('persistent mode: storage {mode: persistent, rules_dir, rules_count} and the probe file is written', async () => {
    const h = await makeHarness({ rulesDir: true });
    try {
      const dir = h.rulesDir as string;
      await h.request('POST', '/api/v1/rulesets', ageRules('one'));
      await h.request('POST', '/api/v1/rulesets', ageRules('two'));
      const r = await h.request('GET', '/health');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.storage, { mode: 'persistent', rules_dir: dir, rules_count: 2 });
      assert.ok(existsSync(join(dir, '.health_probe')));
    } finally {
      await h.close();
    }
  });

  it('a reader reports role reader', async () => {
    const h = await makeHarness({ role: 'reader' });
    try {
      assert.equal((await h.request('GET', '/health')).body.role, 'reader');
    } finally {
      await h.close();
    }
  });

  it('probe file not writable (.health_probe is a directory): 503 NOT_READY with the health body, status unhealthy; live stays 200', async () => {
    const h = await makeHarness({ rulesDir: true });
    try {
      const dir = h.rulesDir as string;
      mkdirSync(join(dir, '.health_probe', 'blocker'), { recursive: true });
      for (const path of ['/health', '/healthz/ready']) {
        const r = await h.request('GET', path);
        const body = assertError(r, 503, 'NOT_READY', /not ready/);
        assert.equal(body['status'], 'unhealthy');
        assert.equal(body['version'], '9.9.9-test');
        assert.equal(body['role'], 'standalone');
        assert.ok(Number.isInteger(body['uptime_seconds']));
        assert.deepEqual(body['storage'], { mode: 'persistent', rules_dir: dir, rules_count: 0 });
      }
      assert.equal((await h.request('GET', '/healthz/live')).status, 200);
      // and it recovers once the probe can be written again
      rmSync(join(dir, '.health_probe'), { recursive: true });
      assert.equal((await h.request('GET', '/healthz/ready')).status, 200);
    } finally {
      await h.close();
    }
  });

  it('store lock not available within the wait: 503 NOT_READY', async () => {
    const lock = new RwLock('store');
    const h = await makeHarness({ lock, readyLockTimeoutMs: 50 });
    const release = await lock.acquireWrite();
    try {
      const body = assertError(await h.request('GET', '/healthz/ready'), 503, 'NOT_READY');
      assert.equal(body['status'], 'unhealthy');
      assert.equal((await h.request('GET', '/healthz/live')).status, 200);
    } finally {
      release();
      await h.close();
    }
    // NOTE: released, the same check passes (the 503 came from the held lock).
  });
});

describe('GET /metrics', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
    await h.request('POST', '/api/v1/rulesets', ageRules('age'));
    await h.request('POST', '/api/v1/rulesets', ageRules('other'));
  });
  after(() => h.close());

  const scrape = async () => {
    const r = await h.request('GET', '/metrics');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    return parseExposition(r.text);
  };

  it('exposes every metric of SPEC.md with its type', async () => {
    const exp = await scrape();
    const expected: Record<string, string> = {
      svc_info: 'gauge',
      svc_uptime_seconds: 'counter',
      svc_rules_total: 'gauge',
      svc_executions_total: 'counter',
      svc_execution_duration_seconds: 'histogram',
      svc_terminal_results_total: 'counter',
      svc_eval_total: 'counter',
      svc_eval_duration_seconds: 'histogram',
      svc_active_executions: 'gauge',
      svc_compilation_duration_seconds: 'histogram',
    };
    for (const [name, type] of Object.entries(expected)) assert.equal(exp.types.get(name), type, name);
    assert.equal(value(exp, 'svc_info', { version: '9.9.9-test' }), 1);
    assert.equal(value(exp, 'svc_rules_total'), 2);
    assert.equal(value(exp, 'svc_active_executions'), 0);
    assert.ok(value(exp, 'svc_uptime_seconds') >= 0);
    assert.ok(value(exp, 'svc_compilation_duration_seconds_count', { ruleset: 'age' }) >= 1);
  });

  it('counters move after executions, errors and evaluations', async () => {
    const before = await scrape();
    const count = (exp: ReturnType<typeof parseExposition>, name: string, labels: Record<string, string>) => {
      const s = find(exp, name, labels);
      return s.length === 0 ? 0 : s.reduce((a, x) => a + x.value, 0);
    };
    await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 30 } } });
    await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 31 } } });
    await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 3 } } });
    await h.request('POST', '/api/v1/execute/age/batch', { inputs: [{ user: { age: 5 } }] });
    await h.request('POST', '/api/v1/rulesets', {
      config: { name: 'strict', entry_step: 'c', field_missing: 'strict' },
      steps: {
        c: { type: 'decision', branches: [{ condition: 'missing > 1', next_step: 'e' }], default_next: 'e' },
        e: { type: 'terminal', result: { code: 'E' } },
      },
    });
    assert.equal((await h.request('POST', '/api/v1/execute/strict', { input: {} })).status, 500);
    await h.request('POST', '/api/v1/eval', { expression: '1 + 1' });
    await h.request('POST', '/api/v1/eval', { expression: '1 / 0' });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => count(after, name, labels) - count(before, name, labels);
    assert.equal(delta('svc_executions_total', { ruleset: 'age', result: 'success' }), 4);
    assert.equal(delta('svc_executions_total', { ruleset: 'age', result: 'error' }), 0);
    assert.equal(delta('svc_executions_total', { ruleset: 'strict', result: 'error' }), 1);
    assert.equal(delta('svc_terminal_results_total', { ruleset: 'age', code: 'ADULT' }), 2);
    assert.equal(delta('svc_terminal_results_total', { ruleset: 'age', code: 'MINOR' }), 2);
    assert.equal(delta('svc_execution_duration_seconds_count', { ruleset: 'age' }), 4);
    assert.equal(
      value(after, 'svc_execution_duration_seconds_bucket', { ruleset: 'age', le: '+Inf' }),
      value(after, 'svc_execution_duration_seconds_count', { ruleset: 'age' }),
    );
    assert.ok(find(after, 'svc_execution_duration_seconds_sum', { ruleset: 'age' }).length === 1);
    assert.equal(delta('svc_eval_total', { result: 'success' }), 1);
    assert.equal(delta('svc_eval_total', { result: 'error' }), 1);
    assert.equal(delta('svc_eval_duration_seconds_count', {}), 2);
    assert.equal(value(after, 'svc_rules_total'), 3);
    assert.equal(value(after, 'svc_active_executions'), 0);
  });

  it('a deleted ruleset disappears from the series', async () => {
    await h.request('POST', '/api/v1/execute/other', { input: {} });
    assert.ok(find(await scrape(), 'svc_executions_total', { ruleset: 'other' }).length > 0);
    assert.equal((await h.request('DELETE', '/api/v1/rulesets/other')).status, 204);
    assert.equal(find(await scrape(), 'svc_executions_total', { ruleset: 'other' }).length, 0);
  });

  it('metrics disabled: /metrics is 404 NOT_FOUND', async () => {
    const off = await makeHarness({ metricsEnabled: false });
    try {
      assertError(await off.request('GET', '/metrics'), 404, 'NOT_FOUND', /metrics are disabled/);
    } finally {
      await off.close();
    }
  });
});
