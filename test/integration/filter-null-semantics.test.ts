/**
 * The documented NULL behaviour of SQL filters (docs/filter.md "NULL columns"), checked in real
 * PostgreSQL, MariaDB and SQLite, with mingo and the engine alongside.
 *
 * SQL's three-valued logic makes an atom on a NULL column NULL (not selected), while the engine
 * reads null as a value: `null != 1` is true there. So exactly the negative conditions (`!=` a
 * value, `not in` a list without null, a negated ordering, a negated string test, `!= true`) can
 * miss rows whose column is NULL; every other condition agrees with the engine, and no condition
 * ever selects a NULL row the engine does not. Mongo agrees with the engine in every row, for a
 * null value and for a missing field.
 *
 * Arithmetic on a NULL column fails in the engine (no code: the row is not selected,
 * EXTENSIONS.md 6); the filter's failure guard (`IS NOT NULL`) keeps the row out everywhere.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Query } from 'mingo';
import type { JsonValue } from '../../src/expr/ast.js';
import { generateFilter, parseFilterRequest, type FilterFormat } from '../../src/filter/index.js';
import { compileRuleset, execute, type RulesetDoc } from '../../src/ruleset/index.js';
import { FilterDatabases } from '../helpers/filter/databases.js';

/** [condition, engine selects the NULL row, SQL selects the NULL row]. */
const TABLE: readonly [string, boolean, boolean][] = [
  ['n == 1', false, false],
  ['n != 1', true, false],
  ['n > 1', false, false],
  ['n <= 1', false, false],
  ['!(n > 1)', true, false],
  ['!(n <= 1)', true, false],
  ['n in [1, 2]', false, false],
  ['n not in [1, 2]', true, false],
  ['!(n in [1, 2])', true, false],
  ['n in [1, null]', true, true],
  ['n not in [1, null]', false, false],
  ['n == null', true, true],
  ['is_null(n)', true, true],
  ['n != null', false, false],
  ['!is_null(n)', false, false],
  ['s == "a"', false, false],
  ['s != "a"', true, false],
  ['s < "m"', false, false],
  ['contains(s, "a")', false, false],
  ['!contains(s, "a")', true, false],
  ['starts_with(s, "a")', false, false],
  ['!starts_with(s, "a")', true, false],
  ['ends_with(s, "a")', false, false],
  ['!ends_with(s, "a")', true, false],
  ['"a" in s', false, false],
  ['"a" not in s', true, false],
  ['b', false, false],
  ['!b', true, true],
  ['b == true', false, false],
  ['b != true', true, false],
  ['b == false', false, false],
  ['n != 1 || s == "a"', true, false],
  ['n == 1 || s != "zzz"', true, false],
  ['!(n > 1) && is_null(s)', true, false],
  ['is_null(n) || n > 5', true, true],
  ['!b && s == null', true, true],
  // Failing on the NULL row: the guard excludes it even where the rest is true.
  ['100 / n > 3.75 || true', false, false],
  ['n % 2 == 1 || 1 == 1', false, false],
  ['(-n < 0 || true) && s == null', false, false],
];

const COLUMNS = [
  { name: 'n', type: 'number' },
  { name: 's', type: 'string' },
  { name: 'b', type: 'boolean' },
] as const;

/** Row 0: every column NULL; row 1: non-null values. Only row 0 is asserted on here. */
const ROWS: { id: number; values: Map<string, JsonValue> }[] = [
  {
    id: 0,
    values: new Map<string, JsonValue>([
      ['n', null],
      ['s', null],
      ['b', null],
    ]),
  },
  {
    id: 1,
    values: new Map<string, JsonValue>([
      ['n', 2],
      ['s', 'abc'],
      ['b', true],
    ]),
  },
];

let dbs: FilterDatabases;

before(async () => {
  dbs = await FilterDatabases.open(COLUMNS);
  await dbs.load(ROWS);
});

after(async () => {
  await dbs?.close();
});

function ruleset(condition: string): RulesetDoc {
  return {
    config: { name: 'nulls', entry_step: 'd' },
    steps: {
      d: { type: 'decision', branches: [{ condition, next_step: 'yes' }], default_next: 'no' },
      yes: { type: 'terminal', result: { code: 'YES' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
}

function filterOf(doc: RulesetDoc, format: FilterFormat): unknown {
  return generateFilter(compileRuleset(doc), parseFilterRequest({ known_input: {}, target_results: ['YES'], format })).filter;
}

for (const [condition, engineSelects, sqlSelects] of TABLE) {
  test(`NULL column: ${condition} — engine ${engineSelects ? 'selects' : 'skips'}, SQL ${sqlSelects ? 'selects' : 'skips'}`, async () => {
    const doc = ruleset(condition);
    const input = Object.fromEntries(ROWS[0]!.values);
    let code: string | null = null;
    try {
      code = execute(compileRuleset(doc), input, { clock: () => 0, timeoutMs: 0, maxSteps: 100 }).code;
    } catch {
      // An execution error yields no code: the row is not selected.
    }
    assert.equal(code === 'YES', engineSelects, 'engine');

    const sql = filterOf(doc, 'sql') as string;
    const [pgRows] = await dbs.selectPg([sql]);
    assert.ok(pgRows instanceof Set, `PostgreSQL failed on ${sql}`);
    assert.equal(pgRows.has(0), sqlSelects, `PostgreSQL: ${sql}`);
    const liteRows = dbs.selectSqlite(sql);
    assert.ok(liteRows instanceof Set, `SQLite failed on ${sql}`);
    assert.equal(liteRows.has(0), sqlSelects, `SQLite: ${sql}`);
    const [mariaRows] = await dbs.selectMaria([sql]);
    assert.ok(mariaRows instanceof Set, `MariaDB failed on ${sql}`);
    assert.equal(mariaRows.has(0), sqlSelects, `MariaDB: ${sql}`);
    // SQL never selects a NULL row the engine skips.
    if (!engineSelects) assert.equal(sqlSelects, false);

    const mongo = new Query(filterOf(doc, 'mongo') as Record<string, unknown>);
    assert.equal(mongo.test({ n: null, s: null, b: null }), engineSelects, 'mingo, null values');
    assert.equal(mongo.test({}), engineSelects, 'mingo, missing fields');
  });
}
