/**
 * Audit events written for HTTP calls (SPEC.md "Audit events"): every kind, every field,
 * the caller's `source_ip`, and execution sampling at 0 and 100 percent.
 * (`server_started` and `server_stopped` come from the server wiring: see the process tests.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLIENT_IP, ageRules, makeHarness, type Harness } from './harness.js';

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The lines of one event kind, each checked for the common fields and its exact key set. */
function linesOf(h: Harness, event: string, fields: string[]): Record<string, unknown>[] {
  const lines = h.auditLines().filter((l) => l['event'] === event);
  for (const line of lines) {
    assert.deepEqual(Object.keys(line).sort(), ['event', 'level', 'timestamp', ...fields].sort(), `fields of ${event}`);
    assert.match(String(line['timestamp']), ISO_UTC_MS);
    assert.ok(Math.abs(Date.parse(String(line['timestamp'])) - Date.now()) < 60_000);
    assert.equal(line['level'], 'INFO');
  }
  return lines;
}

describe('audit events of HTTP calls', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ rulesDir: true, sampleRate: 100 });
  });
  after(() => h.close());

  it('rule_created: rule_name, version, source_ip', async () => {
    assert.equal((await h.request('POST', '/api/v1/rulesets', ageRules('loan', { version: '1.0.0' }))).status, 200);
    const [line] = linesOf(h, 'rule_created', ['rule_name', 'version', 'source_ip']);
    assert.deepEqual(
      { ...line, timestamp: 0 },
      { timestamp: 0, level: 'INFO', event: 'rule_created', rule_name: 'loan', version: '1.0.0', source_ip: CLIENT_IP },
    );
  });

  it('rule_updated: rule_name, from_version, to_version, source_ip', async () => {
    assert.equal((await h.request('POST', '/api/v1/rulesets', ageRules('loan', { version: '1.1.0' }), {}, '10.1.2.3')).status, 200);
    const lines = linesOf(h, 'rule_updated', ['rule_name', 'from_version', 'to_version', 'source_ip']);
    assert.equal(lines.length, 1);
    assert.deepEqual(
      { ...lines[0], timestamp: 0 },
      {
        timestamp: 0,
        level: 'INFO',
        event: 'rule_updated',
        rule_name: 'loan',
        from_version: '1.0.0',
        to_version: '1.1.0',
        source_ip: '10.1.2.3',
      },
    );
  });

  it('rule_rollback: rule_name, from_version, to_version, seq, source_ip', async () => {
    assert.equal((await h.request('POST', '/api/v1/rulesets/loan/rollback', { seq: 1 })).status, 200);
    const lines = linesOf(h, 'rule_rollback', ['rule_name', 'from_version', 'to_version', 'seq', 'source_ip']);
    assert.equal(lines.length, 1);
    assert.deepEqual(
      { ...lines[0], timestamp: 0 },
      {
        timestamp: 0,
        level: 'INFO',
        event: 'rule_rollback',
        rule_name: 'loan',
        from_version: '1.1.0',
        to_version: '1.0.0',
        seq: 1,
        source_ip: CLIENT_IP,
      },
    );
  });

  it('rule_executed: rule_name, duration_us, result success/error, source_ip', async () => {
    await h.request('POST', '/api/v1/rulesets', {
      config: { name: 'strict', entry_step: 'c', field_missing: 'strict' },
      steps: {
        c: { type: 'decision', branches: [{ condition: 'missing > 1', next_step: 'e' }], default_next: 'e' },
        e: { type: 'terminal', result: { code: 'E' } },
      },
    });
    const ok = await h.request('POST', '/api/v1/execute/loan', { input: { user: { age: 30 } } });
    assert.equal(ok.status, 200);
    assert.equal((await h.request('POST', '/api/v1/execute/strict', { input: {} })).status, 500);
    const lines = linesOf(h, 'rule_executed', ['rule_name', 'duration_us', 'result', 'source_ip']);
    assert.equal(lines.length, 2);
    assert.equal(lines[0]!['rule_name'], 'loan');
    assert.equal(lines[0]!['result'], 'success');
    assert.equal(lines[0]!['duration_us'], ok.body.duration_us);
    assert.equal(lines[0]!['source_ip'], CLIENT_IP);
    assert.equal(lines[1]!['rule_name'], 'strict');
    assert.equal(lines[1]!['result'], 'error');
    assert.ok(Number.isInteger(lines[1]!['duration_us']));
  });

  it('sample_rate_changed: from_rate, to_rate, source_ip', async () => {
    assert.equal((await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 40 }, {}, '192.0.2.9')).status, 200);
    const lines = linesOf(h, 'sample_rate_changed', ['from_rate', 'to_rate', 'source_ip']);
    assert.equal(lines.length, 1);
    assert.deepEqual(
      { ...lines[0], timestamp: 0 },
      { timestamp: 0, level: 'INFO', event: 'sample_rate_changed', from_rate: 100, to_rate: 40, source_ip: '192.0.2.9' },
    );
    await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 100 });
  });

  it('rule_deleted: rule_name, source_ip', async () => {
    assert.equal((await h.request('DELETE', '/api/v1/rulesets/loan')).status, 204);
    const lines = linesOf(h, 'rule_deleted', ['rule_name', 'source_ip']);
    assert.equal(lines.length, 1);
    assert.deepEqual({ ...lines[0], timestamp: 0 }, { timestamp: 0, level: 'INFO', event: 'rule_deleted', rule_name: 'loan', source_ip: CLIENT_IP });
  });

  it('source_ip is the peer address; X-Forwarded-For is not trusted', async () => {
    await h.request('POST', '/api/v1/rulesets', ageRules('fwd'), { 'x-forwarded-for': '1.2.3.4' }, '203.0.113.50');
    const line = linesOf(h, 'rule_created', ['rule_name', 'version', 'source_ip']).find((l) => l['rule_name'] === 'fwd');
    assert.equal(line?.['source_ip'], '203.0.113.50');
  });

  it('failed writes are not audited', async () => {
    const before = h.auditLines().length;
    await h.request('POST', '/api/v1/rulesets', { config: { name: 'bad' }, steps: {} });
    await h.request('DELETE', '/api/v1/rulesets/nope');
    await h.request('POST', '/api/v1/rulesets/fwd/rollback', { seq: 42 });
    await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 101 });
    assert.equal(h.auditLines().length, before);
  });
});

describe('execution audit sampling', () => {
  const run = async (rate: number, n: number): Promise<{ single: number; batch: number; writes: number }> => {
    const h = await makeHarness({ sampleRate: rate });
    try {
      await h.request('POST', '/api/v1/rulesets', ageRules('age'));
      for (let i = 0; i < n; i++) await h.request('POST', '/api/v1/execute/age', { input: { user: { age: i } } });
      const single = h.auditLines().filter((l) => l['event'] === 'rule_executed').length;
      await h.request('POST', '/api/v1/execute/age/batch', { inputs: Array.from({ length: n }, () => ({})) });
      const batch = h.auditLines().filter((l) => l['event'] === 'rule_executed').length - single;
      const writes = h.auditLines().filter((l) => l['event'] === 'rule_created').length;
      return { single, batch, writes };
    } finally {
      await h.close();
    }
  };

  it('rate 100 audits every execution (each batch item too)', async () => {
    assert.deepEqual(await run(100, 25), { single: 25, batch: 25, writes: 1 });
  });

  it('rate 0 audits no execution (writes are still audited)', async () => {
    assert.deepEqual(await run(0, 25), { single: 0, batch: 0, writes: 1 });
  });

  it('a rate changed over HTTP applies to the next execution', async () => {
    const h = await makeHarness({ sampleRate: 0 });
    try {
      await h.request('POST', '/api/v1/rulesets', ageRules('age'));
      await h.request('POST', '/api/v1/execute/age', { input: {} });
      await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 100 });
      await h.request('POST', '/api/v1/execute/age', { input: {} });
      await h.request('PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 0 });
      await h.request('POST', '/api/v1/execute/age', { input: {} });
      assert.equal(h.auditLines().filter((l) => l['event'] === 'rule_executed').length, 1);
    } finally {
      await h.close();
    }
  });
});
