/**
 * The structural diff (src/change/structural-diff.ts): changes at the paths validation uses,
 * with the documented granularity (docs/changing-rules.md "Structural diff").
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonEqual, structuralDiff } from '../../../src/change/index.js';
import { compileRuleset, validateRuleset, type RulesetDoc } from '../../../src/ruleset/index.js';

function base(): RulesetDoc {
  return {
    config: { name: 'loan', version: '1.0.0', entry_step: 'vip', metadata: { owner: 'risk', tags: ['a'] } },
    steps: {
      vip: {
        type: 'decision',
        branches: [
          { condition: 'user.vip == true', next_step: 'ok' },
          { condition: 'user.age >= 18', next_step: 'grid' },
        ],
        default_next: 'no',
      },
      grid: {
        type: 'table',
        inputs: ['user.score', 'user.country'],
        rows: [
          { when: ['>= 700', '-'], next_step: 'ok' },
          { when: ['>= 500', '"DE"'], next_step: 'ok' },
          { when: ['-', '-'], next_step: 'no' },
        ],
      },
      ok: { type: 'terminal', result: { code: 'APPROVE', message: 'approved' } },
      no: { type: 'terminal', result: { code: 'DECLINE' } },
    },
    tests: [{ name: 'vip', input: { user: { vip: true } }, expect: { code: 'APPROVE' } }],
  } as unknown as RulesetDoc;
}

const copy = (d: RulesetDoc): any => structuredClone(d);

describe('structuralDiff', () => {
  it('the base documents are valid (the paths below are validation paths)', () => {
    assert.deepEqual(validateRuleset(base()), []);
  });

  it('no changes between equal documents, whatever the key order or the signature', () => {
    const a = base();
    const b = copy(a);
    b.config = { entry_step: 'vip', metadata: { tags: ['a'], owner: 'risk' }, version: '1.0.0', name: 'loan' };
    b._signature = { algorithm: 'ed25519', public_key: 'x', signature: 'y' };
    assert.deepEqual(structuralDiff(a, b), []);
  });

  it('a changed condition is one change at its path', () => {
    const b = copy(base());
    b.steps.vip.branches[0].condition = 'user.vip == true && user.age > 21';
    assert.deepEqual(structuralDiff(base(), b), [
      { op: 'change', path: 'steps.vip.branches[0].condition', from: 'user.vip == true', to: 'user.vip == true && user.age > 21' },
    ]);
  });

  it('the path of a change is the path validation names for the same spot', () => {
    const b = copy(base());
    b.steps.grid.rows[1].when[0] = '>= ';
    b.steps.vip.branches[1].condition = 'user.age >=';
    const problems = validateRuleset(b).map((p) => p.path);
    const changes = structuralDiff(base(), b).map((c) => c.path);
    assert.deepEqual(changes, ['steps.vip.branches[1].condition', 'steps.grid.rows[1].when[0]']);
    for (const path of changes) assert.ok(problems.includes(path), `${path} in ${problems.join(', ')}`);
  });

  it('config keys: changed, added and removed', () => {
    const b = copy(base());
    b.config.entry_step = 'grid';
    b.config.field_missing = 'strict';
    delete b.config.version;
    assert.deepEqual(structuralDiff(base(), b), [
      { op: 'remove', path: 'config.version', from: '1.0.0' },
      { op: 'change', path: 'config.entry_step', from: 'vip', to: 'grid' },
      { op: 'add', path: 'config.field_missing', to: 'strict' },
    ]);
  });

  it('an added step is one add at steps.<id>, a removed one one remove', () => {
    const b = copy(base());
    b.steps.review = { type: 'terminal', result: { code: 'REVIEW' } };
    delete b.steps.no;
    const changes = structuralDiff(base(), b);
    assert.deepEqual(changes, [
      { op: 'remove', path: 'steps.no', from: { type: 'terminal', result: { code: 'DECLINE' } } },
      { op: 'add', path: 'steps.review', to: { type: 'terminal', result: { code: 'REVIEW' } } },
    ]);
  });

  it('a step that changed type is one change of the whole step', () => {
    const b = copy(base());
    b.steps.no = { type: 'decision', branches: [], default_next: 'ok' };
    assert.deepEqual(structuralDiff(base(), b), [{ op: 'change', path: 'steps.no', from: base().steps['no'], to: b.steps.no }]);
  });

  it('a reordered branch list is reported per index', () => {
    const b = copy(base());
    b.steps.vip.branches.reverse();
    assert.deepEqual(
      structuralDiff(base(), b).map((c) => c.path),
      ['steps.vip.branches[0].condition', 'steps.vip.branches[0].next_step', 'steps.vip.branches[1].condition', 'steps.vip.branches[1].next_step'],
    );
  });

  it('a longer array adds at the new indexes, a shorter one removes', () => {
    const b = copy(base());
    b.steps.vip.branches.push({ condition: 'user.age > 99', next_step: 'no' });
    assert.deepEqual(structuralDiff(base(), b), [{ op: 'add', path: 'steps.vip.branches[2]', to: { condition: 'user.age > 99', next_step: 'no' } }]);
    assert.deepEqual(structuralDiff(b, base()), [{ op: 'remove', path: 'steps.vip.branches[2]', from: { condition: 'user.age > 99', next_step: 'no' } }]);
  });

  it('table cells and inputs per index: steps.t.rows[2].when[1], steps.t.inputs[0]', () => {
    const b = copy(base());
    b.steps.grid.rows[2].when[1] = '"FR"';
    b.steps.grid.inputs[0] = 'user.credit_score';
    assert.deepEqual(structuralDiff(base(), b), [
      { op: 'change', path: 'steps.grid.inputs[0]', from: 'user.score', to: 'user.credit_score' },
      { op: 'change', path: 'steps.grid.rows[2].when[1]', from: '-', to: '"FR"' },
    ]);
  });

  it('tests, config.metadata and config.input_schema are compared as a whole', () => {
    const b = copy(base());
    b.tests[0].expect.code = 'DECLINE';
    b.tests.push({ name: 'minor', input: { user: { age: 3 } }, expect: { code: 'DECLINE' } });
    b.config.metadata.tags.push('b');
    const changes = structuralDiff(base(), b);
    assert.deepEqual(
      changes.map((c) => [c.op, c.path]),
      [
        ['change', 'config.metadata'],
        ['change', 'tests[0]'],
        ['add', 'tests[1]'],
      ],
    );
    assert.deepEqual(changes[1]!.to, b.tests[0]);
  });

  it('a value whose JSON type changed is one change; step ids with other characters use the bracket form', () => {
    const a = copy(base());
    a.steps['a.b'] = { type: 'terminal', result: { code: 'X', reason: 'text' } };
    const b = copy(a);
    b.steps['a.b'].result.reason = { detail: 'text' };
    assert.deepEqual(structuralDiff(a, b), [{ op: 'change', path: 'steps["a.b"].result.reason', from: 'text', to: { detail: 'text' } }]);
  });

  it('diffs compiled documents (what the service compares)', () => {
    const b = copy(base());
    b.steps.ok.result.message = 'yes';
    assert.deepEqual(structuralDiff(compileRuleset(base()).doc, compileRuleset(b).doc), [
      { op: 'change', path: 'steps.ok.result.message', from: 'approved', to: 'yes' },
    ]);
  });

  it('jsonEqual: deep, key order ignored, arrays ordered', () => {
    assert.ok(jsonEqual({ a: [1, { b: null }] }, { a: [1, { b: null }] }));
    assert.ok(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 }));
    assert.ok(!jsonEqual([1, 2], [2, 1]));
    assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 1 }));
    assert.ok(!jsonEqual([], {}));
    assert.ok(!jsonEqual(null, {}));
  });
});
