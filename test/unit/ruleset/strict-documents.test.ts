/**
 * Strict documents (EXTENSIONS.md 2): only documented keys at the top, in config, steps,
 * branches and actions; a near miss gets a suggestion; terminal `result` keeps any extra key;
 * `config.metadata` is the place for free-form data; the types of the authoring config keys;
 * the shape of `tests`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRuleset, validateRuleset } from '../../../src/ruleset/index.js';

function base(): Record<string, any> {
  return {
    config: { name: 'strict', entry_step: 'age' },
    steps: {
      age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'adult' }], default_next: 'minor' },
      note: { type: 'action', actions: [{ action: 'log', message: 'hi' }], next_step: 'adult' },
      adult: { type: 'terminal', result: { code: 'ADULT' } },
      minor: { type: 'terminal', result: { code: 'MINOR', message: 'too young' } },
    },
  };
}

function problems(doc: unknown): string[] {
  return validateRuleset(doc).map((p) => `${p.path}: ${p.message}`);
}

describe('strict documents', () => {
  it('accepts a document with every documented key', () => {
    const doc = base();
    doc.config = {
      ...doc.config,
      version: '2.0.0',
      description: 'd',
      field_missing: 'lenient',
      timeout_ms: 100,
      metadata: { owner: 'team-a', tags: ['x'] },
      input_schema: { type: 'object', properties: { user: { type: 'object', properties: { age: { type: 'number' }, name: { type: 'string' } } } } },
      input_validation: 'off',
      strict: false,
    };
    doc.steps.age.id = 'age';
    doc.steps.age.name = 'Age check';
    doc.steps.adult.output = { n: 'user.name' };
    doc.steps.note.actions.push({ action: 'set_variable', name: 'v', value: '1' }, { action: 'log', message: 'm', level: 'warn' });
    doc.tests = [{ name: 't', input: { user: { age: 20 } }, expect: { code: 'ADULT', message: '', output: {}, path: 'age -> adult' } }];
    doc._signature = { algorithm: 'ed25519', public_key: 'x', signature: 'y' };
    assert.deepEqual(problems(doc), []);
  });

  it('reports the example of the contract with its suggestion', () => {
    const doc = base();
    doc.steps.age.defualt_next = doc.steps.age.default_next;
    delete doc.steps.age.default_next;
    assert.deepEqual(problems(doc), ["steps.age.defualt_next: unknown key (did you mean 'default_next'?)"]);
  });

  it('reports unknown keys at every level, each with its location', () => {
    const doc = base();
    doc.confg = {};
    doc.config.entry_stp = 'age';
    doc.config.owner = 'me';
    doc.steps.age.branches[0].nxt_step = 'adult';
    doc.steps.note.actions[0].levle = 'info';
    doc.steps.note.next = 'adult';
    doc.steps.adult.outputs = {};
    assert.deepEqual(problems(doc), [
      "confg: unknown key (did you mean 'config'?)",
      "config.entry_stp: unknown key (did you mean 'entry_step'?)",
      'config.owner: unknown key',
      "steps.age.branches[0].nxt_step: unknown key (did you mean 'next_step'?)",
      'steps.note.next: unknown key',
      "steps.note.actions[0].levle: unknown key (did you mean 'level'?)",
      "steps.adult.outputs: unknown key (did you mean 'output'?)",
    ]);
  });

  it('keys of one step kind are unknown on another', () => {
    const doc = base();
    doc.steps.adult.next_step = 'minor';
    doc.steps.note.actions[0].value = '1';
    assert.deepEqual(problems(doc), ['steps.note.actions[0].value: unknown key', 'steps.adult.next_step: unknown key']);
  });

  it('a terminal result keeps any extra key (they are output)', () => {
    const doc = base();
    doc.steps.adult.result = { code: 'ADULT', message: 'ok', limit: 5, deflt: true, nested: { anything: 1 } };
    assert.deepEqual(problems(doc), []);
    const adult = compileRuleset(doc).steps.get('adult');
    assert.equal(adult?.type, 'terminal');
    assert.deepEqual(adult.type === 'terminal' ? adult.staticOutput : null, { limit: 5, deflt: true, nested: { anything: 1 } });
  });

  it('config.metadata is free-form but must be an object, and is kept in the stored document', () => {
    const doc = base();
    doc.config.metadata = { owner: 'risk', review: { by: 'ann', at: '2026-01-01' } };
    assert.deepEqual(compileRuleset(doc).doc.config.metadata, doc.config.metadata);
    for (const bad of ['team', 3, ['a'], null]) {
      const d = base();
      d.config.metadata = bad;
      assert.deepEqual(problems(d), ['config.metadata: must be an object (free-form data of the author)'], String(bad));
    }
  });

  it('checks the types of input_schema, input_validation and strict', () => {
    const doc = base();
    doc.config.input_schema = 'object';
    doc.config.input_validation = 'warn';
    doc.config.strict = 'yes';
    assert.deepEqual(problems(doc).sort(), [
      'config.input_schema: must be a JSON Schema (an object or a boolean)',
      'config.input_validation: must be reject or off',
      'config.strict: must be a boolean',
    ]);
    const ok = base();
    ok.config.input_schema = { type: 'object', properties: { user: { type: 'object', properties: { age: { type: 'number' } } } } };
    ok.config.input_validation = 'reject';
    ok.config.strict = true;
    assert.deepEqual(problems(ok), []);
  });

  it('an unknown key named __proto__ is reported, not followed', () => {
    const doc = JSON.parse('{"config":{"name":"p","entry_step":"a","__proto__":{"x":1}},"steps":{"a":{"type":"terminal","result":{"code":"A"}}}}');
    assert.deepEqual(problems(doc), ['config.__proto__: unknown key']);
  });

  it('leaves steps of an unknown type to the structural check', () => {
    const doc = base();
    doc.steps.odd = { type: 'weird', foo: 1 };
    assert.deepEqual(problems(doc), ['steps.odd.type: must be decision, action, terminal, table or call']);
  });
});

describe('tests shape', () => {
  const test = { name: 'adult', input: { user: { age: 20 } }, expect: { code: 'ADULT' } };

  it('accepts tests and keeps them in the compiled document', () => {
    const doc = { ...base(), tests: [test] };
    assert.deepEqual(compileRuleset(doc).doc.tests, [test]);
  });

  it('reports every shape problem with its location', () => {
    const doc = {
      ...base(),
      tests: [test, { name: 'adult', input: [], expect: { code: '', message: 1, output: 'x', path: 3, outptu: {} } }, { nmae: 'x', expect: 'ADULT' }, 'nope'],
    };
    assert.deepEqual(problems(doc), [
      "tests[1].name: duplicate test name 'adult' (also tests[0])",
      'tests[1].input: must be an object (the input the ruleset runs on)',
      "tests[1].expect.outptu: unknown key (did you mean 'output'?)",
      'tests[1].expect.code: must be a non-empty string',
      'tests[1].expect.message: must be a string',
      'tests[1].expect.output: must be an object (matched as a subset of the output)',
      "tests[1].expect.path: must be a string (the trace path, e.g. 'a -> b')",
      "tests[2].nmae: unknown key (did you mean 'name'?)",
      'tests[2].name: required',
      'tests[2].input: required',
      'tests[2].expect: must be an object with code (and optionally message, output, path)',
      'tests[3]: must be an object with name, input and expect',
    ]);
  });

  it('tests must be an array', () => {
    assert.deepEqual(problems({ ...base(), tests: {} }), ['tests: must be an array of tests ({name, input, expect})']);
  });
});
