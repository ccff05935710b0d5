/**
 * Filter soundness, proven against real databases: thousands of generated rulesets,
 * each with known input and target codes; for every row, executing the ruleset on the known
 * input merged with the row is the truth, and the filter must select exactly those rows in
 * PostgreSQL, MariaDB, SQLite, mingo (Mongo format) and by evaluating the predicate tree (json format).
 * A row on which execution fails (division or modulo by 0, arithmetic on null, a failing output
 * or action: the generator makes such rulesets) yields no code and must not be selected.
 * A superset is accepted only where the answer says `exact: false` (truncation, the fallback for a
 * variable whose value no format can write where it is read); without variables and truncation
 * the answer must be exact, and most cases that read variables (substituted, EXTENSIONS.md 3) are.
 *
 * Tables, reference data and dates (issue 19): the cases hold routing and `set` tables, read a
 * generated dataset snapshot (`@ref`, the filter's known values) and call date functions with a
 * fixed request `now`; the engine runs with the same snapshot and time. The test checks that each
 * of them occurs in a meaningful share of the cases and that most table cases are exact; a date
 * function of the unknown date column is INEXPRESSIBLE where its truth matters (counted) and makes
 * the answer a superset (exact: false) where only its failure does.
 *
 * Rows with NULL columns: the tree and mingo stay exact; SQL selects exactly what the documented
 * NULL semantics predict (docs/filter.md), a subset of the truth.
 *
 * Environment: FILTER_PROPERTY_SEED (base seed; printed), FILTER_PROPERTY_CASES (per test,
 * default 1500), FILTER_PROPERTY_CASE (replay one case seed). A failure prints the ruleset,
 * known input, target codes, rows and the three filters.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FilterDatabases } from '../helpers/filter/databases.js';
import { FIELDS, Rng, generateCase, generateRows } from '../helpers/filter/gen-case.js';
import { checkBatch, newStats, type Stats } from '../helpers/filter/soundness.js';

const BASE_SEED = Number(process.env['FILTER_PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env['FILTER_PROPERTY_CASES'] ?? 1500);
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

async function run(label: string, seed: number, nullRate: number): Promise<Stats> {
  const stats = newStats();
  const failures: string[] = [];
  const seeds = ONLY !== undefined ? [Number(ONLY)] : Array.from({ length: CASES }, (_, i) => (seed + i) >>> 0);
  for (let i = 0; i < seeds.length && failures.length < 3; i += BATCH) {
    const cases = seeds.slice(i, i + BATCH).map((s) => generateCase(s));
    const rows = generateRows(new Rng(seeds[i]! ^ 0x5bd1e995), ROWS, nullRate);
    failures.push(...(await checkBatch(dbs, cases, rows, stats)));
  }
  const line = `${label}: base seed ${seed}: ${stats.cases} cases x ${ROWS} rows; ${stats.filters} filters, ${stats.always} always, ${stats.never} never, ${stats.truncated} truncated, ${stats.superset} superset-only, ${stats.inexpressible} inexpressible, ${stats.variableExact} of ${stats.variableCases} reading variables exact; ${stats.selected} matching (case, row) pairs, ${stats.failed} failing; tables: ${stats.routingTables} routing, ${stats.firstTables} first, ${stats.collectTables} collect, ${stats.tableExact} of ${stats.tableCases} exact; ${stats.data} reference data, ${stats.dates} dates, ${stats.dateInexpressible} date of a column inexpressible`;
  console.log(line);
  assert.equal(failures.length, 0, `${line}\nreplay with FILTER_PROPERTY_SEED=${seed}\n\n${failures.slice(0, 3).join('\n\n')}`);
  return stats;
}

test('rows without NULLs: PostgreSQL, MariaDB, SQLite, mingo and the predicate tree select exactly the engine rows', async () => {
  const stats = await run('non-null rows', BASE_SEED, 0);
  if (ONLY === undefined) {
    assert.ok(stats.filters > stats.cases / 4, 'most cases should need a real filter');
    assert.ok(stats.always > 0 && stats.never > 0, 'always and never outcomes both occur');
    assert.ok(stats.failed > 0, 'rows on which execution fails occur (EXTENSIONS.md 6)');
    assert.ok(stats.inexpressible <= stats.cases / 100, `at most 1% of the cases may be inexpressible (${stats.inexpressible})`);
    // EXTENSIONS.md 3: variables are substituted, so nearly every case that reads them is exact
    // (about 98%; untracked, as before, about half of them were).
    assert.ok(
      stats.variableExact >= stats.variableCases * 0.9,
      `most cases reading variables should be exact (${stats.variableExact} of ${stats.variableCases})`,
    );
    assertFeatures(stats);
  }
});

test('rows with NULLs: tree and mingo exact; SQL selects what the NULL semantics of docs/filter.md predict', async () => {
  const stats = await run('rows with NULLs', (BASE_SEED + 0x9e3779b9) >>> 0, 0.25);
  if (ONLY === undefined) assertFeatures(stats);
});

/**
 * Issue 19: the generated rulesets really exercise tables, reference data and dates (each in a
 * meaningful share of the answered cases), most table cases are exact, and few are
 * inexpressible for a date function of the unknown date column.
 */
function assertFeatures(stats: Stats): void {
  const share = (n: number, min: number, what: string): void =>
    assert.ok(n >= stats.cases * min, `${what}: ${n} of ${stats.cases} cases (want >= ${min * 100}%)`);
  // NOTE: each minimum is about half the share the generator gives, so that a seed's binomial
  // spread never fails the run (a minimum 1.8 standard deviations under the mean failed one seed
  // in thirty: FILTER_PROPERTY_SEED=141852212 gave 54 first-set tables of 1500 against 60).
  share(stats.routingTables, 0.05, 'routing tables');
  share(stats.firstTables, 0.02, 'first set tables');
  share(stats.collectTables, 0.005, 'collect set tables');
  share(stats.data, 0.08, 'reference data');
  share(stats.dates, 0.08, 'dates');
  assert.ok(stats.tableExact >= stats.tableCases * 0.8, `most table cases should be exact (${stats.tableExact} of ${stats.tableCases})`);
  assert.ok(stats.dateInexpressible <= stats.cases * 0.03, `few cases may be inexpressible for a date of a column (${stats.dateInexpressible})`);
}
