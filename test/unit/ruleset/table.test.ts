/**
 * Decision tables (EXTENSIONS.md 3): validation problems at `steps.t.rows[i].when[j]`, the cell
 * forms, and the resolved steps tools read (a routing table is a decision, a `set` table an action).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileRuleset, validateRuleset } from '../../../src/ruleset/index.js';
import { cellExpression, rowCondition } from '../../../src/ruleset/table.js';
import { runTests } from '../../../src/ruleset/testing.js';
import { render } from '../../../src/expr/index.js';

type Doc = Record<string, any>;

function routing(rows: unknown, extra: Doc = {}): Doc {
  return {
    config: { name: 't', entry_step: 't' },
    steps: {
      t: { type: 'table', inputs: ['user.age', 'user.country'], rows, default_next: 'B', ...extra },
      A: { type: 'terminal', result: { code: 'A' } },
      B: { type: 'terminal', result: { code: 'B' } },
    },
  };
}

function setting(rows: unknown, extra: Doc = {}): Doc {
  return {
    config: { name: 't', entry_step: 't' },
    steps: {
      t: { type: 'table', hit_policy: 'first', inputs: ['x'], rows, next_step: 'A', ...extra },
      A: { type: 'terminal', result: { code: 'A' }, output: { r: '$r' } },
    },
  };
}

const paths = (doc: Doc): string[] => validateRuleset(doc).map((p) => `${p.path}: ${p.message}`);

describe('table cells', () => {
  test('each cell form becomes its expression over the column', () => {
    assert.equal(cellExpression('-', 'a.b'), null);
    assert.equal(cellExpression('  ', 'a.b'), null);
    assert.equal(cellExpression('18', 'a.b'), '(a.b) == (18)');
    assert.equal(cellExpression('"US"', 'a.b'), '(a.b) == ("US")');
    assert.equal(cellExpression('-5', 'a.b'), '(a.b) == (-5)');
    assert.equal(cellExpression('>= 18', 'a.b'), '(a.b) >= 18');
    assert.equal(cellExpression('!= null', 'a.b'), '(a.b) != null');
    assert.equal(cellExpression('in [1, 2]', 'a.b'), '(a.b) in [1, 2]');
    assert.equal(cellExpression('not in [1]', 'a.b'), '(a.b) not in [1]');
    assert.equal(cellExpression('? > 5 && ? < 10', 'a.b'), '(a.b) > 5 && (a.b) < 10');
    assert.equal(cellExpression("? == \"?\" || ? == 'it\\'s ?'", 'v'), "(v) == \"?\" || (v) == 'it\\'s ?'");
    assert.equal(cellExpression('inactive', 'v'), '(v) == (inactive)');
  });

  test('a row joins its cells with && and is true when every cell is any', () => {
    assert.equal(rowCondition(['> 1', '-'], ['a', 'b']), '((a) > 1)');
    assert.equal(rowCondition(['> 1', '"x"'], ['a', 'b']), '((a) > 1) && ((b) == ("x"))');
    assert.equal(rowCondition(['-', ''], ['a', 'b']), 'true');
  });
});

describe('table validation', () => {
  test('a valid routing table and a valid set table have no problems', () => {
    assert.deepEqual(paths(routing([{ when: ['>= 18', 'in ["US"]'], next_step: 'A' }])), []);
    assert.deepEqual(
      paths(
        setting([
          { when: ['> 1'], set: { r: '1' } },
          { when: ['-'], set: { r: '2' } },
        ]),
      ),
      [],
    );
  });

  test('a bad cell is reported at rows[i].when[j], naming the cell', () => {
    const got = paths(
      routing([
        { when: ['-', '-'], next_step: 'A' },
        { when: ['>= 18', 'in [1,'], next_step: 'A' },
      ]),
    );
    assert.equal(got.length, 1);
    assert.match(got[0]!, /^steps\.t\.rows\[1\]\.when\[1\]: .*in '\(user\.country\) in \[1,', the expression of 'in \[1,'\)$/);
  });

  test('every problem of the table at once: cells, counts, types, targets', () => {
    const got = paths(
      routing([{ when: ['> ', '-'], next_step: 'A' }, { when: ['-'], next_step: 'A' }, { when: [1, '-'], next_step: 'nowhere' }, 'row', { when: ['-', '-'] }]),
    );
    assert.deepEqual(
      got.map((p) => p.split(':')[0]),
      [
        'steps.t.rows[0].when[0]',
        'steps.t.rows[1].when',
        'steps.t.rows[2].when[0]',
        'steps.t.rows[2].next_step',
        'steps.t.rows[3]',
        'steps.t.rows[4].next_step',
      ],
    );
    assert.match(got[1]!, /must have 2 cells \(one per input\), has 1/);
    assert.match(got[3]!, /unknown step 'nowhere'/);
  });

  test('inputs must be a non-empty array of expressions', () => {
    assert.deepEqual(paths(routing([], { inputs: [] })), ['steps.t.inputs: must be a non-empty array of expressions']);
    assert.match(paths(routing([], { inputs: ['a', 'b +'] }))[0]!, /^steps\.t\.inputs\[1\]: /);
  });

  test('routing rows and set rows do not mix', () => {
    assert.deepEqual(paths(routing([{ when: ['-', '-'], next_step: 'A', set: { r: '1' } }])), ['steps.t.rows[0].set: only with hit_policy first or collect']);
    assert.deepEqual(paths(routing([], { next_step: 'A' })), ['steps.t.next_step: only with hit_policy (routing rows carry their own next_step)']);
    assert.deepEqual(paths(setting([{ when: ['-'], next_step: 'A' }])), [
      'steps.t.rows[0].next_step: not allowed with hit_policy (use set; the step carries next_step)',
      'steps.t.rows[0].set: required with hit_policy (variable name to expression)',
    ]);
    assert.deepEqual(paths(setting([], { next_step: undefined, default_next: 'A' })), [
      'steps.t.next_step: required',
      'steps.t.default_next: not allowed with hit_policy (the step goes to its next_step)',
    ]);
  });

  test('set values are expressions with variable names; hit_policy is first or collect', () => {
    const got = paths(setting([{ when: ['-'], set: { r: '1 +', '9x': '1' } }]));
    assert.deepEqual(
      got.map((p) => p.split(':')[0]),
      ['steps.t.rows[0].set.r', 'steps.t.rows[0].set.9x'],
    );
    assert.deepEqual(paths(setting([], { hit_policy: 'all' })), ['steps.t.hit_policy: must be first or collect']);
    assert.deepEqual(paths(setting([{ when: ['-'], set: { r: '1' } }], { hit_policy: 'collect' })), []);
  });

  test("a set table's cells and values may not read the variables it sets", () => {
    assert.deepEqual(
      paths(
        setting([
          { when: ['? > $r'], set: { r: '1' } },
          { when: ['-'], set: { r: '$r + 1' } },
        ]),
      ),
      ['steps.t.rows[0].when[0]: must not read $r, which this table sets', 'steps.t.rows[1].set.r: must not read $r, which this table sets'],
    );
  });

  test('unknown keys of a table and of its rows are problems', () => {
    assert.deepEqual(
      paths(routing([{ when: ['-', '-'], next_step: 'A', nxt: 1 }], { defualt: 1 })),
      ['steps.t.defualt: unknown key', "steps.t.rows[0].nxt: unknown key (did you mean 'set'?)"].map((s) => s),
    );
  });
});

describe('tables as the steps tools read', () => {
  test('a routing table resolves to a decision, one branch per row, with its origin', () => {
    const c = compileRuleset(routing([{ when: ['>= 18', '"US"'], next_step: 'A' }]));
    const t = c.steps.get('t')!;
    assert.equal(t.type, 'decision');
    if (t.type !== 'decision') return;
    assert.deepEqual(
      t.branches.map((b) => [b.condition, b.nextStep]),
      [['((user.age) >= 18) && ((user.country) == ("US"))', 'A']],
    );
    assert.equal(t.defaultNext, 'B');
    assert.deepEqual(t.table, { inputs: ['user.age', 'user.country'], hitPolicy: null });
    assert.deepEqual(c.graph.successors.get('t'), ['A', 'B']);
  });

  test('a first table resolves to an action setting each variable to its rows if-chain', () => {
    const c = compileRuleset(
      setting([
        { when: ['> 1'], set: { r: '10' } },
        { when: ['-'], set: { q: '2' } },
      ]),
    );
    const t = c.steps.get('t')!;
    assert.equal(t.type, 'action');
    if (t.type !== 'action') return;
    assert.deepEqual(
      t.actions.map((a) => (a.kind === 'set_variable' ? [a.name, a.value] : a.kind)),
      [
        ['r', 'if ((x) > 1) then (10) else if true then null else null'],
        ['q', 'if ((x) > 1) then null else if true then (2) else null'],
      ],
    );
    assert.equal(c.hasVariables, true);
  });
});

describe('collect tables as the steps tools read', () => {
  test('each variable is marked untracked; its tree reads each value only where its row holds', () => {
    const c = compileRuleset(
      setting(
        [
          { when: ['> 1'], set: { r: '10' } },
          { when: ['-'], set: { q: '2', r: 'x' } },
        ],
        { hit_policy: 'collect' },
      ),
    );
    const t = c.steps.get('t')!;
    assert.equal(t.type, 'action');
    if (t.type !== 'action') return;
    assert.deepEqual(
      t.actions.map((a) => (a.kind === 'set_variable' ? [a.name, a.value, a.untracked, render(a.ast)] : a.kind)),
      [
        ['r', 'collect [if ((x) > 1) then (10), if true then (x)]', true, '[(if (> x 1) then 10 else null), (if true then x else null)]'],
        ['q', 'collect [if true then (2)]', true, '[(if true then 2 else null)]'],
      ],
    );
    assert.deepEqual(t.table, { inputs: ['x'], hitPolicy: 'collect' });
  });
});

describe('tables in test coverage', () => {
  test("a routing table's rows are counted as branches at rows[i]", () => {
    const doc = routing([
      { when: ['>= 18', '-'], next_step: 'A' },
      { when: ['-', '"US"'], next_step: 'A' },
    ]);
    const report = runTests(compileRuleset(doc), [{ name: 'adult', input: { user: { age: 30 } }, expect: { code: 'A', path: 't -> A' } }], {
      clock: () => 0,
      timeoutMs: 0,
      maxSteps: 100,
    });
    assert.equal(report.passed, 1);
    assert.deepEqual(report.coverage.branches, { covered: 1, total: 3, missing: ['steps.t.rows[1]', 'steps.t.default_next'] });
  });
});
