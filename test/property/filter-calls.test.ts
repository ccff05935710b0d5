/**
 * Filter soundness through call steps (EXTENSIONS.md 3 "Calling another ruleset"), proven
 * against real databases as in filter-soundness.test.ts (same check, test/helpers/filter/
 * soundness.ts): generated callers with one or two call steps, callees called with and without
 * an input mapping, calls two deep, calls in loops (test/helpers/filter/gen-calls.ts). The truth
 * is `execute` with the callees as its `calls` resolver; the filter expands the callees with the
 * same resolver. Exact answers must select exactly the truth rows, others a superset; most
 * answers must be exact (a call's result is no longer read as untracked).
 *
 * Environment: FILTER_PROPERTY_SEED (base seed; printed), FILTER_CALLS_CASES (default 400),
 * FILTER_PROPERTY_CASE (replay one case seed).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FilterDatabases } from '../helpers/filter/databases.js';
import { FIELDS, Rng, generateRows } from '../helpers/filter/gen-case.js';
import { generateCallCase, type CallFilterCase } from '../helpers/filter/gen-calls.js';
import { checkBatch, newStats, type Stats } from '../helpers/filter/soundness.js';

const BASE_SEED = Number(process.env['FILTER_PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env['FILTER_CALLS_CASES'] ?? 400);
const ONLY = process.env['FILTER_PROPERTY_CASE'];
const BATCH = 100;
const ROWS = 24;

let dbs: FilterDatabases;

before(async () => {
  dbs = await FilterDatabases.open(FIELDS.map((f) => ({ name: f.column, type: f.type })));
});

after(async () => {
  await dbs?.close();
});

async function run(label: string, seed: number, nullRate: number): Promise<{ stats: Stats; exact: number; measured: number }> {
  const stats = newStats();
  const failures: string[] = [];
  const seeds = ONLY !== undefined ? [Number(ONLY)] : Array.from({ length: CASES }, (_, i) => (seed + i) >>> 0);
  let exact = 0;
  let measured = 0;
  for (let i = 0; i < seeds.length && failures.length < 3; i += BATCH) {
    const cases = seeds
      .slice(i, i + BATCH)
      .map(generateCallCase)
      .filter((c): c is CallFilterCase => c !== null);
    const rows = generateRows(new Rng(seeds[i]! ^ 0x68e31da4), ROWS, nullRate);
    const before = { superset: stats.superset, truncated: stats.truncated, inexpressible: stats.inexpressible, cases: stats.cases };
    failures.push(...(await checkBatch(dbs, cases, rows, stats)));
    // Exact share: answers neither truncated nor inexpressible that say exact.
    const answered = stats.cases - before.cases - (stats.inexpressible - before.inexpressible);
    const supersets = stats.superset - before.superset;
    const truncated = stats.truncated - before.truncated;
    measured += answered - truncated;
    exact += answered - supersets;
  }
  const line = `${label}: base seed ${seed}: ${stats.cases} cases x ${ROWS} rows; ${stats.filters} filters, ${stats.always} always, ${stats.never} never, ${stats.truncated} truncated, ${stats.superset} superset-only, ${stats.inexpressible} inexpressible, ${exact} of ${measured} untruncated answers exact; ${stats.selected} matching (case, row) pairs, ${stats.failed} failing`;
  console.log(line);
  assert.equal(failures.length, 0, `${line}\nreplay with FILTER_PROPERTY_SEED=${seed}\n\n${failures.slice(0, 3).join('\n\n')}`);
  return { stats, exact, measured };
}

test('call steps, rows without NULLs: every backend selects exactly the engine rows (a superset where not exact)', async () => {
  const { stats, exact, measured } = await run('calls, non-null rows', BASE_SEED, 0);
  if (ONLY === undefined) {
    assert.ok(stats.cases >= CASES * 0.9, `most seeds give a case (${stats.cases} of ${CASES})`);
    assert.ok(stats.filters > stats.cases / 5, 'many cases need a real filter');
    assert.ok(stats.selected > 0 && stats.failed > 0, 'matching rows and failing executions both occur');
    assert.ok(exact >= measured * 0.8, `most answers through calls are exact (${exact} of ${measured})`);
  }
});

test('call steps, rows with NULLs: tree and mingo exact; SQL as the NULL semantics predict', async () => {
  await run('calls, rows with NULLs', (BASE_SEED + 0x9e3779b9) >>> 0, 0.25);
});
