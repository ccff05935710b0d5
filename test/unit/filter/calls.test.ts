/**
 * Filters through call steps (EXTENSIONS.md 3 "Calling another ruleset", src/filter/planner.ts
 * and call-input.ts): the callee is walked with the caller, so conditions on the callee's fields
 * and on `$result` (its code and outputs) become conditions on the caller's columns.
 *
 * Every case is checked against the engine: for each row of a small grid, `execute` with the
 * same callee resolver is the truth, and the predicate tree (json format) must select exactly
 * those rows when the answer says `exact` (a superset otherwise).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonValue } from '../../../src/expr/ast.js';
import { generateFilter, parseFilterRequest, type FilterResponse, type JsonFilterNode } from '../../../src/filter/index.js';
import { mappedCallee } from '../../../src/filter/call-input.js';
import { prepare } from '../../../src/filter/prepare.js';
import { newExprMemo, partialEval, type KnownInput } from '../../../src/filter/partial-eval.js';
import { VarEnv, knownWith } from '../../../src/filter/variables.js';
import { parse } from '../../../src/expr/index.js';
import { compileRuleset, execute, type CallInfo, type CompiledRuleset, type RulesetDoc } from '../../../src/ruleset/index.js';
import { setPath } from '../../helpers/filter/gen-case.js';
import { evalTree } from '../../helpers/filter/tree-eval.js';

type Row = Record<string, JsonValue>;

/** The rows of every combination of `values` per field path (a field absent where the value is undefined). */
function grid(values: Record<string, readonly (JsonValue | undefined)[]>): Row[] {
  let rows: Row[] = [{}];
  for (const [path, vs] of Object.entries(values)) {
    rows = rows.flatMap((r) =>
      vs.map((v) => {
        if (v === undefined) return r;
        return { ...r, [path]: v };
      }),
    );
  }
  return rows;
}

function resolver(docs: readonly RulesetDoc[]): (name: string) => CompiledRuleset | undefined {
  const byName = new Map(docs.map((d) => [d.config.name, compileRuleset(d)]));
  return (name) => byName.get(name);
}

interface Run {
  readonly response: FilterResponse;
  readonly selected: number;
  readonly truth: number;
}

/**
 * Generates the json filter of `caller` (callees `callees`) for `targets` and compares it with the
 * engine on `rows` (their fields unknown, `known` merged in). Exact answers must select exactly
 * the truth rows, inexact ones a superset.
 */
function check(
  caller: RulesetDoc,
  callees: readonly RulesetDoc[],
  rows: readonly Row[],
  opts: { targets?: string[]; known?: Row; noResolver?: boolean } = {},
): Run {
  const compiled = compileRuleset(caller);
  const calls = opts.noResolver === true ? undefined : resolver(callees);
  const targets = opts.targets ?? ['MATCH'];
  const known = opts.known ?? {};
  const response = generateFilter(compiled, parseFilterRequest({ known_input: known, target_results: targets, format: 'json' }), calls);
  let selected = 0;
  let truth = 0;
  for (const row of rows) {
    const input = structuredClone(known) as Record<string, JsonValue>;
    for (const [p, v] of Object.entries(row)) setPath(input, p, v);
    let want = false;
    try {
      want = targets.includes(execute(compiled, input, { clock: () => 0, timeoutMs: 0, maxSteps: 1000, ...(calls ? { calls } : {}) }).code);
    } catch {
      want = false; // a failing execution yields no code
    }
    const column = (c: string): JsonValue => {
      const path = Object.keys(row).find((p) => p.replaceAll('.', '_') === c);
      return path === undefined ? null : row[path]!;
    };
    const got = response.always_matches ? true : response.never_matches ? false : evalTree(response.filter as JsonFilterNode, column, 'engine');
    if (want) truth++;
    if (got) selected++;
    const label = `row ${JSON.stringify(row)}: filter ${JSON.stringify(response.filter)}`;
    if (response.exact) assert.equal(got, want, label);
    else if (want) assert.ok(got, `superset: ${label}`);
  }
  return { response, selected, truth };
}

const match = (condition: string): RulesetDoc['steps'] => ({
  d: { type: 'decision', branches: [{ condition, next_step: 'm' }], default_next: 'n' },
  m: { type: 'terminal', result: { code: 'MATCH' } },
  n: { type: 'terminal', result: { code: 'NO' } },
});

/** A caller: call `ruleset` (with `input` when given) into `$r`, then `condition` decides. */
function caller(ruleset: string, condition: string, input?: Record<string, string>, fieldMissing?: 'strict'): RulesetDoc {
  return {
    config: { name: 'caller', entry_step: 'c', ...(fieldMissing ? { field_missing: fieldMissing } : {}) },
    steps: {
      c: { type: 'call', ruleset, ...(input ? { input } : {}), result: 'r', next_step: 'd' },
      ...match(condition),
    },
  };
}

/** A callee `name`: `condition` → HIGH (with `output`), else LOW. */
function callee(name: string, condition: string, output?: Record<string, string>, fieldMissing?: 'strict'): RulesetDoc {
  return {
    config: { name, entry_step: 'd', ...(fieldMissing ? { field_missing: fieldMissing } : {}) },
    steps: {
      d: { type: 'decision', branches: [{ condition, next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH', message: 'high risk' }, ...(output ? { output } : {}) },
      low: { type: 'terminal', result: { code: 'LOW' }, ...(output ? { output } : {}) },
    },
  };
}

test("without an input mapping the callee reads the caller's fields; its code becomes a condition", () => {
  const r = check(caller('risk', '$r.code == "HIGH"'), [callee('risk', 'amount > 100')], grid({ amount: [50, 100, 150, null] }));
  assert.deepEqual(r.response.filter, { type: 'gt', field: 'amount', value: 100 });
  assert.equal(r.response.exact, true);
  assert.ok(r.truth > 0);
  // The other code, and the message of the result.
  const low = check(caller('risk', '$r.code == "LOW" && $r.message == ""'), [callee('risk', 'amount > 100')], grid({ amount: [50, 150, null] }));
  assert.equal(low.response.exact, true);
  assert.ok(low.truth > 0 && low.truth < 3);
  const msg = check(caller('risk', '$r.message == "high risk"'), [callee('risk', 'amount > 100')], grid({ amount: [50, 150] }));
  assert.deepEqual(msg.response.filter, { type: 'gt', field: 'amount', value: 100 });
});

test('with an input mapping the arguments are substituted into the callee', () => {
  const r = check(
    caller('risk', '$r.code == "HIGH"', { amt: 'order.total', country: 'user.country' }),
    [callee('risk', 'amt > 100 && country == "US"')],
    grid({ 'order.total': [50, 150, null], 'user.country': ['US', 'FR', null] }),
  );
  assert.equal(r.response.exact, true);
  assert.deepEqual(r.response.filter, {
    type: 'and',
    conditions: [
      { type: 'gt', field: 'order_total', value: 100 },
      { type: 'eq', field: 'user_country', value: 'US' },
    ],
  });
  // An argument computed by an expression: its residual is substituted.
  const computed = check(
    caller('risk', '$r.code == "HIGH"', { level: 'if vip then 2 else 1' }),
    [callee('risk', 'level >= 2')],
    grid({ vip: [true, false, null] }),
  );
  assert.equal(computed.response.exact, true);
  assert.equal(computed.truth, 1);
});

test('a mapped argument known in the request folds; an unmapped key is missing in the callee', () => {
  const folded = check(
    caller('risk', '$r.code == "HIGH"', { amt: 'order.total', x: 'score' }),
    [callee('risk', 'amt > 100 && x > 1')],
    grid({ score: [0, 5, null] }),
    { known: { order: { total: 500 } } },
  );
  assert.deepEqual(folded.response.filter, { type: 'gt', field: 'score', value: 1 });
  const small = check(caller('risk', '$r.code == "HIGH"', { amt: 'order.total' }), [callee('risk', 'amt > 100')], grid({ score: [0] }), {
    known: { order: { total: 5 } },
  });
  assert.equal(small.response.never_matches, true);
  // `amount` is not a key of the callee's input, although the caller's input has it: null (lenient).
  const unmapped = check(
    caller('risk', '$r.code == "HIGH"', { amt: 'order.total' }),
    [callee('risk', 'amount == null && amt > 1')],
    grid({ amount: [5, null], 'order.total': [0, 5] }),
  );
  assert.deepEqual(unmapped.response.filter, { type: 'gt', field: 'order_total', value: 1 });
  assert.equal(unmapped.truth, 2);
});

test('a nested path below a mapped input path reads the caller field below it', () => {
  const r = check(
    caller('risk', '$r.code == "HIGH"', { o: 'order' }),
    [callee('risk', 'exists(o) && o.amount > 10 && o.coupon == null')],
    grid({ 'order.amount': [5, 20, null, undefined], 'order.coupon': ['X', undefined] }),
  );
  assert.equal(r.response.exact, true);
  assert.deepEqual(r.response.filter, {
    type: 'and',
    conditions: [
      { type: 'gt', field: 'order_amount', value: 10 },
      { type: 'is_null', field: 'order_coupon' },
    ],
  });
  // `exists(o)` holds even when the caller has no `order`: the callee's input has the key (null).
  const always = check(caller('risk', '$r.code == "HIGH"', { o: 'order' }), [callee('risk', 'exists(o)')], grid({ 'order.amount': [5, undefined] }));
  assert.equal(always.response.always_matches, true);
  assert.equal(always.response.exact, true);
});

test("the callee's outputs are read by the caller: known ones fold, residual ones are substituted", () => {
  const tiers = callee('risk', 'amount > 100', { tier: 'if vip then "gold" else "std"', limit: '500', amount: 'amount' });
  const tier = check(caller('risk', '$r.output.tier == "gold" && $r.output.limit == 500'), [tiers], grid({ amount: [50, 150], vip: [true, false, null] }));
  assert.equal(tier.response.exact, true);
  assert.equal(tier.response.unknown_fields.join(','), 'vip');
  assert.equal(tier.truth, 2);
  const passed = check(caller('risk', '$r.code == "HIGH" && $r.output.amount < 120'), [tiers], grid({ amount: [50, 110, 150, null] }));
  assert.equal(passed.response.exact, true);
  assert.equal(passed.truth, 1);
  // An output key the callee does not return is null (lenient), a failure (strict).
  const none = check(caller('risk', '$r.output.nothing == null && amount > 1'), [tiers], grid({ amount: [0, 5, 150] }));
  assert.equal(none.response.exact, true);
  assert.equal(none.truth, 2);
  assert.equal(none.selected, 2);
  const strictCaller = {
    ...caller('risk', '$r.output.nothing == null || amount > 1'),
    config: { name: 'caller', entry_step: 'c', field_missing: 'strict' as const },
  };
  const failing = check(strictCaller, [tiers], grid({ amount: [0, 5] }));
  assert.equal(failing.response.never_matches, true);
});

test('reading a whole result with a residual inside falls back to untracked (not exact, a superset)', () => {
  const tiers = callee('risk', 'amount > 100', { tier: 'if vip then "gold" else "std"' });
  const r = check(caller('risk', 'len($r.output) == 1 && $r.output.tier.x == null && amount > 5'), [tiers], grid({ amount: [0, 150], vip: [true, false] }));
  assert.equal(r.response.exact, false);
  assert.ok(r.selected >= r.truth);
});

test('a missing callee (or no resolver) ends the path: never matches, exact', () => {
  const missing = check(caller('nowhere', '$r.code == "HIGH"'), [], grid({ amount: [1] }));
  assert.equal(missing.response.never_matches, true);
  assert.equal(missing.response.exact, true);
  const noResolver = check(caller('risk', 'true'), [callee('risk', 'amount > 100')], grid({ amount: [1] }), { noResolver: true });
  assert.equal(noResolver.response.never_matches, true);
  // Only the paths through the call end: another path still matches.
  const doc: RulesetDoc = {
    config: { name: 'caller', entry_step: 'split' },
    steps: {
      split: { type: 'decision', branches: [{ condition: 'vip', next_step: 'm' }], default_next: 'c' },
      c: { type: 'call', ruleset: 'nowhere', result: 'r', next_step: 'm' },
      m: { type: 'terminal', result: { code: 'MATCH' } },
    },
  };
  const partly = check(doc, [], grid({ vip: [true, false, null] }));
  assert.equal(partly.response.exact, true);
  assert.deepEqual(partly.response.unknown_fields, ['vip']);
  assert.equal(partly.truth, 1);
});

test('calls nest: three deep, each mapping its input', () => {
  const a = caller('b', '$r.output.ok == true', { x: 'order.amount', y: 'country' });
  const b: RulesetDoc = {
    config: { name: 'b', entry_step: 'c' },
    steps: {
      c: { type: 'call', ruleset: 'c', input: { v: 'x', eu: 'y in ["FR", "DE"]' }, result: 'inner', next_step: 't' },
      t: { type: 'terminal', result: { code: 'DONE' }, output: { ok: '$inner.code == "BIG" && $inner.output.eu' } },
    },
  };
  const c: RulesetDoc = {
    config: { name: 'c', entry_step: 'c' },
    steps: {
      c: { type: 'call', ruleset: 'd', input: { w: 'v' }, result: 'deep', next_step: 't' },
      t: { type: 'terminal', result: { code: 'SMALL' }, output: { eu: 'eu' } },
    },
  };
  // `c` goes to SMALL, but `d` decides through it: rewrite c to branch on `$deep`.
  c.steps['t'] = { type: 'decision', branches: [{ condition: '$deep.code == "HIGH"', next_step: 'big' }], default_next: 'small' };
  c.steps['big'] = { type: 'terminal', result: { code: 'BIG' }, output: { eu: 'eu' } };
  c.steps['small'] = { type: 'terminal', result: { code: 'SMALL' }, output: { eu: 'eu' } };
  const d = callee('d', 'w > 100');
  const r = check(a, [b, c, d], grid({ 'order.amount': [50, 150, null], country: ['FR', 'US', null] }));
  assert.equal(r.truth, 1);
  assert.equal(r.response.exact, true);
  assert.equal(r.response.unknown_fields.join(','), 'country,order.amount');
});

test('a call deeper than the engine allows ends the path (CALL_FAILED)', () => {
  const chain: RulesetDoc[] = [];
  for (let i = 1; i <= 9; i++) {
    chain.push({
      config: { name: `r${i}`, entry_step: 'c' },
      steps: { c: { type: 'call', ruleset: `r${i + 1}`, result: 'x', next_step: 't' }, t: { type: 'terminal', result: { code: 'OK' } } },
    });
  }
  chain.push(callee('r10', 'amount > 1'));
  // caller → r1 … r8: 9 calls nest below the limit of 8 only up to r8; r9's call of r10 fails.
  const deep = check(caller('r1', 'true'), chain, grid({ amount: [0, 5] }));
  assert.equal(deep.response.never_matches, true);
  assert.equal(deep.truth, 0);
  // Seven calls below the caller still run.
  const shallow = check(caller('r4', '$r.code == "OK" && amount > 1'), chain, grid({ amount: [0, 5] }));
  assert.equal(shallow.truth, 1);
  assert.deepEqual(shallow.response.filter, { type: 'gt', field: 'amount', value: 1 });
});

test('a strict callee fails where it reads a missing key of its input; a lenient one reads null', () => {
  const strict = check(
    caller('risk', 'true', { amount: 'amount' }),
    [callee('risk', 'other == null || amount > 5', undefined, 'strict')],
    grid({ amount: [1, 10], other: [1, null] }),
  );
  assert.equal(strict.response.never_matches, true);
  assert.equal(strict.truth, 0);
  const lenient = check(
    caller('risk', 'true', { amount: 'amount' }),
    [callee('risk', 'other == null || amount > 5')],
    grid({ amount: [1, 10], other: [1, null] }),
  );
  assert.equal(lenient.response.always_matches, true);
  // Without a mapping a strict callee reads the caller's fields (typed columns: no failure).
  const plain = check(caller('risk', '$r.code == "HIGH"'), [callee('risk', 'amount > 5', undefined, 'strict')], grid({ amount: [1, 10] }));
  assert.deepEqual(plain.response.filter, { type: 'gt', field: 'amount', value: 5 });
});

test("a call in a loop: each call has fresh variables, the callee's never leak into the next call", () => {
  const loop: RulesetDoc = {
    config: { name: 'caller', entry_step: 'init' },
    steps: {
      init: { type: 'action', actions: [{ action: 'set_variable', name: 'i', value: '0' }], next_step: 'c' },
      c: { type: 'call', ruleset: 'once', input: { n: '$i', amount: 'amount' }, result: 'r', next_step: 'leak' },
      leak: { type: 'decision', branches: [{ condition: '$r.code == "LEAK"', next_step: 'no' }], default_next: 'inc' },
      inc: { type: 'action', actions: [{ action: 'set_variable', name: 'i', value: '$i + 1' }], next_step: 'again' },
      again: { type: 'decision', branches: [{ condition: '$i < 3', next_step: 'c' }], default_next: 'last' },
      last: { type: 'decision', branches: [{ condition: '$r.output.n == 2 && $r.output.big', next_step: 'm' }], default_next: 'no' },
      m: { type: 'terminal', result: { code: 'MATCH' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
  const once: RulesetDoc = {
    config: { name: 'once', entry_step: 'seen' },
    steps: {
      seen: { type: 'decision', branches: [{ condition: 'exists($seen) || exists($i)', next_step: 'leak' }], default_next: 'set' },
      set: { type: 'action', actions: [{ action: 'set_variable', name: 'seen', value: 'true' }], next_step: 'ok' },
      ok: { type: 'terminal', result: { code: 'OK' }, output: { n: 'n', big: 'amount > 10 * n' } },
      leak: { type: 'terminal', result: { code: 'LEAK' } },
    },
  };
  const r = check(loop, [once], grid({ amount: [5, 15, 25, null] }));
  assert.deepEqual(r.response.filter, { type: 'gt', field: 'amount', value: 20 });
  assert.equal(r.response.exact, true);
  assert.equal(r.truth, 1);
});

test('a callee failure on a row (arithmetic on null, a failing output) leaves the row out', () => {
  const r = check(caller('risk', '$r.output.double > 10'), [callee('risk', 'true', { double: 'amount * 2' })], grid({ amount: [1, 10, null] }));
  assert.equal(r.truth, 1);
  assert.ok(r.response.exact || r.selected >= r.truth);
});

test('the rewritten callee is memoized per (call step, callee version) in the caller, not per request', () => {
  const callerC = compileRuleset(caller('risk', '$r.code == "HIGH"', { amt: 'order.total' }));
  const v1 = compileRuleset(callee('risk', 'amt > 100'));
  const v2 = compileRuleset(callee('risk', 'amt > 200'));
  const call = callerC.steps.get('c') as CallInfo;
  const sites = prepare(callerC).callSites;
  const req = parseFilterRequest({ known_input: {}, target_results: ['MATCH'], format: 'json' });
  assert.deepEqual(generateFilter(callerC, req, (n) => (n === 'risk' ? v1 : undefined)).filter, { type: 'gt', field: 'order_total', value: 100 });
  const first = sites.get(call);
  assert.equal(first?.callee, v1);
  generateFilter(callerC, parseFilterRequest({ known_input: { order: { total: 5 } }, target_results: ['MATCH'], format: 'json' }), (n) =>
    n === 'risk' ? v1 : undefined,
  );
  assert.equal(sites.get(call), first, 'built once for (call step, callee version)');
  assert.equal(
    mappedCallee(sites, call, v1, call.input!, 'lenient', () => false),
    first,
  );
  // A callee update takes effect for the caller's next filter at once, and replaces the entry.
  assert.deepEqual(generateFilter(callerC, req, (n) => (n === 'risk' ? v2 : undefined)).filter, { type: 'gt', field: 'order_total', value: 200 });
  assert.equal(sites.size, 1);
  assert.equal(sites.get(call)?.callee, v2);
});

test("a callee variable named like the reserved input variable does not clash with the callee's input", () => {
  const c: RulesetDoc = {
    config: { name: 'risk', entry_step: 's' },
    steps: {
      s: { type: 'action', actions: [{ action: 'set_variable', name: 'in', value: 'amt * 0 + 7' }], next_step: 'd' },
      d: { type: 'decision', branches: [{ condition: '$in == 7 && amt > 3', next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  };
  const r = check(caller('risk', '$r.code == "HIGH"', { amt: 'amount' }), [c], grid({ amount: [1, 5] }), { known: {} });
  assert.equal(r.truth, 1);
});

test('an object passed on through two calls keeps reading the caller field below it', () => {
  const a = caller('b', '$r.code == "HIGH"', { o: 'order' });
  const b: RulesetDoc = {
    config: { name: 'b', entry_step: 'c' },
    steps: {
      c: { type: 'call', ruleset: 'c', input: { deep: 'o' }, result: 'x', next_step: 'd' },
      d: { type: 'decision', branches: [{ condition: '$x.code == "HIGH"', next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  };
  const c = callee('c', 'deep.amount > 10 && deep.country == "FR"');
  // `order.level` is known: the object is partly known, its other fields are still columns.
  const r = check(a, [b, c], grid({ 'order.amount': [5, 20, null], 'order.country': ['FR', 'US'] }), { known: { order: { level: 1 } } });
  assert.equal(r.response.exact, true);
  assert.deepEqual(r.response.unknown_fields, ['order.amount', 'order.country']);
  assert.equal(r.truth, 1);
});

test('a strict callee passes on a partly known object: its unknown fields stay columns for the next callee', () => {
  // The caller evaluates `o` leniently, `b` is strict: where the known input holds `order`, it
  // cannot be missing, so `b` passes the caller's `order` on (its unknown fields are columns for
  // `c` too); where it does not, `b` passes its own input's value (no known fields).
  const a = caller('b', '$r.code == "HIGH"', { o: 'order' });
  const b: RulesetDoc = {
    config: { name: 'b', entry_step: 'c', field_missing: 'strict' },
    steps: {
      c: { type: 'call', ruleset: 'c', input: { deep: 'o' }, result: 'x', next_step: 'd' },
      d: { type: 'decision', branches: [{ condition: '$x.code == "HIGH"', next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  };
  const c = callee('c', 'deep.amount > 10 && deep.level == 1', { seen: 'deep.amount + 1' });
  const rows = grid({ 'order.amount': [5, 20, null] });
  const known = check(a, [b, c], rows, { known: { order: { level: 1 } } });
  assert.equal(known.response.exact, true);
  assert.deepEqual(known.response.unknown_fields, ['order.amount']);
  assert.equal(known.truth, 1);
  // The same compiled caller (its memo of b keyed by what the known input holds) for other requests.
  const compiled = compileRuleset(a);
  const calls = resolver([b, c]);
  for (const k of [{ order: { level: 1 } }, {}, { order: { level: 2 } }, { order: { level: 1 } }]) {
    const body = { known_input: k, target_results: ['MATCH'], format: 'json' };
    assert.deepEqual(
      generateFilter(compiled, parseFilterRequest(body), calls),
      generateFilter(compileRuleset(a), parseFilterRequest(body), calls),
      JSON.stringify(k),
    );
  }
});

test('a call without input inside a mapped callee passes the same input object on', () => {
  const a = caller('b', '$r.code == "HIGH"', { amt: 'order.total', o: 'order' });
  const b: RulesetDoc = {
    config: { name: 'b', entry_step: 'c' },
    steps: {
      c: { type: 'call', ruleset: 'c', result: 'x', next_step: 'd' },
      d: { type: 'decision', branches: [{ condition: '$x.code == "HIGH" && $x.output.seen > 120', next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  };
  // `c` reads the keys of b's input (amt, o), not the caller's fields (`amount` is not among them).
  const c = callee('c', 'amt > 100 && o.country == "FR" && amount == null', { seen: 'amt' });
  const r = check(a, [b, c], grid({ 'order.total': [50, 150, null], 'order.country': ['FR', 'US'], amount: [1, null] }));
  assert.equal(r.response.exact, true);
  assert.deepEqual(r.response.unknown_fields, ['order.country', 'order.total']);
  assert.equal(r.truth, 2);
});

test('struct bindings: a leaf is its residual, the known part folds, a read above or below a leaf is untracked', () => {
  const k: KnownInput = { root: {}, fieldMissing: 'lenient', memo: newExprMemo() };
  const env = VarEnv.EMPTY.bindStruct('r', { code: 'HIGH', message: '', output: { tier: null, limit: 500 } }, [
    { path: ['output', 'tier'], residual: { kind: 'field', path: 'vip' } },
  ]);
  const pe = (expr: string, e: VarEnv = env, kn: KnownInput = k) => partialEval(parse(expr), knownWith(kn, e));
  assert.deepEqual(pe('$r.code == "HIGH"'), { kind: 'value', value: true });
  assert.deepEqual(pe('$r.output.limit'), { kind: 'value', value: 500 });
  assert.deepEqual(pe('$r.output.tier'), { kind: 'field', path: 'vip' });
  assert.deepEqual(pe('exists($r.output.tier)'), { kind: 'value', value: true });
  assert.deepEqual(pe('$r.output.none'), { kind: 'value', value: null });
  assert.equal(pe('$r.output.none', env, { ...k, fieldMissing: 'strict' }).kind, 'error');
  assert.deepEqual(pe('$r.output'), { kind: 'var', path: '$r.output' });
  assert.deepEqual(pe('$r.output.tier.x'), { kind: 'var', path: '$r.output.tier.x' });
  // The fallback keeps the known part and reads the leaves as untracked.
  const fallback = env.withoutResiduals();
  assert.deepEqual(pe('$r.output.tier', fallback), { kind: 'var', path: '$r.output.tier' });
  assert.deepEqual(pe('$r.output.limit', fallback), { kind: 'value', value: 500 });
  // Without leaves it is a plain value; leaves over fields only give equal states equal keys.
  assert.deepEqual(VarEnv.EMPTY.bindStruct('r', { a: 1 }, []).get('r'), { kind: 'value', value: { a: 1 } });
  const again = VarEnv.EMPTY.bindStruct('r', { code: 'HIGH', message: '', output: { tier: null, limit: 500 } }, [
    { path: ['output', 'tier'], residual: { kind: 'field', path: 'vip' } },
  ]);
  assert.equal(again.key, env.key);
  const opaque = (): VarEnv => VarEnv.EMPTY.bindStruct('r', { v: null }, [{ path: ['v'], residual: { kind: 'var', path: '$x' } }]);
  assert.notEqual(opaque().key, opaque().key, 'a leaf reading an untracked variable never equals another state');
});
