/**
 * Date functions beyond the golden cases (test/cases/expr/functions-dates.yaml): the execution's
 * time (`now()` read once per execution, the request's "now", nothing read by rulesets that do
 * not call it), folding, and the parser of ISO text.
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { canonicalDateText, nowState, parseIsoDate } from '../../../src/expr/dates.js';
import { callsNow } from '../../../src/expr/dates.js';
import { compile, fold, parse, render, setRequestNow } from '../../../src/expr/index.js';
import { compileRuleset, execute, type ExecuteOptions } from '../../../src/ruleset/index.js';

const realClock = nowState.clock;
afterEach(() => {
  nowState.clock = realClock;
  setRequestNow(null);
});

/** A wall clock that counts its reads and answers 2026-11-24T00:00:00Z plus one hour per read. */
function countingClock(): { reads: number } {
  const c = { reads: 0 };
  nowState.clock = () => Date.UTC(2026, 10, 24) + c.reads++ * 3_600_000;
  return c;
}

const options: ExecuteOptions = { clock: () => 0, timeoutMs: 0, maxSteps: 0 };

const usesNow = compileRuleset({
  config: { name: 'dated', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      branches: [{ condition: 'date_diff(user.created, now(), "days") >= 30', next_step: 'old' }],
      default_next: 'young',
    },
    old: { type: 'terminal', result: { code: 'OLD' }, output: { at: 'now()', again: 'now()' } },
    young: { type: 'terminal', result: { code: 'YOUNG' }, output: { at: 'now()' } },
  },
});

const noNow = compileRuleset({
  config: { name: 'plain', entry_step: 't' },
  steps: { t: { type: 'terminal', result: { code: 'OK' }, output: { d: 'date_add(user.created, 1, "months")' } } },
});

test('now() reads the clock once per execution, at its first call', () => {
  const c = countingClock();
  const r1 = execute(usesNow, { user: { created: '2026-10-01' } }, options);
  assert.equal(r1.code, 'OLD');
  assert.deepEqual(r1.output, { at: '2026-11-24T00:00:00.000Z', again: '2026-11-24T00:00:00.000Z' });
  assert.equal(c.reads, 1);
  const r2 = execute(usesNow, { user: { created: '2026-10-01' } }, { ...options, trace: true });
  assert.deepEqual(r2.output, { at: '2026-11-24T01:00:00.000Z', again: '2026-11-24T01:00:00.000Z' }, 'the next execution reads again');
  assert.equal(c.reads, 2);
});

test('a ruleset that never calls now() never reads the clock for it', () => {
  const c = countingClock();
  assert.equal(usesNow._plan.usesNow, true);
  assert.equal(noNow._plan.usesNow, false);
  for (let i = 0; i < 3; i++) assert.deepEqual(execute(noNow, { user: { created: '2024-01-31' } }, options).output, { d: '2024-02-29T00:00:00.000Z' });
  assert.equal(c.reads, 0);
});

test("the request's now wins over the clock for every execution of the request", () => {
  const c = countingClock();
  setRequestNow('2026-10-15T12:00:00.000Z');
  const r = execute(usesNow, { user: { created: '2026-10-01' } }, options);
  assert.equal(r.code, 'YOUNG');
  assert.deepEqual(r.output, { at: '2026-10-15T12:00:00.000Z' });
  assert.equal(execute(usesNow, { user: { created: '2026-09-01' } }, options).code, 'OLD');
  assert.equal(c.reads, 0);
  setRequestNow(null);
  assert.deepEqual(execute(usesNow, { user: { created: '2026-11-20' } }, options).output, { at: '2026-11-24T00:00:00.000Z' });
});

test('now() is never folded; the other date functions fold on constants', () => {
  assert.equal(render(fold(parse('now()'))), 'now()');
  assert.equal(render(fold(parse('date_diff("2026-01-01", now(), "days")'))), 'date_diff("2026-01-01", now(), "days")');
  const folded = fold(parse('date_add("2024-01-31", 1, "months") < x'));
  assert.equal(folded.kind === 'binary' && folded.left.kind, 'literal');
  assert.equal(render(fold(parse('weekday("2026-11-24")'))), '2');
  // an invalid constant date is left to fail at run time
  assert.equal(render(fold(parse('year("2026-02-30")'))), 'year("2026-02-30")');
  const run = compile(parse('now()'));
  const c = countingClock();
  setRequestNow(null);
  assert.equal(run({}, null), '2026-11-24T00:00:00.000Z');
  assert.equal(c.reads, 1);
});

test('callsNow finds now() anywhere in a tree', () => {
  assert.equal(callsNow(parse('x > 1 && (if a then [now()] else 2) != null')), true);
  assert.equal(callsNow(parse('date_add(x, 1, "days")')), false);
});

test('parseIsoDate: forms, ranges, and the canonical text', () => {
  assert.equal(parseIsoDate('1970-01-01'), 0);
  assert.equal(parseIsoDate('1970-01-01T00:00:00.001Z'), 1);
  assert.equal(parseIsoDate('1970-01-01T01:00:00+0100'), 0);
  assert.equal(canonicalDateText('9999-12-31T23:59:59.999Z'), '9999-12-31T23:59:59.999Z');
  assert.equal(canonicalDateText('0000-01-01'), '0000-01-01T00:00:00.000Z');
  for (const bad of [
    '2026-1-01',
    '2026-11-24 10:00',
    '2026-11-24T10',
    '+02026-11-24',
    '2026-11-24T10:00:00.Z',
    '2026-11-24Z',
    ' 2026-11-24',
    '2026-11-24T10:00:00.1234567890Z',
    `2026-11-24${' '.repeat(100)}`,
  ]) {
    assert.equal(parseIsoDate(bad), null, bad);
  }
});
