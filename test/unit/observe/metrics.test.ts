import { test } from 'node:test';
import assert from 'node:assert/strict';
import { register as globalRegister } from 'prom-client';
import { EXECUTION_BUCKETS, Metrics } from '../../../src/observe/index.js';
import type { ServiceMetrics } from '../../../src/service/ports.js';
import { find, parseExposition, value, type Exposition } from './exposition.js';

const SPEC_METRICS: Record<string, string> = {
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
  // EXTENSIONS.md 4 "Shadow runs".
  svc_shadow_executions_total: 'counter',
};

function make(clock = { t: 1_000_000 }, rules = { n: 0 }): Metrics {
  return new Metrics({ version: '1.2.3', now: () => clock.t, startTime: 1_000_000, rulesCount: () => rules.n });
}

async function scrape(metrics: Metrics): Promise<Exposition> {
  return parseExposition(await metrics.render());
}

test('exactly the metrics of the spec, with their types and a HELP line each', async () => {
  const exp = await scrape(make());
  assert.deepEqual(Object.fromEntries(exp.types), SPEC_METRICS);
  for (const name of Object.keys(SPEC_METRICS)) assert.ok(exp.help.get(name), `HELP for ${name}`);
  for (const s of exp.samples) assert.match(s.name, /^svc_/);
});

test('svc_shadow_executions_total counts candidate runs by ruleset and agreement (tenant label in multi-tenancy mode)', async () => {
  const metrics = make();
  metrics.recordShadow('loan', 'agree');
  metrics.recordShadow('loan', 'agree');
  metrics.recordShadow('loan', 'disagree');
  const exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_shadow_executions_total', { ruleset: 'loan', agreement: 'agree' }), 2);
  assert.equal(value(exp, 'svc_shadow_executions_total', { ruleset: 'loan', agreement: 'disagree' }), 1);
  assert.equal(value(exp, 'svc_shadow_executions_total', { ruleset: 'loan', agreement: 'error' }), 0);
  const mt = new Metrics({ version: '1', tenantLabel: true });
  mt.recordShadow('loan', 'error', 'acme');
  assert.equal(value(await scrape(mt), 'svc_shadow_executions_total', { ruleset: 'loan', tenant: 'acme', agreement: 'error' }), 1);
});

test("the registry is private: nothing lands in prom-client's global registry, two instances coexist", async () => {
  make();
  make();
  assert.equal(globalRegister.getSingleMetric('svc_info'), undefined);
  assert.equal((await globalRegister.metrics()).includes('svc_'), false);
});

test('svc_info carries the version with value 1', async () => {
  const exp = await scrape(make());
  assert.equal(value(exp, 'svc_info', { version: '1.2.3' }), 1);
});

test('svc_uptime_seconds follows the injected clock at each scrape', async () => {
  const clock = { t: 1_000_000 };
  const metrics = make(clock);
  clock.t += 5_500;
  assert.equal(value(await scrape(metrics), 'svc_uptime_seconds'), 5.5);
  clock.t += 1_000;
  assert.equal(value(await scrape(metrics), 'svc_uptime_seconds'), 6.5);
});

test('svc_rules_total reads the callback at each scrape; setRulesCount replaces it', async () => {
  const rules = { n: 3 };
  const metrics = make(undefined, rules);
  assert.equal(value(await scrape(metrics), 'svc_rules_total'), 3);
  rules.n = 4;
  assert.equal(value(await scrape(metrics), 'svc_rules_total'), 4);
  metrics.setRulesCount(() => 42);
  assert.equal(value(await scrape(metrics), 'svc_rules_total'), 42);
});

test('executions: counts by ruleset and result, terminal codes, duration histogram', async () => {
  const metrics = make();
  metrics.recordExecution('loan', 0.0000015, true, 'APPROVED');
  metrics.recordExecution('loan', 0.002, true, 'REJECTED');
  metrics.recordExecution('loan', 0.003, true, 'APPROVED');
  metrics.recordExecution('loan', 2, false);
  metrics.recordExecution('other', 0.5, true, 'OK');
  const exp = await scrape(metrics);

  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'loan', result: 'success' }), 3);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'loan', result: 'error' }), 1);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'other', result: 'success' }), 1);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'other', result: 'error' }), 0);
  assert.equal(value(exp, 'svc_terminal_results_total', { ruleset: 'loan', code: 'APPROVED' }), 2);
  assert.equal(value(exp, 'svc_terminal_results_total', { ruleset: 'loan', code: 'REJECTED' }), 1);
  assert.equal(value(exp, 'svc_terminal_results_total', { ruleset: 'other', code: 'OK' }), 1);
  assert.equal(find(exp, 'svc_terminal_results_total').length, 3, 'errors add no terminal code');

  const buckets = find(exp, 'svc_execution_duration_seconds_bucket', { ruleset: 'loan' });
  assert.deepEqual(
    buckets.map((b) => b.labels.le),
    [...EXECUTION_BUCKETS.map(String), '+Inf'],
  );
  const at = (le: string): number => value(exp, 'svc_execution_duration_seconds_bucket', { ruleset: 'loan', le });
  assert.equal(at('0.000001'), 0);
  assert.equal(at('0.0000025'), 1);
  assert.equal(at('0.0025'), 2);
  assert.equal(at('0.005'), 3);
  assert.equal(at('1'), 3);
  assert.equal(at('+Inf'), 4);
  assert.equal(value(exp, 'svc_execution_duration_seconds_count', { ruleset: 'loan' }), 4);
  const sum = value(exp, 'svc_execution_duration_seconds_sum', { ruleset: 'loan' });
  assert.ok(Math.abs(sum - (0.0000015 + 0.002 + 0.003 + 2)) < 1e-9, `sum ${sum}`);
  for (let i = 1; i < buckets.length; i++) {
    assert.ok((buckets[i] as { value: number }).value >= (buckets[i - 1] as { value: number }).value, 'buckets are cumulative');
  }
});

test('a ruleset handle records like recordExecution and starts both result series at 0', async () => {
  const metrics = make();
  const handle = metrics.ruleset('fast');
  assert.equal(metrics.ruleset('fast'), handle, 'cached');
  let exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'fast', result: 'success' }), 0);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'fast', result: 'error' }), 0);
  handle.record(0.001, true, 'A');
  handle.record(0.001, true, 'A');
  exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'fast', result: 'success' }), 2);
  assert.equal(value(exp, 'svc_terminal_results_total', { ruleset: 'fast', code: 'A' }), 2);
});

test('evaluations: counter by result and an unlabelled histogram', async () => {
  const metrics = make();
  let exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_eval_total', { result: 'success' }), 0);
  assert.equal(value(exp, 'svc_eval_total', { result: 'error' }), 0);
  metrics.recordEval(0.00001, true);
  metrics.recordEval(0.00002, true);
  metrics.recordEval(0.5, false);
  exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_eval_total', { result: 'success' }), 2);
  assert.equal(value(exp, 'svc_eval_total', { result: 'error' }), 1);
  assert.equal(value(exp, 'svc_eval_duration_seconds_count'), 3);
  assert.equal(value(exp, 'svc_eval_duration_seconds_bucket', { le: '+Inf' }), 3);
  assert.equal(value(exp, 'svc_eval_duration_seconds_bucket', { le: '0.00001' }), 1);
  assert.ok(Math.abs(value(exp, 'svc_eval_duration_seconds_sum') - 0.50003) < 1e-9);
});

test('svc_active_executions goes up and down and never below 0', async () => {
  const metrics = make();
  metrics.activeInc();
  metrics.activeInc();
  metrics.activeInc();
  metrics.activeDec();
  assert.equal(value(await scrape(metrics), 'svc_active_executions'), 2);
  metrics.activeDec();
  metrics.activeDec();
  metrics.activeDec();
  assert.equal(value(await scrape(metrics), 'svc_active_executions'), 0);
});

test('compilation durations by ruleset', async () => {
  const metrics = make();
  metrics.observeCompilation('loan', 0.0003);
  metrics.observeCompilation('loan', 0.02);
  const exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_compilation_duration_seconds_count', { ruleset: 'loan' }), 2);
  assert.equal(value(exp, 'svc_compilation_duration_seconds_bucket', { ruleset: 'loan', le: '+Inf' }), 2);
  assert.equal(value(exp, 'svc_compilation_duration_seconds_bucket', { ruleset: 'loan', le: '0.0005' }), 1);
});

test('forgetRuleset removes every series of that ruleset and only of it', async () => {
  const metrics = make();
  metrics.observeCompilation('gone', 0.001);
  metrics.recordExecution('gone', 0.001, true, 'X');
  metrics.recordExecution('gone', 0.001, false);
  metrics.recordExecution('kept', 0.001, true, 'Y');
  metrics.forgetRuleset('gone');
  metrics.forgetRuleset('never-seen');
  const exp = await scrape(metrics);
  assert.deepEqual(
    exp.samples.filter((s) => s.labels.ruleset === 'gone'),
    [],
  );
  assert.equal(value(exp, 'svc_terminal_results_total', { ruleset: 'kept', code: 'Y' }), 1);
  metrics.recordExecution('gone', 0.001, true, 'X');
  assert.equal(value(await scrape(metrics), 'svc_terminal_results_total', { ruleset: 'gone', code: 'X' }), 1, 'starts afresh');
});

test('terminal codes that alternate are each counted, in the order first seen (the last-code shortcut)', async () => {
  const metrics = make();
  const handle = metrics.ruleset('mixed');
  for (const code of ['A', 'A', 'B', 'A', 'C', 'C', 'B', 'A']) handle.record(0.001, true, code);
  handle.record(0.001, false);
  const exp = await scrape(metrics);
  assert.deepEqual(
    exp.samples.filter((s) => s.name === 'svc_terminal_results_total').map((s) => [s.labels.code, s.value]),
    [
      ['A', 4],
      ['B', 2],
      ['C', 2],
    ],
  );
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'mixed', result: 'success' }), 8);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'mixed', result: 'error' }), 1);
});

test('a ruleset with more terminal codes than its array holds counts them all, in the order first seen', async () => {
  // The first six codes are counted in the handle's array, later ones in a map: both exported.
  const metrics = make();
  const handle = metrics.ruleset('many');
  const codes = ['C0', 'C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8'];
  const expected = new Map<string, number>();
  let k = 7;
  for (let i = 0; i < 200; i++) {
    k = (k * 31 + 11) % 97;
    const code = codes[i < codes.length ? i : k % codes.length]!;
    for (let r = 0; r < 1 + (k % 3); r++) {
      handle.record(0.00001 * (k % 5), true, code);
      expected.set(code, (expected.get(code) ?? 0) + 1);
    }
  }
  handle.record(0.5, false);
  const exp = await scrape(metrics);
  assert.deepEqual(
    exp.samples.filter((s) => s.name === 'svc_terminal_results_total').map((s) => [s.labels.code, s.value]),
    [...expected],
  );
  const total = [...expected.values()].reduce((a, b) => a + b, 0);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'many', result: 'success' }), total);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'many', result: 'error' }), 1);
  assert.equal(value(exp, 'svc_execution_duration_seconds_count', { ruleset: 'many' }), total + 1);
  assert.equal(value(exp, 'svc_execution_duration_seconds_bucket', { ruleset: 'many', le: '+Inf' }), total + 1);
});

test('contentType is the Prometheus text format', () => {
  assert.match(make().contentType, /^text\/plain; version=0\.0\.4/);
});

test('Metrics satisfies the service port', () => {
  const port: ServiceMetrics = make();
  assert.equal(typeof port.recordExecution, 'function');
});

test('rulesets kept in shared blocks count apart, and a forgotten handle keeps counting without touching the block reused after it', async () => {
  // 300 rulesets fill more than two of the shared chunks (128 blocks each).
  const metrics = make();
  const handles = Array.from({ length: 300 }, (_, i) => metrics.ruleset(`r${i}`));
  handles.forEach((h, i) => {
    for (let k = 0; k <= i % 5; k++) h.record(0.000002 * (k + 1), true, `C${i % 3}`);
    if (i % 7 === 0) h.record(0.3, false);
    metrics.observeCompilation(`r${i}`, 0.0001 * (1 + (i % 4)));
  });
  let exp = await scrape(metrics);
  for (const i of [0, 1, 127, 128, 129, 255, 256, 299]) {
    const r = `r${i}`;
    assert.equal(value(exp, 'svc_executions_total', { ruleset: r, result: 'success' }), (i % 5) + 1, r);
    assert.equal(value(exp, 'svc_executions_total', { ruleset: r, result: 'error' }), i % 7 === 0 ? 1 : 0, r);
    assert.equal(value(exp, 'svc_terminal_results_total', { ruleset: r, code: `C${i % 3}` }), (i % 5) + 1, r);
    assert.equal(value(exp, 'svc_execution_duration_seconds_count', { ruleset: r }), (i % 5) + 1 + (i % 7 === 0 ? 1 : 0), r);
    assert.equal(value(exp, 'svc_compilation_duration_seconds_count', { ruleset: r }), 1, r);
  }
  // Forgotten: its block goes back and the next new ruleset gets it, starting from zero; the
  // old handle (still held) counts into numbers of its own.
  const old = handles[5]!;
  metrics.forgetRuleset('r5');
  const fresh = metrics.ruleset('new');
  old.record(0.001, true, 'OLD');
  old.record(0.001, true, 'OLD');
  fresh.record(0.001, true, 'NEW');
  exp = await scrape(metrics);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'new', result: 'success' }), 1);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'new', result: 'error' }), 0);
  assert.equal(value(exp, 'svc_execution_duration_seconds_count', { ruleset: 'new' }), 1);
  assert.deepEqual(
    exp.samples.filter((s) => s.name === 'svc_compilation_duration_seconds_count' && s.labels.ruleset === 'new'),
    [],
    'no compilation recorded for the new ruleset',
  );
  assert.equal(old.success, (5 % 5) + 1 + 2, 'the forgotten handle kept its numbers and counted on');
  assert.equal(fresh.success, 1);
  assert.deepEqual(
    [...old.codes()],
    [
      ['C2', 1],
      ['OLD', 2],
    ],
  );
  assert.deepEqual([...fresh.codes()], [['NEW', 1]]);
  assert.equal(value(exp, 'svc_executions_total', { ruleset: 'r6', result: 'success' }), (6 % 5) + 1, 'neighbours untouched');
});
