/**
 * The judgement of `npm run bench:compare` (bench/lib/compare.ts) over two builds' result files:
 * matching figures, which way is better, ratios to a same-run baseline, noise bands from the
 * suite defaults and from the runs' spread, and new / gone figures.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_BANDS, FALLBACK_BAND, compareReports, directionOf, formatTable, hasRegression, spread } from '../../../bench/lib/compare.js';
import type { SuiteReport, SummaryRow } from '../../../bench/lib/report.js';

const MACHINE = { cpu: 'test', cores: 2, memory_gib: 4, node: 'v20', svc_version: '0.0.0', git_commit: null, load_average_start: [0, 0, 0] };

function report(suite: string, summary: SummaryRow[]): SuiteReport {
  return { suite, timestamp: '2026-11-24T00:00:00.000Z', machine: MACHINE, method: 'test', summary, details: null };
}

function throughput(metric: string, svc: number, baseline: number | null, target: string | null = null): SummaryRow {
  return {
    metric,
    unit: 'req/s',
    svc,
    baseline,
    baseline_name: baseline === null ? null : 'bare fastify',
    ratio: baseline === null ? null : Math.round((svc / baseline) * 1000) / 1000,
    target,
    pass: null,
  };
}

function time(metric: string, svc: number, unit = 'ms'): SummaryRow {
  return { metric, unit, svc, baseline: null, baseline_name: null, ratio: null, target: null, pass: null };
}

test('a throughput that drops beyond the band is a regression; the exit decision follows it', () => {
  const base = [report('http', [throughput('execute req/s', 30_000, null)])];
  const head = [report('http', [throughput('execute req/s', 25_000, null)])];
  const rows = compareReports(base, head);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.verdict, 'regression');
  assert.equal(rows[0]!.direction, 'higher');
  assert.ok(Math.abs(rows[0]!.change! - -1 / 6) < 1e-9);
  assert.equal(rows[0]!.band, DEFAULT_BANDS['http']);
  assert.equal(hasRegression(rows), true);
});

test('a change inside the suite band is within noise, and beyond it the right way an improvement', () => {
  const base = [report('http', [throughput('a', 30_000, null), throughput('b', 30_000, null)])];
  const head = [report('http', [throughput('a', 28_000, null), throughput('b', 36_000, null)])];
  const rows = compareReports(base, head);
  assert.deepEqual(
    rows.map((r) => r.verdict),
    ['within noise', 'improvement'],
  );
  assert.equal(hasRegression(rows), false);
});

test('times are better lower: a slower time regresses, a faster one improves', () => {
  const base = [report('batch', [time('p50', 10), time('p99', 10)])];
  const head = [report('batch', [time('p50', 12), time('p99', 8)])];
  const rows = compareReports(base, head);
  assert.deepEqual(
    rows.map((r) => [r.direction, r.verdict]),
    [
      ['lower', 'regression'],
      ['lower', 'improvement'],
    ],
  );
});

test('a row with a same-run baseline is judged on its ratio, not on the machine-dependent figure', () => {
  // The machine was 30% slower during the head's run, the baseline too: the ratio is unchanged.
  const base = [report('http', [throughput('execute', 30_000, 30_000, '>= 0.85 x bare fastify')])];
  const head = [report('http', [throughput('execute', 21_000, 21_000, '>= 0.85 x bare fastify')])];
  const rows = compareReports(base, head);
  assert.equal(rows[0]!.measure, 'ratio to bare fastify');
  assert.equal(rows[0]!.base, 1);
  assert.equal(rows[0]!.head, 1);
  assert.equal(rows[0]!.verdict, 'within noise');
  // ... and a ratio that falls is a regression even when the figure itself rose.
  const worse = [report('http', [throughput('execute', 33_000, 40_000, '>= 0.85 x bare fastify')])];
  assert.equal(compareReports(base, worse)[0]!.verdict, 'regression');
});

test('the band widens to the spread of the runs of either build', () => {
  const base = [report('http', [throughput('x', 30_000, null)]), report('http', [throughput('x', 40_000, null)])];
  const head = [report('http', [throughput('x', 28_000, null)]), report('http', [throughput('x', 29_000, null)])];
  const rows = compareReports(base, head);
  // base median 35,000, spread 10,000 / 35,000; head median 28,500 (-18.6%): inside the spread.
  assert.ok(Math.abs(rows[0]!.band - 10_000 / 35_000) < 1e-9);
  assert.equal(rows[0]!.verdict, 'within noise');
  assert.equal(spread([1]), 0);
  assert.equal(spread([9, 10, 11]), 0.2);
});

test('bands: per-suite defaults, a fallback for unknown suites, and overrides', () => {
  const base = [report('newsuite', [throughput('x', 100, null)])];
  const head = [report('newsuite', [throughput('x', 85, null)])];
  assert.equal(compareReports(base, head)[0]!.band, FALLBACK_BAND);
  assert.equal(compareReports(base, head)[0]!.verdict, 'within noise');
  assert.equal(compareReports(base, head, { bands: { newsuite: 0.05 } })[0]!.verdict, 'regression');
});

test('figures only one build has are new or gone and never fail; rows without a direction are not judged', () => {
  const base = [report('engine', [time('old figure', 5, 'ns'), { ...time('count', 10), unit: 'rulesets' }])];
  const head = [report('engine', [time('new figure', 5, 'ns'), { ...time('count', 1), unit: 'rulesets' }])];
  const rows = compareReports(base, head);
  const byMetric = Object.fromEntries(rows.map((r) => [r.metric, r.verdict]));
  assert.deepEqual(byMetric, { 'new figure': 'new', count: 'not judged', 'old figure': 'gone' });
  assert.equal(hasRegression(rows), false);
});

test('figures are matched by suite and subject, so peer-engine rows do not mix', () => {
  const row = (subject: string, svc: number): SummaryRow => ({ ...time('approval', svc, 'ns'), subject });
  const base = [report('engine', [row('svc', 100), row('walker', 100)]), report('calls', [time('approval', 100, 'ns')])];
  const head = [report('engine', [row('svc', 100), row('walker', 300)]), report('calls', [time('approval', 100, 'ns')])];
  const rows = compareReports(base, head);
  assert.equal(rows.length, 3);
  assert.deepEqual(
    rows.map((r) => `${r.suite}:${r.metric}:${r.verdict}`),
    ['engine:approval (svc):within noise', 'engine:approval (walker):regression', 'calls:approval:within noise'],
  );
});

test('direction from the target first, then from the unit', () => {
  assert.equal(directionOf({ target: '>= 0.95', unit: 'ms' }), 'higher');
  assert.equal(directionOf({ target: '< 5 ms', unit: 'ms' }), 'lower');
  assert.equal(directionOf({ target: '<= 2 x walker', unit: 'ns' }), 'lower');
  assert.equal(directionOf({ target: 'report', unit: 'req/cpu-s' }), 'higher');
  assert.equal(directionOf({ target: null, unit: 'x' }), 'higher');
  assert.equal(directionOf({ target: null, unit: 'us' }), 'lower');
  assert.equal(directionOf({ target: null, unit: 'rulesets' }), null);
});

test('two result files on disk: read, compared, and printed as a table naming the verdicts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-compare-test-'));
  try {
    writeFileSync(join(dir, 'base.json'), JSON.stringify(report('http', [throughput('execute req/s', 30_000, null), time('p99', 4)])));
    writeFileSync(join(dir, 'head.json'), JSON.stringify(report('http', [throughput('execute req/s', 30_500, null), time('p99', 6)])));
    const read = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as SuiteReport;
    const rows = compareReports([read('base.json')], [read('head.json')]);
    assert.deepEqual(
      rows.map((r) => r.verdict),
      ['within noise', 'regression'],
    );
    const table = formatTable(rows, 'v1.0.0', 'head');
    assert.match(table, /v1\.0\.0/);
    assert.match(table, /p99 .*REGRESSION/);
    assert.match(table, /\+50\.0%/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a change smaller than the band times the target bound is noise, however large relative to the figure', () => {
  const cost = (svc: number): SummaryRow => ({ ...time('validation cost (with - without)', svc, 'ns'), target: '<= 2000 ns' });
  assert.equal(compareReports([report('schema', [cost(7)])], [report('schema', [cost(48)])])[0]!.verdict, 'within noise');
  assert.equal(compareReports([report('schema', [cost(700)])], [report('schema', [cost(1400)])])[0]!.verdict, 'regression');
});
