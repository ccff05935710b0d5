/**
 * Call steps (EXTENSIONS.md 3 "Calling another ruleset") in the engine: the callee's result in
 * `$result`, its input (mapped or whole), the trace as `<callee>/<step>`, failures named from the
 * caller's side, CALL_FAILED for a missing callee and for nesting deeper than 8, the step limit,
 * deadline and variables shared or kept apart as steps.ts states, and validation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setRequestNow } from '../../../src/expr/dates.js';
import { compileRuleset, execute, validateRuleset, type CompiledRuleset, type ExecuteOptions, type RulesetDoc } from '../../../src/ruleset/index.js';
import { ExecutionError } from '../../../src/ruleset/result.js';

const RISK: RulesetDoc = {
  config: { name: 'risk', entry_step: 'size' },
  steps: {
    size: { type: 'decision', branches: [{ condition: 'amount > 1000', next_step: 'high' }], default_next: 'low' },
    high: { type: 'terminal', result: { code: 'HIGH', message: 'big', score: 9 } },
    low: { type: 'terminal', result: { code: 'LOW' }, output: { seen: 'amount', country: 'country' } },
  },
};

function loan(input?: Record<string, string>): RulesetDoc {
  return {
    config: { name: 'loan', entry_step: 'ask' },
    steps: {
      ask: { type: 'call', ruleset: 'risk', ...(input ? { input } : {}), result: 'risk', next_step: 'decide' },
      decide: { type: 'decision', branches: [{ condition: '$risk.code == "HIGH"', next_step: 'no' }], default_next: 'yes' },
      no: { type: 'terminal', result: { code: 'REJECT' }, output: { risk: '$risk' } },
      yes: { type: 'terminal', result: { code: 'APPROVE' }, output: { risk: '$risk' } },
    },
  };
}

function registry(...docs: RulesetDoc[]): Map<string, CompiledRuleset> {
  return new Map(docs.map((d) => [d.config.name, compileRuleset(d)]));
}

function options(rulesets: Map<string, CompiledRuleset>, extra: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return { clock: () => performance.now(), timeoutMs: 0, maxSteps: 1000, calls: (n) => rulesets.get(n), ...extra };
}

function failure(f: () => unknown): ExecutionError {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof ExecutionError, String(err));
    return err;
  }
  assert.fail('expected an execution error');
}

test('the callee runs on the mapped input; $result holds its code, message and output', () => {
  const all = registry(RISK, loan({ amount: 'order.amount', country: '"FR"' }));
  const run = (amount: number) => execute(all.get('loan')!, { order: { amount } }, options(all));
  const high = run(5000);
  assert.equal(high.code, 'REJECT');
  assert.deepEqual(high.output['risk'], { code: 'HIGH', message: 'big', output: { score: 9 } });
  const low = run(10);
  assert.equal(low.code, 'APPROVE');
  assert.deepEqual(low.output['risk'], { code: 'LOW', message: '', output: { seen: 10, country: 'FR' } });
});

test('without input the callee gets the whole input; keys not mapped are missing (null when lenient)', () => {
  const whole = registry(RISK, loan());
  assert.deepEqual(execute(whole.get('loan')!, { amount: 2000, country: 'DE' }, options(whole)).output['risk'], {
    code: 'HIGH',
    message: 'big',
    output: { score: 9 },
  });
  const mapped = registry(RISK, loan({ amount: 'order.amount' }));
  assert.deepEqual(execute(mapped.get('loan')!, { order: { amount: 1 }, country: 'DE' }, options(mapped)).output['risk'], {
    code: 'LOW',
    message: '',
    output: { seen: 1, country: null },
  });
});

test('the trace lists the call step, then the callee steps as <callee>/<step>, nested calls prefixed again', () => {
  const outer: RulesetDoc = {
    config: { name: 'outer', entry_step: 'first' },
    steps: {
      first: { type: 'call', ruleset: 'loan', result: 'l', next_step: 'end' },
      end: { type: 'terminal', result: { code: 'DONE' }, output: { code: '$l.code' } },
    },
  };
  const all = registry(RISK, loan(), outer);
  const r = execute(all.get('outer')!, { amount: 5 }, options(all, { trace: true }));
  assert.equal(r.output['code'], 'APPROVE');
  assert.equal(r.trace!.path, 'first -> loan/ask -> loan/risk/size -> loan/risk/low -> loan/decide -> loan/yes -> end');
  assert.deepEqual(
    r.trace!.steps.map((s) => s.id),
    r.trace!.path.split(' -> '),
  );
  assert.equal(r.trace!.steps[2]!.name, 'size');
  // A path-only trace (decision records) has the same path through the nested calls, no steps.
  const pathOnly = execute(all.get('outer')!, { amount: 5 }, options(all, { trace: true, pathOnly: true }));
  assert.equal(pathOnly.trace!.path, r.trace!.path);
  assert.deepEqual(pathOnly.trace!.steps, []);
  // The untraced walk gives the same answer.
  const plain = execute(all.get('outer')!, { amount: 5 }, options(all));
  const { trace: _trace, ...traced } = r;
  assert.deepEqual({ ...plain, duration_us: 0 }, { ...traced, duration_us: 0 });
});

test('a missing callee is CALL_FAILED naming it, at the call step', () => {
  const all = registry(loan());
  const err = failure(() => execute(all.get('loan')!, {}, options(all)));
  assert.equal(err.code, 'CALL_FAILED');
  assert.match(err.message, /'risk' does not exist/);
  assert.equal(err.stepId, 'ask');
  const none = failure(() => execute(all.get('loan')!, {}, { clock: () => 0, timeoutMs: 0, maxSteps: 10 }));
  assert.equal(none.code, 'CALL_FAILED', 'without a resolver every call fails');
});

test("a failure inside the callee keeps its code and is named from the caller's side", () => {
  const broken: RulesetDoc = {
    config: { name: 'risk', entry_step: 'size', field_missing: 'strict' },
    steps: {
      size: { type: 'decision', branches: [{ condition: 'amount / 0 > 1', next_step: 't' }], default_next: 't' },
      t: { type: 'terminal', result: { code: 'X' } },
    },
  };
  const all = registry(broken, loan());
  const err = failure(() => execute(all.get('loan')!, { amount: 1 }, options(all, { trace: true })));
  assert.equal(err.code, 'EVALUATION_ERROR');
  assert.equal(err.stepId, 'risk/size');
  assert.match(err.message, /^in ruleset 'risk': step 'size' branch 0: /);
  const strict = failure(() => execute(all.get('loan')!, {}, options(all)));
  assert.equal(strict.code, 'EVALUATION_ERROR', "the callee reads with its own field_missing (strict): 'amount' is missing");
});

test('calls nest at most 8 deep: the 9th is CALL_FAILED', () => {
  const chain: RulesetDoc[] = [];
  for (let i = 0; i <= 9; i++) {
    chain.push({
      config: { name: `r${i}`, entry_step: 's' },
      steps:
        i === 9
          ? { s: { type: 'terminal', result: { code: 'BOTTOM' } } }
          : {
              s: { type: 'call', ruleset: `r${i + 1}`, result: 'x', next_step: 't' },
              t: { type: 'terminal', result: { code: 'UP' }, output: { below: '$x.code' } },
            },
    });
  }
  const all = registry(...chain);
  // r1 -> ... -> r9 is 8 calls: allowed.
  assert.equal(execute(all.get('r1')!, {}, options(all)).output['below'], 'UP');
  const err = failure(() => execute(all.get('r0')!, {}, options(all)));
  assert.equal(err.code, 'CALL_FAILED');
  assert.match(err.message, /call depth limit of 8/);
  assert.equal(err.stepId, 'r1/r2/r3/r4/r5/r6/r7/r8/s');
  // A call that loops back on itself at run time stops at the same limit.
  const self = registry({
    config: { name: 'a', entry_step: 's' },
    steps: { s: { type: 'call', ruleset: 'b', result: 'x', next_step: 't' }, t: { type: 'terminal', result: { code: 'T' } } },
  });
  self.set('b', self.get('a')!);
  assert.equal(failure(() => execute(self.get('a')!, {}, options(self))).code, 'CALL_FAILED');
});

test("the callee's steps count toward the caller's step limit", () => {
  const all = registry(RISK, loan());
  // loan: ask, (risk: size, low), decide, yes = 5 steps.
  assert.equal(execute(all.get('loan')!, { amount: 1 }, options(all, { maxSteps: 5 })).code, 'APPROVE');
  const err = failure(() => execute(all.get('loan')!, { amount: 1 }, options(all, { maxSteps: 4 })));
  assert.equal(err.code, 'STEP_LIMIT');
  const inside = failure(() => execute(all.get('loan')!, { amount: 1 }, options(all, { maxSteps: 2 })));
  assert.equal(inside.code, 'STEP_LIMIT');
  assert.equal(inside.stepId, 'risk/low');
});

test("variables are the callee's own: the caller's are not visible in it, and its are not visible after", () => {
  const callee: RulesetDoc = {
    config: { name: 'inner', entry_step: 'set' },
    steps: {
      set: { type: 'action', actions: [{ action: 'set_variable', name: 'v', value: 'if $v == null then "inner" else "leaked"' }], next_step: 'end' },
      end: { type: 'terminal', result: { code: 'I' }, output: { v: '$v' } },
    },
  };
  const caller: RulesetDoc = {
    config: { name: 'outer', entry_step: 'set' },
    steps: {
      set: { type: 'action', actions: [{ action: 'set_variable', name: 'v', value: '"outer"' }], next_step: 'call' },
      call: { type: 'call', ruleset: 'inner', result: 'r', next_step: 'end' },
      end: { type: 'terminal', result: { code: 'O' }, output: { mine: '$v', theirs: '$r.output.v' } },
    },
  };
  const all = registry(callee, caller);
  assert.deepEqual(execute(all.get('outer')!, {}, options(all)).output, { mine: 'outer', theirs: 'inner' });
});

test("a callee's now() is the execution's time, also when the caller itself does not read it", () => {
  const clockRuleset: RulesetDoc = {
    config: { name: 'clock', entry_step: 't' },
    steps: { t: { type: 'terminal', result: { code: 'T' }, output: { now: 'now()' } } },
  };
  const caller: RulesetDoc = {
    config: { name: 'c', entry_step: 'a' },
    steps: {
      a: { type: 'call', ruleset: 'clock', result: 'x', next_step: 'b' },
      b: { type: 'terminal', result: { code: 'B' }, output: { now: '$x.output.now' } },
    },
  };
  const all = registry(clockRuleset, caller);
  setRequestNow('2026-01-02T03:04:05.000Z');
  try {
    assert.equal(execute(all.get('c')!, {}, options(all)).output['now'], '2026-01-02T03:04:05.000Z');
  } finally {
    setRequestNow(null);
  }
});

test('an input expression that fails fails the call step', () => {
  const all = registry(RISK, loan({ amount: 'order.amount / 0' }));
  const err = failure(() => execute(all.get('loan')!, { order: { amount: 1 } }, options(all)));
  assert.equal(err.code, 'EVALUATION_ERROR');
  assert.equal(err.stepId, 'ask');
  assert.match(err.message, /input 'amount'/);
});

test('validation: the call step fields, a ruleset calling itself, unknown keys', () => {
  const doc = (step: Record<string, unknown>): unknown => ({
    config: { name: 'me', entry_step: 'c' },
    steps: { c: { type: 'call', next_step: 'end', ...step }, end: { type: 'terminal', result: { code: 'E' } } },
  });
  const problems = (step: Record<string, unknown>) => validateRuleset(doc(step)).map((p) => `${p.path}: ${p.message}`);
  assert.deepEqual(problems({ ruleset: 'other', result: 'r' }), []);
  assert.deepEqual(problems({ result: 'r' }), ['steps.c.ruleset: required (the name of the ruleset to call)']);
  assert.deepEqual(problems({ ruleset: 'me', result: 'r' }), ['steps.c.ruleset: a ruleset must not call itself (call cycle: me -> me)']);
  assert.deepEqual(problems({ ruleset: '.x', result: 'r' }), [
    "steps.c.ruleset: must be a ruleset name: 1-128 characters of A-Z a-z 0-9 _ - . and not start with '.'",
  ]);
  assert.deepEqual(problems({ ruleset: 'o', result: '1x' }), [
    'steps.c.result: must be a variable name: letters, digits and _, not starting with a digit (read as $name)',
  ]);
  assert.deepEqual(problems({ ruleset: 'o' }), ['steps.c.result: required (the variable that receives {code, message, output})']);
  assert.deepEqual(problems({ ruleset: 'o', result: 'r', input: [] }), ["steps.c.input: must be an object mapping the callee's input keys to expressions"]);
  assert.deepEqual(problems({ ruleset: 'o', result: 'r', input: { a: 'x +' } }).length, 1);
  assert.match(problems({ ruleset: 'o', result: 'r', input: { a: 'x +' } })[0]!, /^steps\.c\.input\.a: /);
  assert.deepEqual(problems({ ruleset: 'o', result: 'r', reslt: 'x' }), ["steps.c.reslt: unknown key (did you mean 'result'?)"]);
  assert.deepEqual(compileRuleset(doc({ ruleset: 'b', result: 'r' })).calls, ['b']);
});
