/**
 * Escaping, proven on arbitrary text (fast-check): a quoted SQL string literal reads back as the
 * same text in SQLite, PostgreSQL and MariaDB (with `NO_BACKSLASH_ESCAPES`, docs/filter.md); a
 * LIKE pattern built for contains / starts_with / ends_with matches exactly when the engine's
 * function is true (SQLite, PostgreSQL, MariaDB); the Mongo
 * `$regex` text matches exactly when the engine's function is true (JavaScript RegExp, mingo).
 * Strings mix every special character (quotes, `!`, `%`, `_`, backslash, regex metacharacters,
 * newlines) with arbitrary Unicode (no NUL: PostgreSQL text cannot hold it).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { Query } from 'mingo';
import { callFunction } from '../../src/expr/index.js';
import { likePattern, regexPattern, sqlString } from '../../src/filter/escape.js';
import { FilterDatabases } from '../helpers/filter/databases.js';

type Kind = 'contains' | 'starts_with' | 'ends_with';

const SPECIAL = ["'", '"', '%', '_', '!', '\\', '.', '*', '+', '?', '^', '$', '(', ')', '[', ']', '{', '}', '|', '/', '-', '\n', '\t', ' ', 'a', 'b', 'A'];
const char = fc.oneof(
  fc.constantFrom(...SPECIAL),
  fc.fullUnicode().filter((c) => c !== '\0'),
);
const text = fc.array(char, { maxLength: 8 }).map((cs) => cs.join(''));
const kind = fc.constantFrom<Kind>('contains', 'starts_with', 'ends_with');
/** A haystack that often contains the needle. */
const pair = fc.tuple(text, text, text, fc.boolean(), kind).map(([needle, pre, post, embed, k]) => ({
  needle,
  haystack: embed ? pre + needle + post : pre,
  kind: k,
}));

const RUNS = Number(process.env['FILTER_ESCAPE_RUNS'] ?? 2000);

let sqlite: Database.Database;
let dbs: FilterDatabases;

before(async () => {
  sqlite = new Database(':memory:');
  sqlite.pragma('case_sensitive_like = ON');
  dbs = await FilterDatabases.open([{ name: 'x', type: 'string' }]);
});

after(async () => {
  sqlite?.close();
  await dbs?.close();
});

function engine(k: Kind, haystack: string, needle: string): boolean {
  return callFunction(k, [haystack, needle]) === true;
}

test('SQL string literals read back unchanged (SQLite)', () => {
  fc.assert(
    fc.property(text, (s) => {
      const row = sqlite.prepare(`SELECT ${sqlString(s)} AS v`).get() as { v: string };
      assert.equal(row.v, s);
    }),
    { numRuns: RUNS },
  );
});

test('LIKE patterns match exactly the engine string tests (SQLite)', () => {
  fc.assert(
    fc.property(pair, ({ needle, haystack, kind: k }) => {
      const row = sqlite.prepare(`SELECT ${sqlString(haystack)} LIKE ${likePattern(k, needle)} ESCAPE '!' AS m`).get() as { m: number };
      assert.equal(row.m === 1, engine(k, haystack, needle));
    }),
    { numRuns: RUNS },
  );
});

test('regex patterns match exactly the engine string tests (RegExp and mingo)', () => {
  fc.assert(
    fc.property(pair, ({ needle, haystack, kind: k }) => {
      const want = engine(k, haystack, needle);
      assert.equal(new RegExp(regexPattern(k, needle)).test(haystack), want);
      assert.equal(new Query({ x: { $regex: regexPattern(k, needle) } }).test({ x: haystack }), want);
    }),
    { numRuns: RUNS },
  );
});

test('string literals and LIKE patterns in PostgreSQL (one batched query)', async () => {
  const samples = fc.sample(pair, { numRuns: RUNS, seed: Number(process.env['FILTER_PROPERTY_SEED'] ?? Date.now() % 2 ** 31) });
  // One VALUES list (a UNION of thousands of SELECTs takes PostgreSQL seconds to plan).
  const values = samples.map(({ needle, haystack, kind: k }, i) => `(${i}, ${sqlString(haystack)}, ${likePattern(k, needle)})`).join(',\n');
  const sql = `SELECT i, v, v LIKE p ESCAPE '!' AS m FROM (VALUES ${values}) AS samples(i, v, p)`;
  const res = await dbs.pg.query<{ i: number; v: string; m: boolean }>(sql);
  assert.equal(res.rows.length, samples.length);
  for (const r of res.rows) {
    const s = samples[r.i]!;
    assert.equal(r.v, s.haystack, `literal ${JSON.stringify(s.haystack)}`);
    assert.equal(r.m, engine(s.kind, s.haystack, s.needle), `${s.kind}(${JSON.stringify(s.haystack)}, ${JSON.stringify(s.needle)})`);
  }
});

test('string literals and LIKE patterns in MariaDB with NO_BACKSLASH_ESCAPES (one batched query)', async () => {
  const samples = fc.sample(pair, { numRuns: RUNS, seed: Number(process.env['FILTER_PROPERTY_SEED'] ?? Date.now() % 2 ** 31) });
  const rows = samples
    .map(({ needle, haystack, kind: k }, i) => `SELECT ${i} AS i, ${sqlString(haystack)} AS v, ${likePattern(k, needle)} AS p`)
    .join('\nUNION ALL\n');
  const [res] = await dbs.maria.query(`SELECT i, v, v LIKE p ESCAPE '!' AS m FROM (${rows}) AS samples`);
  const out = res as { i: number; v: string; m: number }[];
  assert.equal(out.length, samples.length);
  for (const r of out) {
    const s = samples[Number(r.i)]!;
    assert.equal(r.v, s.haystack, `literal ${JSON.stringify(s.haystack)}`);
    assert.equal(r.m === 1, engine(s.kind, s.haystack, s.needle), `${s.kind}(${JSON.stringify(s.haystack)}, ${JSON.stringify(s.needle)})`);
  }
});
