/**
 * `config.input_schema` (EXTENSIONS.md 2 "Input schema") in the pure layer: the create-time
 * checks (the schema itself, every path read, did-you-mean, literal types), the compiled
 * validator (problem paths as the language writes them, only the fields given for a filter's
 * `known_input`) and the inferred schema.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonValue } from '../../../src/expr/ast.js';
import { compileRuleset, inferInputSchema, inputSchemaAnswer, validateRuleset } from '../../../src/ruleset/index.js';
import { distance } from '../../../src/ruleset/schema-paths.js';

type Obj = { [key: string]: JsonValue };

const SCHEMA: Obj = {
  type: 'object',
  properties: {
    user: {
      type: 'object',
      properties: { age: { type: 'integer' }, country: { type: 'string' }, vip: { type: 'boolean' }, nick: { type: ['string', 'null'] } },
      required: ['age'],
    },
    order: { $ref: '#/$defs/order' },
    items: { type: 'array', items: { type: 'object', properties: { price: { type: 'number' } } } },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    level: { enum: ['low', 'high'] },
    either: {
      anyOf: [
        { type: 'object', properties: { a: { type: 'number' } } },
        { type: 'object', properties: { b: { type: 'string' } } },
      ],
    },
  },
  required: ['user'],
  $defs: { order: { type: 'object', properties: { amount: { type: 'number' } } } },
};

/** A one-decision ruleset whose branch reads `condition`, with `schema` (and extra config). */
function rules(condition: string, schema: JsonValue | 'none' = SCHEMA, extra: Obj = {}, output: Record<string, string> = {}): Obj {
  const config: Obj = { name: 'r', entry_step: 'd', ...extra };
  if (schema !== 'none') config['input_schema'] = schema;
  return {
    config,
    steps: {
      d: { type: 'decision', branches: [{ condition, next_step: 'yes' }], default_next: 'no' },
      yes: { type: 'terminal', result: { code: 'YES' }, output },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
}

const AT = 'steps.d.branches[0].condition';

function messages(doc: Obj): string[] {
  return validateRuleset(doc).map((p) => `${p.path}: ${p.message}`);
}

describe('input_schema at create: the schema itself', () => {
  it('an invalid schema is a problem at config.input_schema with ajv message', () => {
    const out = validateRuleset(rules('true', { type: 'objec' }));
    assert.equal(out.length, 1);
    assert.equal(out[0]!.path, 'config.input_schema');
    assert.match(out[0]!.message, /^invalid JSON Schema: schema is invalid: data\/type must be equal to one of the allowed values/);
  });

  it('an unknown keyword (a typo) is a problem; formats are annotations', () => {
    assert.match(
      messages(rules('true', { type: 'object', requried: ['a'] }))[0]!,
      /config\.input_schema: invalid JSON Schema: strict mode: unknown keyword: "requried"/,
    );
    assert.deepEqual(messages(rules('true', { type: 'object', properties: { e: { type: 'string', format: 'email' } } })), []);
  });

  it('a $ref outside the schema is a problem (nothing is fetched)', () => {
    assert.deepEqual(messages(rules('true', { $ref: 'https://example.com/s.json' })), [
      "config.input_schema: invalid JSON Schema: can't resolve reference https://example.com/s.json from id #",
    ]);
  });

  it('input_schema must be an object or a boolean; input_validation reject or off', () => {
    assert.deepEqual(messages(rules('true', [1] as JsonValue)), ['config.input_schema: must be a JSON Schema (an object or a boolean)']);
    assert.deepEqual(messages(rules('true', 'none', { input_validation: 'warn' })), ['config.input_validation: must be reject or off']);
    assert.deepEqual(messages(rules('user.age > 1', SCHEMA, { input_validation: 'off' })), []);
  });

  it('two rulesets may use one $id (each schema is compiled on its own)', () => {
    const schema = { $id: 'https://svc.example/input', type: 'object', properties: { a: { type: 'number' } } };
    const one = compileRuleset(rules('a > 1', schema));
    const two = compileRuleset(rules('b == 1', { ...schema, properties: { a: { type: 'string' }, b: {} } }));
    assert.deepEqual(one.inputSchema!.check({ a: 'x' }), [{ path: 'a', message: 'must be number' }]);
    assert.deepEqual(two.inputSchema!.check({ a: 1 }), [{ path: 'a', message: 'must be string' }]);
  });
});

describe('input_schema at create: every path read is in the schema', () => {
  it('a path through properties, $ref, items, prefixItems, additionalProperties, anyOf is found', () => {
    const reads = [
      'user.age > 1',
      'order.amount > 2',
      'items[3].price > 1',
      'pair[0] == "x"',
      'pair[1] > 1',
      'tags.anything == "t"',
      'level == "low"',
      'either.a > 1',
      'either.b == "s"',
      '$v > 1',
    ];
    assert.deepEqual(messages(rules(reads.join(' && '))), []);
  });

  it('a missing path is a problem at the expression location with the nearest schema path', () => {
    assert.deepEqual(messages(rules('usr.age >= 18')), [`${AT}: field 'usr.age' is not in input_schema (did you mean 'user.age'?)`]);
    assert.deepEqual(messages(rules('user.agee >= 18')), [`${AT}: field 'user.agee' is not in input_schema (did you mean 'user.age'?)`]);
    assert.deepEqual(messages(rules('items[0].prce > 1')), [`${AT}: field 'items[0].prce' is not in input_schema (did you mean 'items[0].price'?)`]);
    assert.deepEqual(messages(rules('order.amont > 1')), [`${AT}: field 'order.amont' is not in input_schema (did you mean 'order.amount'?)`]);
  });

  it('no suggestion when nothing is near; a path below a leaf is not in the schema', () => {
    assert.deepEqual(messages(rules('zzz > 1')), [`${AT}: field 'zzz' is not in input_schema`]);
    assert.deepEqual(messages(rules('user.age.years > 1')), [`${AT}: field 'user.age.years' is not in input_schema`]);
    assert.deepEqual(messages(rules('pair[2] > 1')), [`${AT}: field 'pair[2]' is not in input_schema`]);
  });

  it('actions and outputs are checked too, each at its location; one problem per path and place', () => {
    const doc = rules('usr.age > 1 || usr.age < 0', SCHEMA, {}, { total: 'order.amout * 2' });
    (doc['steps'] as Obj)['d'] = {
      type: 'action',
      actions: [{ action: 'set_variable', name: 'v', value: 'user.contry' }],
      next_step: 'd2',
    };
    (doc['steps'] as Obj)['d2'] = { type: 'decision', branches: [{ condition: 'usr.age > 1 || usr.age < 0', next_step: 'yes' }], default_next: 'no' };
    assert.deepEqual(messages(doc), [
      "steps.d.actions[0].value: field 'user.contry' is not in input_schema (did you mean 'user.country'?)",
      "steps.yes.output.total: field 'order.amout' is not in input_schema (did you mean 'order.amount'?)",
      "steps.d2.branches[0].condition: field 'usr.age' is not in input_schema (did you mean 'user.age'?)",
    ]);
  });

  it('a schema without properties declares no path', () => {
    assert.deepEqual(messages(rules('a > 1', { type: 'object' })), [`${AT}: field 'a' is not in input_schema`]);
    assert.deepEqual(messages(rules('true', { type: 'object' })), []);
  });
});

describe('input_schema at create: literals of another JSON type', () => {
  it('a comparison with a literal the schema type does not allow is a problem, either side', () => {
    assert.deepEqual(messages(rules('user.age >= "18"')), [`${AT}: field 'user.age' is integer in input_schema but is compared with "18" (a string)`]);
    assert.deepEqual(messages(rules('"US" == user.vip')), [`${AT}: field 'user.vip' is boolean in input_schema but is compared with "US" (a string)`]);
    assert.deepEqual(messages(rules('level == 3')), [`${AT}: field 'level' is string in input_schema but is compared with 3 (a number)`]);
    assert.deepEqual(messages(rules('user.country in ["US", 1]')), [`${AT}: field 'user.country' is string in input_schema but is compared with 1 (a number)`]);
  });

  it('null is a presence check; a number fits integer; a type list allows each; no type allows all', () => {
    const ok = ['user.age == null', 'user.age > 17.5', 'user.nick == "x"', 'user.nick != null', 'tags.x == "a"', 'either.a == "x" || true'];
    assert.deepEqual(messages(rules(ok.slice(0, 5).join(' && '))), []);
    assert.deepEqual(messages(rules('x == 1 && x == "a"', { type: 'object', properties: { x: {} } })), []);
  });
});

describe('InputSchema at run time', () => {
  const compiled = compileRuleset(rules('user.age > 1'));
  const schema = compiled.inputSchema!;

  it('a matching input has no problems; every mismatch is listed with its path', () => {
    assert.deepEqual(schema.check({ user: { age: 30 } }), []);
    assert.deepEqual(schema.check({ user: { age: 'x', vip: 1 }, items: [{ price: 1 }, { price: '2' }] }), [
      { path: 'user.age', message: 'must be integer' },
      { path: 'user.vip', message: 'must be boolean' },
      { path: 'items[1].price', message: 'must be number' },
    ]);
    assert.deepEqual(schema.check({}), [{ path: 'user', message: 'is required' }]);
    assert.deepEqual(schema.check({ user: {} }), [{ path: 'user.age', message: 'is required' }]);
    assert.deepEqual(schema.check({ user: { age: 1 }, level: 'mid' }), [{ path: 'level', message: 'must be one of ["low","high"]' }]);
  });

  it('odd keys are written as the language writes them; additionalProperties names the key', () => {
    const c = compileRuleset(rules('true', { type: 'object', properties: { 'a b': { type: 'number' } }, additionalProperties: false }));
    assert.deepEqual(c.inputSchema!.check({ 'a b': 'x', extra: 1 }), [
      { path: 'extra', message: 'is not allowed (additionalProperties is false)' },
      { path: '.["a b"]', message: 'must be number' },
    ]);
  });

  it('known_input: only the fields given are checked (no required errors, nested ones too)', () => {
    assert.deepEqual(schema.checkKnown({}), []);
    assert.deepEqual(schema.checkKnown({ user: {} }), []);
    assert.deepEqual(schema.checkKnown({ user: { age: 1.5 } }), [{ path: 'user.age', message: 'must be integer' }]);
    assert.deepEqual(schema.check({ user: {} }), [{ path: 'user.age', message: 'is required' }], 'the full check is unchanged');
  });

  it('input_validation off keeps the schema but marks it not enforced', () => {
    const off = compileRuleset(rules('user.age > 1', SCHEMA, { input_validation: 'off' }));
    assert.equal(off.inputSchema!.reject, false);
    assert.equal(schema.reject, true);
    assert.equal(compileRuleset(rules('a > 1', 'none')).inputSchema, null);
  });

  it('validation never changes the input', () => {
    const c = compileRuleset(rules('true', { type: 'object', properties: { a: { type: 'number', default: 5 } } }));
    const input = { b: '1' };
    c.inputSchema!.check(input);
    assert.deepEqual(input, { b: '1' });
  });
});

describe('InputSchema: the subset walker and its promotion to ajv', () => {
  const SUBSET: Obj = {
    type: 'object',
    properties: { user: { type: 'object', properties: { age: { type: 'integer', minimum: 0 } }, required: ['age'], additionalProperties: false } },
    required: ['user'],
  };
  const BAD = { user: { age: -1.5, x: 1 } };
  const BAD_PROBLEMS = [
    { path: 'user.x', message: 'is not allowed (additionalProperties is false)' },
    { path: 'user.age', message: 'must be integer' },
    { path: 'user.age', message: 'must be >= 0' },
  ];

  it('a schema of the subset starts on the walker; one outside it (here $ref) on ajv', () => {
    assert.equal(compileRuleset(rules('user.age > 1', SUBSET)).inputSchema!.engine, 'walker');
    assert.equal(compileRuleset(rules('user.age > 1')).inputSchema!.engine, 'ajv');
  });

  it('a busy schema moves to ajv after 1,000 validations in a row, with the same answers', () => {
    const schema = compileRuleset(rules('user.age > 1', SUBSET)).inputSchema!;
    const before = schema.check(BAD);
    assert.deepEqual(before, BAD_PROBLEMS);
    for (let i = 0; i < 900; i++) schema.check({ user: { age: i } });
    assert.equal(schema.engine, 'walker');
    // The streak starts at the first check (or the second, when other walker checks ran long before).
    for (let i = 0; i < 101; i++) schema.check({ user: { age: i } });
    assert.equal(schema.engine, 'ajv');
    assert.deepEqual(schema.check(BAD), before);
    assert.deepEqual(schema.check({ user: { age: 3 } }), []);
  });

  it('traffic spread over many schemas never promotes them', () => {
    const schemas = Array.from({ length: 100 }, () => compileRuleset(rules('user.age > 1', SUBSET)).inputSchema!);
    for (let round = 0; round < 30; round++) for (const schema of schemas) schema.check({ user: { age: round } });
    assert.ok(schemas.every((schema) => schema.engine === 'walker'));
    assert.deepEqual(schemas[0]!.check(BAD), BAD_PROBLEMS);
  });
});

describe('InputSchema: hostile keys against an object const or enum', () => {
  // ajv's comparison (fast-deep-equal) calls an input object's own `toString`/`valueOf`: with a
  // number there it throws a TypeError, which must not become a 500.
  const CONST: Obj = {
    type: 'object',
    properties: { user: { type: 'object', properties: { tier: { const: { level: 1 } }, kind: { enum: [{ k: 'a' }, 'plain'] } } } },
  };
  const HOSTILE = { user: { tier: { toString: 1 }, kind: { valueOf: 2 } } };
  const PROBLEMS = [
    { path: 'user.tier', message: 'must be {"level":1}' },
    { path: 'user.kind', message: 'must be one of [{"k":"a"},"plain"]' },
  ];

  it('the walker answers problems, not an exception', () => {
    const schema = compileRuleset(rules('user.tier != null', CONST)).inputSchema!;
    assert.equal(schema.engine, 'walker');
    assert.deepEqual(schema.check(HOSTILE), PROBLEMS);
    assert.deepEqual(schema.check({ user: { tier: { level: 1 }, kind: { k: 'a' } } }), []);
  });

  it('after promotion to ajv, the walker answers for the input ajv throws on', () => {
    const schema = compileRuleset(rules('user.tier != null', CONST)).inputSchema!;
    for (let i = 0; i < 1001; i++) schema.check({ user: { tier: { level: 1 } } });
    assert.equal(schema.engine, 'ajv');
    assert.deepEqual(schema.check(HOSTILE), PROBLEMS);
  });

  it("a schema only ajv checks reports the input as not checkable; a filter's known input too", () => {
    const schema = compileRuleset(rules('user.tier != null', { ...CONST, $defs: { unused: { type: 'string' } } })).inputSchema!;
    assert.equal(schema.engine, 'ajv');
    const problems = schema.check(HOSTILE);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!.message, /could not be checked against the input schema/);
    assert.ok(schema.checkKnown(HOSTILE).length > 0, 'known_input: problems, not an exception');
  });
});

describe('the schema answer and inference', () => {
  it('with a schema: the schema as written, inferred false', () => {
    const answer = inputSchemaAnswer(compileRuleset(rules('user.age > 1')));
    assert.deepEqual(answer, { name: 'r', version: '1.0.0', inferred: false, input_validation: 'reject', schema: SCHEMA });
  });

  it('without one: every path read, typed by the literals compared with, {} when unknown', () => {
    const doc = rules(
      'user.age >= 18 && user.country in ["US", "CA"] && (user.code == 1 || user.code == "x") && items[0].price > 1 && $v && f == null',
      'none',
      {},
      {
        total: 'order.amount * 2',
      },
    );
    const answer = inputSchemaAnswer(compileRuleset(doc));
    assert.equal(answer.inferred, true);
    assert.equal(answer.input_validation, 'off');
    assert.deepEqual(answer.schema, {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        f: {},
        items: { type: 'array', items: { type: 'object', properties: { price: { type: 'number' } } } },
        order: { type: 'object', properties: { amount: {} } },
        user: {
          type: 'object',
          properties: { age: { type: 'number' }, code: { type: ['number', 'string'] }, country: { type: 'string' } },
        },
      },
    });
  });

  it('a ruleset that reads nothing infers an object schema without properties', () => {
    assert.deepEqual(inferInputSchema(compileRuleset(rules('true', 'none'))), {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {},
    });
  });

  it('the inferred schema passes the create-time checks of the ruleset it came from', () => {
    const doc = rules('user.age >= 18 && user.tags[2] == "a" && x.y.z != "q" && w', 'none', {}, { o: 'order.amount + 1' });
    const inferred = inferInputSchema(compileRuleset(doc));
    assert.deepEqual(validateRuleset({ ...doc, config: { ...(doc['config'] as Obj), input_schema: inferred } }), []);
  });
});

describe('did-you-mean distance', () => {
  it('is the edit distance', () => {
    assert.equal(distance('usr', 'user'), 1);
    assert.equal(distance('kitten', 'sitting'), 3);
    assert.equal(distance('', 'abc'), 3);
    assert.equal(distance('same', 'same'), 0);
  });
});
