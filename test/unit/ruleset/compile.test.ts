/**
 * compileRuleset: defaults, the kept document, the inspectable steps, and validation errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { compileRuleset, RulesetValidationError, type StepInfo } from '../../../src/ruleset/index.js';
import { DECISION, OP_SLOTS, TERMINAL } from '../../../src/ruleset/plan.js';

function doc(): Record<string, any> {
  return {
    config: { name: 'demo', entry_step: 'check' },
    steps: {
      check: {
        type: 'decision',
        name: 'Check',
        branches: [{ condition: 'user.age >= 18', next_step: 'calc' }],
        default_next: 'no',
      },
      calc: {
        type: 'action',
        actions: [
          { action: 'set_variable', name: 'twice', value: 'user.age * 2' },
          { action: 'log', message: 'hello', level: 'warn' },
          { action: 'log', message: 'default level' },
        ],
        next_step: 'yes',
      },
      yes: { type: 'terminal', result: { code: 'YES', tier: { a: [1] } }, output: { twice: '$twice' } },
      no: { type: 'terminal', result: { code: 'NO', message: 'nope' } },
    },
    _signature: { algorithm: 'ed25519', public_key: 'k', signature: 's' },
  };
}

test('defaults: version 1.0.0, description null, lenient, no timeout', () => {
  const c = compileRuleset(doc());
  assert.equal(c.name, 'demo');
  assert.equal(c.version, '1.0.0');
  assert.equal(c.description, null);
  assert.equal(c.fieldMissing, 'lenient');
  assert.equal(c.timeoutMs, undefined);
  assert.equal(c.entryStep, 'check');
  assert.equal(c.stepCount, 4);
  assert.equal(c.hasVariables, true);
});

test('config values are taken over', () => {
  const d = doc();
  Object.assign(d['config'], { version: '3.1.4', description: 'text', field_missing: 'strict', timeout_ms: 0 });
  const c = compileRuleset(d);
  assert.equal(c.version, '3.1.4');
  assert.equal(c.description, 'text');
  assert.equal(c.fieldMissing, 'strict');
  assert.equal(c.timeoutMs, 0);
});

test('hasVariables is false without set_variable actions', () => {
  const d = doc();
  d['steps'].calc.actions = [{ action: 'log', message: 'x' }];
  d['steps'].yes.output = {};
  assert.equal(compileRuleset(d).hasVariables, false);
});

test('doc is the document as given without _signature, deep-frozen, detached from the caller', () => {
  const input = doc();
  const c = compileRuleset(input);
  const { _signature: _, ...expected } = doc();
  assert.deepEqual(c.doc, expected);
  assert.ok(!('_signature' in c.doc));
  assert.equal(c.doc.config.version, undefined, 'defaults are not written into the document');
  assert.ok(Object.isFrozen(c.doc) && Object.isFrozen(c.doc.steps) && Object.isFrozen(c.doc.steps['yes']));
  assert.ok(Object.isFrozen((c.doc.steps['yes'] as any).result.tier.a));
  assert.ok(!Object.isFrozen(input) && !Object.isFrozen(input['steps']), "the caller's object is not frozen");
  input['steps'].check.branches[0].condition = 'false';
  assert.equal((c.doc.steps['check'] as any).branches[0].condition, 'user.age >= 18');
});

test('the compiled ruleset and its step map are frozen', () => {
  const c = compileRuleset(doc());
  assert.ok(Object.isFrozen(c));
  for (const s of c.steps.values()) assert.ok(Object.isFrozen(s));
  assert.throws(() => {
    (c as any).name = 'x';
  }, TypeError);
});

test('steps expose every step in document order with parsed expressions', () => {
  const c = compileRuleset(doc());
  assert.deepEqual([...c.steps.keys()], ['check', 'calc', 'yes', 'no']);
  const check = c.steps.get('check') as Extract<StepInfo, { type: 'decision' }>;
  assert.equal(check.type, 'decision');
  assert.equal(check.name, 'Check');
  assert.equal(check.defaultNext, 'no');
  assert.equal(check.branches.length, 1);
  assert.equal(check.branches[0]!.condition, 'user.age >= 18');
  assert.equal(check.branches[0]!.nextStep, 'calc');
  assert.equal(check.branches[0]!.ast.kind, 'binary');

  const calc = c.steps.get('calc') as Extract<StepInfo, { type: 'action' }>;
  assert.equal(calc.name, 'calc', 'name defaults to the id');
  assert.equal(calc.nextStep, 'yes');
  assert.equal(calc.actions.length, 3);
  const [set, warn, info] = calc.actions;
  assert.ok(set!.kind === 'set_variable' && set!.name === 'twice' && set!.value === 'user.age * 2' && set!.ast.kind === 'binary');
  assert.deepEqual(warn, { kind: 'log', message: 'hello', level: 'warn' });
  assert.deepEqual(info, { kind: 'log', message: 'default level', level: 'info' });

  const yes = c.steps.get('yes') as Extract<StepInfo, { type: 'terminal' }>;
  assert.equal(yes.code, 'YES');
  assert.equal(yes.message, '');
  assert.deepEqual(yes.staticOutput, { tier: { a: [1] } });
  assert.equal(yes.output.length, 1);
  assert.equal(yes.output[0]!.key, 'twice');
  assert.equal(yes.output[0]!.expression, '$twice');
  assert.equal(yes.output[0]!.ast.kind, 'path');

  const no = c.steps.get('no') as Extract<StepInfo, { type: 'terminal' }>;
  assert.equal(no.message, 'nope');
  assert.deepEqual(no.output, []);
});

test('an invalid document throws RulesetValidationError listing every problem', () => {
  const d = doc();
  d['config'].name = '.bad';
  d['steps'].no.result = {};
  d['steps'].check.branches[0].condition = 'user.age >=';
  assert.throws(
    () => compileRuleset(d),
    (err: unknown) => {
      assert.ok(err instanceof RulesetValidationError);
      assert.deepEqual(
        err.problems.map((p) => p.path),
        ['config.name', 'steps.check.branches[0].condition', 'steps.no.result.code'],
      );
      assert.match(err.message, /^config\.name: .+; steps\.check\.branches\[0\]\.condition: .+; steps\.no\.result\.code: required$/);
      return true;
    },
  );
});

test('a non-object document throws RulesetValidationError', () => {
  assert.throws(() => compileRuleset('nope'), RulesetValidationError);
});

test('every compiled ruleset has the same fast-property shape, frozen, with its graph built on first use', () => {
  // NOTE (bench/NOTES.md "Seventh session"): an object literal with a getter, frozen, was a
  // dictionary-mode object of its own per ruleset: every execution's loads from it were
  // megamorphic hash lookups. V8's own predicates say whether that came back.
  setFlagsFromString('--allow-natives-syntax');
  const fast = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
  const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
  const a = compileRuleset(doc());
  const other = doc();
  other['config'] = {
    name: 'other',
    entry_step: 'no',
    timeout_ms: 5,
    input_schema: { type: 'object', properties: { user: { type: 'object', properties: { age: { type: 'integer' } } } } },
  };
  const b = compileRuleset(other);
  assert.equal(fast(a), true);
  assert.equal(fast(b), true);
  assert.equal(sameMap(a, b), true);
  assert.equal(Object.isFrozen(a), true);
  assert.throws(() => {
    (a as { name: string }).name = 'x';
  }, TypeError);
  const graph = a.graph;
  assert.deepEqual([...graph.reachable].sort(), ['calc', 'check', 'no', 'yes']);
  assert.equal(a.graph, graph, 'built once, then kept');
  assert.deepEqual([...b.graph.reachable], ['no']);
});

test('the compact plan: the entry first, then the path of holding conditions as consecutive nodes', () => {
  const c = compileRuleset({
    config: { name: 'chain', entry_step: 'a' },
    steps: {
      z: { type: 'terminal', result: { code: 'Z' } },
      c: { type: 'decision', branches: [{ condition: 'x > 3', next_step: 'yes' }], default_next: 'z' },
      b: { type: 'decision', branches: [{ condition: 'x > 2', next_step: 'c' }], default_next: 'z' },
      a: { type: 'decision', branches: [{ condition: 'x > 1', next_step: 'b' }], default_next: 'z' },
      yes: { type: 'terminal', result: { code: 'YES', message: 'm', tier: 1 } },
      unreached: { type: 'terminal', result: { code: 'U' } },
    },
  });
  const { ops, opNodes } = c._plan;
  assert.equal(ops.length, opNodes.length * OP_SLOTS);
  assert.deepEqual(
    opNodes.map((n) => n.id),
    ['a', 'b', 'c', 'yes', 'z', 'unreached'],
  );
  // The entry's slots: its kind, its test, `then` (b) and `else` (z) as offsets.
  assert.equal(ops[0], DECISION);
  assert.equal(ops[2], 1 * OP_SLOTS);
  assert.equal(ops[3], 4 * OP_SLOTS);
  // A terminal's slots: its static output, code and message.
  assert.deepEqual(ops.slice(3 * OP_SLOTS, 4 * OP_SLOTS), [TERMINAL, { tier: 1 }, 'YES', 'm']);
  assert.equal(Object.isFrozen(ops), false, 'V8 reads frozen arrays slowly in optimized code');
});

test("the plan's arrays read while executing are not frozen (V8 reads frozen arrays slowly in optimized code)", () => {
  const c = compileRuleset(doc());
  const nodes = c._plan.opNodes;
  const calc = nodes.find((n) => n.id === 'calc')!;
  const yes = nodes.find((n) => n.id === 'yes')!;
  assert.equal(calc.actions.length, 3);
  for (const list of [c._plan.ops, nodes, calc.actions, yes.outKeys, yes.outFns, yes.staticKeys]) assert.equal(Object.isFrozen(list), false);
  // The nodes themselves and the static output still are.
  assert.ok(Object.isFrozen(calc) && Object.isFrozen(yes.staticOutput));
});
