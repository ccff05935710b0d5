/**
 * The subset validator (src/ruleset/schema-subset.ts) against ajv, configured as
 * src/ruleset/input-schema.ts configures it, on generated schemas and inputs (fast-check):
 *   - a schema the subset takes is one ajv compiles (the subset never accepts what ajv refuses);
 *   - on every input, the same verdict and the same errors (keyword, instance path, params,
 *     message), in the same order.
 * Schemas mix every keyword of the subset, boolean subschemas, and values the meta-schema refuses
 * (the subset must then decline, and input-schema.ts falls back to ajv).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonValue } from '../../src/expr/ast.js';
import { compileSubset, SUBSET_GROUPS, subsetMatchesAjv } from '../../src/ruleset/schema-subset.js';

const RUNS = Number(process.env['SCHEMA_SUBSET_RUNS'] ?? 1500);

function newAjv(): Ajv2020 {
  return new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateFormats: false,
    useDefaults: false,
    coerceTypes: false,
    logger: false,
  });
}
const ajv = newAjv();

const KEYS = ['a', 'b', 'c', 'x/y', 't~1', '0', '10', 'é', 'constructor', 'toString'];
const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];

const scalar: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0.5, -0.5, 1e21, 3, 2.5),
  fc.constantFrom('', 'a', 'ab', 'abc', '\u{1F600}', '\u{1F600}x', 'x/y', 'é'),
  fc.boolean(),
  fc.constant(null),
);

const value: fc.Arbitrary<JsonValue> = fc.letrec<{ v: JsonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('v'), { maxKeys: 4 }) as fc.Arbitrary<JsonValue>,
  ),
})).v;

const goodCount = fc.integer({ min: 0, max: 4 });
const badCount = fc.constantFrom(-1, 1.5);

/**
 * An object schema over the subset's keywords (`sub`: its subschemas). With `bad`, a few of its
 * keyword values are ones the meta-schema refuses, and now and then `pattern` (outside the subset).
 */
function objectSchema(sub: fc.Arbitrary<JsonValue>, bad: boolean): fc.Arbitrary<JsonValue> {
  const or = <T>(good: fc.Arbitrary<T>, wrong: fc.Arbitrary<T>): fc.Arbitrary<T> =>
    bad ? fc.oneof({ arbitrary: good, weight: 30 }, { arbitrary: wrong, weight: 1 }) : good;
  return fc
    .record(
      {
        type: or<JsonValue>(
          fc.oneof(fc.constantFrom(...TYPES), fc.uniqueArray(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 3 })),
          fc.constantFrom<JsonValue>(['string', 'string'], 'float', []),
        ),
        const: value,
        enum: or<JsonValue>(fc.array(value, { minLength: 1, maxLength: 3 }), fc.constant([])),
        maximum: or<JsonValue>(fc.integer({ min: -3, max: 3 }), scalar),
        minimum: fc.integer({ min: -3, max: 3 }),
        exclusiveMaximum: fc.integer({ min: -3, max: 3 }),
        exclusiveMinimum: fc.constantFrom(0, 0.5, -1),
        maxLength: or(goodCount, badCount),
        minLength: or(goodCount, badCount),
        maxItems: or(goodCount, badCount),
        minItems: or(goodCount, badCount),
        items: sub,
        required: or(fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 3 }), fc.constant(['a', 'a'])),
        additionalProperties: sub,
        properties: fc.dictionary(fc.constantFrom(...KEYS), sub, { maxKeys: 4 }) as fc.Arbitrary<JsonValue>,
        format: fc.constantFrom('email', 'date-time', 'no-such-format'),
        title: fc.constant('t'),
        description: fc.constant('d'),
        examples: fc.constant([1]),
        pattern: fc.constant('^a'),
      },
      { requiredKeys: [] },
    )
    .map((s) => {
      const out = { ...s } as Record<string, JsonValue>;
      if (!bad || out['title'] === undefined || out['description'] === undefined || out['examples'] === undefined) delete out['pattern'];
      return out as JsonValue;
    });
}

/** Subschemas: booleans or (smaller) object schemas, inside the subset. */
const subschema: fc.Arbitrary<JsonValue> = fc.letrec<{ s: JsonValue }>((tie) => ({
  s: fc.oneof({ depthSize: 'small', maxDepth: 2 }, fc.boolean(), objectSchema(tie('s'), false)),
})).s;

/** A schema: mostly an object (a boolean now and then). */
const schema: fc.Arbitrary<JsonValue> = fc.oneof({ arbitrary: objectSchema(subschema, true), weight: 9 }, { arbitrary: fc.boolean(), weight: 1 });

/** Input near the schema's shape: often objects with the schema's keys. */
const input: fc.Arbitrary<JsonValue> = fc.oneof(value, fc.dictionary(fc.constantFrom(...KEYS), value, { minKeys: 1, maxKeys: 6 }) as fc.Arbitrary<JsonValue>);

function strip(errors: readonly { instancePath: string; keyword: string; params: unknown; message?: string }[] | null | undefined): unknown {
  return (errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, params: e.params, message: e.message }));
}

function outcome(run: () => boolean): boolean | string {
  try {
    return run();
  } catch (err) {
    return `throws ${String(err)}`;
  }
}

test('the subset lists ajv rule groups in the live order', () => {
  assert.equal(subsetMatchesAjv(ajv.RULES.rules), true);
  assert.equal(SUBSET_GROUPS.length, ajv.RULES.rules.length);
});

test('subset validator: same verdict and errors as ajv on generated schemas and inputs', () => {
  let taken = 0;
  fc.assert(
    fc.property(schema, fc.array(input, { minLength: 1, maxLength: 6 }), (s, inputs) => {
      const fast = compileSubset(s);
      if (fast === null) return;
      if (typeof s === 'object' && s !== null && Object.keys(s).length > 0) taken++;
      const compiled = newAjv().compile(s as object); // throws: the subset took a schema ajv refuses
      for (const data of inputs) {
        const at = `on ${JSON.stringify(data)} with ${JSON.stringify(s)}`;
        // ajv's `equal` throws on an input object with an own non-function `toString`/`valueOf`;
        // the walker then answers by JSON equality instead of throwing (a 400, not a 500).
        const expected = outcome(() => compiled(data));
        const actual = outcome(() => fast(data));
        if (typeof expected === 'string' && expected.startsWith('throws TypeError')) {
          assert.equal(typeof actual, 'boolean', `the walker answers where ajv throws ${at}`);
          continue;
        }
        assert.deepEqual(actual, expected, `verdict ${at}`);
        if (expected === true || expected === false) assert.deepEqual(strip(fast.errors), strip(compiled.errors), `errors ${at}`);
      }
    }),
    { numRuns: RUNS },
  );
  assert.ok(taken > RUNS / 3, `only ${taken} of ${RUNS} schemas were in the subset`);
});

test('subset declines what is outside it', () => {
  for (const s of [
    { pattern: '^a' },
    { type: 'object', properties: { a: { multipleOf: 2 } } },
    { enum: [] },
    { minLength: -1 },
    { required: ['a', 'a'] },
    { type: ['string', 'string'] },
    { type: [] },
    { $ref: '#/$defs/a', $defs: { a: true } },
    { properties: JSON.parse('{"__proto__": {"type": "string"}}') as JsonValue },
    { maximum: '3' },
  ] as JsonValue[]) {
    assert.equal(compileSubset(s), null, JSON.stringify(s));
  }
});
