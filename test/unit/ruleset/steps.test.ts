/**
 * The step semantics module (src/ruleset/steps.ts) and the graph facts built on it: every step
 * kind's expressions in evaluation order and successors, the plan kind of every step kind, and
 * predecessors / terminals by code / reachable / cyclic steps of a compiled ruleset.
 *
 * NOTE: that every walker handles every kind is checked by the compiler, not here: each walker
 * (compile.ts's plan builder, stepExpressions and stepSuccessors, filter/planner.ts) switches on
 * the kind with a `never` default, and execute.ts's two walks end in `noMatch(node, kind)` whose
 * parameter type only admits NO_MATCH. Adding a kind without its case fails `tsc`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DerivedSlot,
  PLAN_KIND,
  STEP_KINDS,
  compileRuleset,
  stepExpressions,
  stepSuccessors,
  stepsReaching,
  type RulesetDoc,
  type StepInfo,
} from '../../../src/ruleset/index.js';
import { ACTION, CALL, DECISION, TERMINAL } from '../../../src/ruleset/plan.js';

function doc(): RulesetDoc {
  return {
    config: { name: 'graph', entry_step: 'check' },
    steps: {
      check: {
        type: 'decision',
        branches: [
          { condition: 'a > 1', next_step: 'calc' },
          { condition: 'b == 2', next_step: 'yes' },
          { condition: 'c', next_step: 'calc' },
        ],
        default_next: 'no',
      },
      calc: {
        type: 'action',
        actions: [
          { action: 'set_variable', name: 'x', value: 'a + 1' },
          { action: 'log', message: 'hi' },
          { action: 'set_variable', name: 'y', value: '$x * 2' },
        ],
        next_step: 'loop',
      },
      loop: { type: 'decision', branches: [{ condition: '$y > 100', next_step: 'yes' }], default_next: 'calc' },
      yes: { type: 'terminal', result: { code: 'YES' }, output: { k: 'a', j: '$y' } },
      no: { type: 'terminal', result: { code: 'NO' } },
      also_yes: { type: 'terminal', result: { code: 'YES' } },
      orphan: { type: 'action', actions: [], next_step: 'orphan' },
      ask: { type: 'call', ruleset: 'other', input: { z: 'a * 2', w: '$y' }, result: 'r', next_step: 'no' },
    },
  };
}

function step(id: string): StepInfo {
  return compileRuleset(doc()).steps.get(id)!;
}

test('every step kind has a plan kind, and the list of kinds is complete', () => {
  assert.deepEqual([...STEP_KINDS], ['decision', 'action', 'terminal', 'call']);
  assert.deepEqual(PLAN_KIND, { decision: DECISION, action: ACTION, terminal: TERMINAL, call: CALL });
  const seen = new Set<string>();
  for (const s of compileRuleset(doc()).steps.values()) seen.add(s.type);
  assert.deepEqual([...seen].sort(), [...STEP_KINDS].sort(), 'the test ruleset covers every kind');
});

test('call: its input expressions in key order; its successor is next_step', () => {
  const s = step('ask');
  assert.deepEqual(
    stepExpressions(s).map((e) => (e.role === 'argument' ? `${e.role}:${e.key}` : e.role)),
    ['argument:z', 'argument:w'],
  );
  assert.deepEqual(stepSuccessors(s), ['no']);
  assert.equal(s.type === 'call' ? s.ruleset : '', 'other');
});

test('decision: its conditions in branch order; successors are the branch targets, then default_next', () => {
  const s = step('check');
  assert.deepEqual(
    stepExpressions(s).map((e) => (e.role === 'condition' ? [e.role, e.index, e.next] : e.role)),
    [
      ['condition', 0, 'calc'],
      ['condition', 1, 'yes'],
      ['condition', 2, 'calc'],
    ],
  );
  assert.deepEqual(stepSuccessors(s), ['calc', 'yes', 'calc', 'no']);
  const noDefault = compileRuleset({
    config: { name: 'n', entry_step: 'd' },
    steps: { d: { type: 'decision', branches: [] }, t: { type: 'terminal', result: { code: 'T' } } },
  });
  assert.deepEqual(stepExpressions(noDefault.steps.get('d')!), []);
  assert.deepEqual(stepSuccessors(noDefault.steps.get('d')!), [], 'no branch and no default: a NO_MATCHING_BRANCH, no successor');
});

test('action: its set_variable values in order (log actions evaluate nothing); successor is next_step', () => {
  const s = step('calc');
  assert.deepEqual(
    stepExpressions(s).map((e) => (e.role === 'value' ? [e.role, e.index, e.name] : e.role)),
    [
      ['value', 0, 'x'],
      ['value', 2, 'y'],
    ],
  );
  assert.deepEqual(stepSuccessors(s), ['loop']);
});

test('terminal: its output expressions in key order; no successor', () => {
  const s = step('yes');
  assert.deepEqual(
    stepExpressions(s).map((e) => (e.role === 'output' ? [e.role, e.key] : e.role)),
    [
      ['output', 'k'],
      ['output', 'j'],
    ],
  );
  assert.deepEqual(stepSuccessors(s), []);
});

test('graph facts are computed once at compile time', () => {
  const c = compileRuleset(doc());
  const g = c.graph;
  assert.deepEqual(g.successors.get('check'), ['calc', 'yes', 'no'], 'distinct, in evaluation order');
  assert.deepEqual(g.predecessors.get('calc'), ['check', 'loop']);
  assert.deepEqual(g.predecessors.get('yes'), ['check', 'loop']);
  assert.equal(g.predecessors.get('check'), undefined);
  assert.deepEqual(g.terminalsByCode.get('YES'), ['yes', 'also_yes']);
  assert.deepEqual(g.terminalsByCode.get('NO'), ['no']);
  assert.deepEqual([...g.reachable].sort(), ['calc', 'check', 'loop', 'no', 'yes']);
  assert.deepEqual([...g.cyclic].sort(), ['calc', 'loop', 'orphan'], 'a two-step cycle and a self-loop');
  assert.equal(compileRuleset(doc()).graph.cyclic.has('check'), false);
  assert.ok(Object.isFrozen(g));
});

test('stepsReaching: the steps from which a terminal with one of the codes can be reached', () => {
  const g = compileRuleset(doc()).graph;
  assert.deepEqual([...stepsReaching(g, ['NO'])].sort(), ['ask', 'check', 'no']);
  assert.deepEqual([...stepsReaching(g, ['YES'])].sort(), ['also_yes', 'calc', 'check', 'loop', 'yes']);
  assert.deepEqual([...stepsReaching(g, ['NONE'])], []);
});

test('cycle detection does not recurse: a chain of 20,000 steps compiles', () => {
  const steps: RulesetDoc['steps'] = { end: { type: 'terminal', result: { code: 'E' } } };
  for (let i = 0; i < 20_000; i++) steps[`s${i}`] = { type: 'action', actions: [], next_step: i === 19_999 ? 's0' : `s${i + 1}` };
  const c = compileRuleset({ config: { name: 'long', entry_step: 's0' }, steps });
  assert.equal(c.graph.cyclic.size, 20_000);
  assert.equal(c.graph.cyclic.has('end'), false);
});

test('derived values are built once per compiled value and owned by it', () => {
  const slot = new DerivedSlot<{ n: number }>('test');
  const c = compileRuleset(doc());
  let builds = 0;
  const first = c.derived.get(slot, () => ({ n: ++builds }));
  assert.equal(
    c.derived.get(slot, () => ({ n: ++builds })),
    first,
  );
  assert.equal(builds, 1);
  assert.notEqual(
    compileRuleset(doc()).derived.get(slot, () => ({ n: ++builds })),
    first,
  );
  assert.ok(Object.isFrozen(c), 'the compiled value itself stays frozen');
});
