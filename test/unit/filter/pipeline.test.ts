/**
 * Properties of the filter pipeline that golden cases cannot show: the filter state owned by the
 * compiled ruleset, the filter's own errors, the work limit, deterministic output, and that
 * src/filter stays pure (no node:* module, no module-level caches, no service import).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FilterError, MAX_DEPTH, MAX_VISITS, generateFilter, parseFilterRequest } from '../../../src/filter/index.js';
import { KNOWN_MAX, prepare } from '../../../src/filter/prepare.js';
import { compileRuleset, type CompiledRuleset, type RulesetDoc } from '../../../src/ruleset/index.js';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../../src/filter');

function compiled(d: RulesetDoc = doc()): CompiledRuleset {
  return compileRuleset(d);
}

function doc(): RulesetDoc {
  return {
    config: { name: 'p', entry_step: 'd' },
    steps: {
      d: {
        type: 'decision',
        branches: [
          { condition: 'age >= 18 && country in ["US", "CA"]', next_step: 'ok' },
          { condition: 'contains(name, "x")', next_step: 'ok' },
        ],
        default_next: 'no',
      },
      ok: { type: 'terminal', result: { code: 'OK' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
}

/** `n` decisions in a row, each with two ways to the next step: 2^n paths, all ending in OK. */
function diamonds(n: number): RulesetDoc {
  const steps: RulesetDoc['steps'] = { ok: { type: 'terminal', result: { code: 'OK' } } };
  for (let i = 0; i < n; i++) {
    const next = i === n - 1 ? 'ok' : `d${i + 1}`;
    steps[`d${i}`] = { type: 'decision', branches: [{ condition: `x${i} == 1`, next_step: next }], default_next: next };
  }
  return { config: { name: 'diamonds', entry_step: 'd0' }, steps };
}

test('the filter state is owned by the compiled ruleset and reused by every filter call on it', () => {
  const c = compiled();
  const first = prepare(c);
  assert.equal(prepare(c), first, 'same compiled value → same filter state');
  assert.equal(first.compiled, c);
  generateFilter(c, parseFilterRequest({ known_input: {}, target_results: ['OK'] }));
  assert.equal(prepare(c), first, 'generateFilter uses the state of the compiled value');
  const step = c.steps.get('d');
  assert.ok(step?.type === 'decision');
  const branch = step.branches[0]!;
  const condition = first.sharedConditions.get(branch);
  assert.ok(condition !== undefined, 'a condition reading no known field is kept on the compiled value');
  generateFilter(c, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'json' }));
  assert.equal(first.sharedConditions.get(branch), condition, 'the second filter call reuses the cached condition object');
  assert.notEqual(prepare(compiled()), first, 'another compiled value (of an equal document) has its own state');
});

test('conditions that read known fields are memoized by the values they read, bounded, never with now()', () => {
  const d: RulesetDoc = {
    config: { name: 'k', entry_step: 'd' },
    steps: {
      d: {
        type: 'decision',
        branches: [
          { condition: 'amount > limit', next_step: 'ok' },
          { condition: 'since < date_add(now(), -1, "days") && tier == "gold"', next_step: 'ok' },
        ],
      },
      ok: { type: 'terminal', result: { code: 'OK' } },
    },
  };
  const c = compileRuleset(d);
  const state = prepare(c);
  const step = c.steps.get('d');
  assert.ok(step?.type === 'decision');
  const [byLimit, byNow] = step.branches;
  const run = (known: Record<string, unknown>, now = '2026-01-01T00:00:00Z') =>
    generateFilter(c, parseFilterRequest({ known_input: known, target_results: ['OK'], format: 'json', now })).filter;
  run({ limit: 10, tier: 'gold' });
  const memo = state.knownConditions.get(byLimit!);
  assert.equal(memo?.size, 1, 'the condition reading a known field is kept by its value');
  const kept = [...memo.values()][0];
  run({ limit: 10, tier: 'silver' });
  assert.equal(memo.size, 1, 'another value of a field it does not read: the same entry');
  assert.equal([...memo.values()][0], kept, 'and the same predicate objects');
  run({ limit: 11, tier: 'gold' });
  assert.equal(memo.size, 2, 'another value it reads: another entry');
  assert.match(JSON.stringify(run({ limit: 11, tier: 'gold' })), /"field":"amount","value":11\}/, 'each answer has its own value');
  assert.match(JSON.stringify(run({ limit: 10, tier: 'gold' })), /"field":"amount","value":10\}/);
  for (let i = 0; i < KNOWN_MAX * 3; i++) run({ limit: 100 + i, tier: 'gold' });
  assert.ok(memo.size <= KNOWN_MAX, `bounded: ${memo.size} entries`);
  assert.equal(state.knownConditions.has(byNow!), false, 'a condition calling now() is never memoized');
  assert.notDeepEqual(
    run({ limit: 1, tier: 'gold' }, '2026-01-01T00:00:00Z'),
    run({ limit: 1, tier: 'gold' }, '2030-01-01T00:00:00Z'),
    "it follows each request's now",
  );
});

test("generateFilter and parseFilterRequest throw the filter's own FilterError", () => {
  const c = compiled();
  assert.throws(
    () => parseFilterRequest({ target_results: ['OK'] }),
    (err: unknown) => err instanceof FilterError && err.code === 'BAD_REQUEST' && err.message === 'known_input is required',
  );
  assert.throws(
    () => generateFilter(c, parseFilterRequest({ known_input: {}, target_results: ['OK'], field_mapping: { age: 'a; DROP TABLE t' } })),
    (err: unknown) =>
      err instanceof FilterError &&
      err.code === 'BAD_REQUEST' &&
      err.message.startsWith('unsafe column name "a; DROP TABLE t" for field \'age\'') &&
      err.details?.['field'] === 'age',
  );
  const arithmetic = compileRuleset({
    config: { name: 'a', entry_step: 'd' },
    steps: { d: { type: 'decision', branches: [{ condition: 'amount + 1 > 2', next_step: 'ok' }] }, ok: { type: 'terminal', result: { code: 'OK' } } },
  });
  assert.throws(
    () => generateFilter(arithmetic, parseFilterRequest({ known_input: {}, target_results: ['OK'] })),
    (err: unknown) => err instanceof FilterError && err.code === 'INEXPRESSIBLE' && err.message.startsWith('filter compilation failed: '),
  );
});

test('output is deterministic: same request, same bytes', () => {
  for (const format of ['sql', 'json', 'mongo']) {
    const req = parseFilterRequest({ known_input: {}, target_results: ['OK'], format });
    const a = JSON.stringify(generateFilter(compiled(), req));
    const b = JSON.stringify(generateFilter(compiled(), req));
    assert.equal(a, b);
  }
});

test('the walk stops at MAX_VISITS steps with truncated, even with max_paths 0', () => {
  assert.equal(MAX_DEPTH, 50);
  assert.ok(MAX_VISITS >= 10_000);
  const r = generateFilter(compiled(diamonds(24)), parseFilterRequest({ known_input: {}, target_results: ['OK'], max_paths: 0 }));
  assert.deepEqual(r, { format: 'sql', filter: 'TRUE', always_matches: true, never_matches: false, truncated: true, unknown_fields: [], exact: false });
});

test('many paths below the limits merge back into one answer', () => {
  // 2^8 = 256 paths, each a combination of x_i == 1 / x_i != 1: together they cover every row.
  const r = generateFilter(compiled(diamonds(8)), parseFilterRequest({ known_input: {}, target_results: ['OK'], max_paths: 0 }));
  assert.equal(r.always_matches, true);
  assert.equal(r.truncated, false);
});

test('src/filter imports no node:* module (pure)', () => {
  const files = readdirSync(SRC).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 5);
  for (const f of files) {
    const text = readFileSync(join(SRC, f), 'utf8');
    assert.doesNotMatch(text, /from\s+['"]node:/, f);
    assert.doesNotMatch(text, /require\(/, f);
    assert.doesNotMatch(text, /from\s+['"]\.\.\/service\//, `${f} imports the service layer`);
    // Derived state belongs to the compiled ruleset (prepare.ts) or to the predicate objects.
    assert.doesNotMatch(text, /new WeakMap\b/, `${f} keeps module-level derived state`);
  }
});

test('a compiled ruleset answers every request as a fresh one would (no leak between requests)', () => {
  const shared = compiled();
  const requests = [
    { known_input: {} },
    { known_input: { age: 30 } },
    { known_input: { age: 10, country: 'US' } },
    { known_input: {} },
    { known_input: { name: 'xyz' } },
    { known_input: { age: 30 } },
  ];
  for (const r of requests) {
    for (const format of ['sql', 'json', 'mongo']) {
      const body = { ...r, target_results: ['OK'], format };
      assert.deepEqual(generateFilter(shared, parseFilterRequest(body)), generateFilter(compiled(), parseFilterRequest(body)), JSON.stringify(body));
    }
  }
});

test('answers cached on a compiled ruleset follow each request: field_mapping, targets, format', () => {
  // The per-ruleset caches (SQL text of atoms per column, checked columns, live steps per target
  // set) must give what a fresh compiled ruleset gives, whatever came before.
  const shared = compiled();
  const requests = [
    { known_input: {}, target_results: ['OK'] },
    { known_input: {}, target_results: ['OK'], field_mapping: { age: 'person.age_years', country: 'c' } },
    { known_input: {}, target_results: ['OK'] },
    { known_input: {}, target_results: ['NO'] },
    { known_input: { name: 'axe' }, target_results: ['NO', 'OK'], field_mapping: { country: 'land' } },
    { known_input: {}, target_results: ['OK'], field_mapping: { age: 'select' } },
    { known_input: {}, target_results: ['OK'] },
  ];
  for (const r of requests) {
    for (const format of ['sql', 'json', 'mongo']) {
      const body = { ...r, format };
      const fresh = (): unknown => {
        try {
          return generateFilter(compiled(), parseFilterRequest(body));
        } catch (err) {
          return err instanceof FilterError ? `${err.code}: ${err.message}` : err;
        }
      };
      let got: unknown;
      try {
        got = generateFilter(shared, parseFilterRequest(body));
      } catch (err) {
        got = err instanceof FilterError ? `${err.code}: ${err.message}` : err;
      }
      assert.deepEqual(got, fresh(), JSON.stringify(body));
    }
  }
  const sql = generateFilter(shared, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'sql', field_mapping: { age: 't.years' } }));
  assert.match(sql.filter as string, /t\.years >= 18/);
  assert.doesNotMatch(sql.filter as string, /\bage\b/);
  const plain = generateFilter(shared, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'sql' }));
  assert.match(plain.filter as string, /\bage >= 18/);
});

test('an atom that occurs in many paths is written the same in each (sql, json, mongo)', () => {
  // Paths share their atoms (the negations of earlier branches); emitters write each once per
  // answer and reuse it. Each path of the answer must still carry every one of its conditions.
  const d: RulesetDoc = {
    config: { name: 'm', entry_step: 'a' },
    steps: {
      a: { type: 'decision', branches: [{ condition: 'x > 1', next_step: 'no' }], default_next: 'b' },
      b: { type: 'decision', branches: [{ condition: 'y == 1 && z == 1', next_step: 'ok' }], default_next: 'c' },
      c: { type: 'decision', branches: [{ condition: 'w == 2', next_step: 'ok' }], default_next: 'no' },
      ok: { type: 'terminal', result: { code: 'OK' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
  const c = compiled(d);
  const sql = generateFilter(c, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'sql' })).filter as string;
  assert.equal((sql.match(/x <= 1/g) ?? []).length, 2, sql);
  const json = generateFilter(c, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'json' }));
  const mongo = generateFilter(c, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'mongo' }));
  // Serialized, a reused node is written at each place.
  assert.equal((JSON.stringify(json.filter).match(/"field":"x"/g) ?? []).length, 2, JSON.stringify(json.filter));
  assert.equal((JSON.stringify(mongo.filter).match(/"x":/g) ?? []).length, 2, JSON.stringify(mongo.filter));
  assert.deepEqual(JSON.parse(JSON.stringify(json)), json);
});

test('texts cached per column map: a repeated request reuses its map; a NUL is refused on every call, cached or not', () => {
  const d: RulesetDoc = {
    config: { name: 'n', entry_step: 'a' },
    steps: {
      a: { type: 'decision', branches: [{ condition: 'name == "a\\u0000" && age > 1', next_step: 'no' }], default_next: 'b' },
      b: { type: 'decision', branches: [{ condition: 'w == 2', next_step: 'ok' }], default_next: 'c' },
      c: { type: 'decision', branches: [{ condition: 'v == 3', next_step: 'ok' }], default_next: 'no' },
      ok: { type: 'terminal', result: { code: 'OK' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
  const c = compiled(d);
  const sql = { known_input: {}, target_results: ['OK'], format: 'sql' };
  // The disjunction `name != "a\0" OR age <= 1` is in both paths: its text is cached on it after the
  // first answer; the NUL it holds must still refuse the second (and its json answer is fine).
  for (let i = 0; i < 3; i++) {
    assert.throws(
      () => generateFilter(c, parseFilterRequest(sql)),
      (err: unknown) => err instanceof FilterError && err.code === 'INEXPRESSIBLE' && /NUL/.test(err.message),
      `call ${i}`,
    );
  }
  assert.equal(generateFilter(c, parseFilterRequest({ ...sql, format: 'json' })).always_matches, false);
  // A known value with a NUL, in a condition memoized by its known values: a 400 on every call.
  const k = compiled({
    ...doc(),
    steps: { ...doc().steps, d: { type: 'decision', branches: [{ condition: 'name == k || age > 3', next_step: 'ok' }], default_next: 'no' } },
  });
  for (let i = 0; i < 3; i++) {
    assert.throws(
      () => generateFilter(k, parseFilterRequest({ known_input: { k: 'x\u0000' }, target_results: ['OK'], format: 'sql' })),
      (err: unknown) => err instanceof FilterError && err.code === 'BAD_REQUEST' && /known value at k/.test(err.message),
      `call ${i}`,
    );
  }
  // One column map object per set of fields without a mapping; a mapped request does not add one.
  const plain = compiled();
  const first = generateFilter(plain, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'sql' }));
  assert.equal(prepare(plain).columnMaps.size, 1);
  const mapped = generateFilter(plain, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'sql', field_mapping: { name: 't.full_name' } }));
  assert.match(mapped.filter as string, /t\.full_name LIKE/);
  assert.equal(prepare(plain).columnMaps.size, 1);
  assert.deepEqual(generateFilter(plain, parseFilterRequest({ known_input: {}, target_results: ['OK'], format: 'sql' })), first);
  assert.equal(prepare(plain).columnMaps.size, 1);
  // A disjunction shared by the paths (its text cached per column map) follows the mapping of each request.
  const shared = {
    ...d,
    steps: { ...d.steps, a: { type: 'decision' as const, branches: [{ condition: 'name == "a" && age > 1', next_step: 'no' }], default_next: 'b' } },
  };
  const s = compiled(shared);
  for (const field_mapping of [{}, { age: 'years' }, {}, { age: 'years', name: 'n' }, { age: 'years' }, {}]) {
    const body = { known_input: {}, target_results: ['OK'], format: 'sql', field_mapping };
    const got = generateFilter(s, parseFilterRequest(body));
    assert.match(got.filter as string, /\(name != 'a' OR age <= 1\)|\((n|name) != 'a' OR years <= 1\)/, JSON.stringify(body));
    assert.deepEqual(got, generateFilter(compiled(shared), parseFilterRequest(body)), JSON.stringify(body));
  }
});
