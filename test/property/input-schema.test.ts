/**
 * Input schemas, proven on generated shapes (fast-check, EXTENSIONS.md 2 "Input schema"): for an
 * arbitrary schema of nested objects, arrays and typed leaves, through the real `RuleService`,
 * an input generated from the schema's shape never gets INPUT_INVALID (execute and batch), and
 * the same input with one leaf replaced by a value of another JSON type always does, with a
 * problem at that leaf's path.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { JsonValue } from '../../src/expr/ast.js';
import { renderPath } from '../../src/expr/index.js';
import { ServiceError } from '../../src/service/errors.js';
import type { CallContext } from '../../src/service/types.js';
import { makeHarness, type Harness } from '../unit/http/harness.js';

type Leaf = 'string' | 'number' | 'integer' | 'boolean' | 'null';
type Shape = { kind: 'leaf'; type: Leaf } | { kind: 'object'; props: [string, Shape][] } | { kind: 'array'; items: Shape };
type Seg = string | number;

const RUNS = Number(process.env['INPUT_SCHEMA_RUNS'] ?? 300);
const ctx: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };

const KEYS = ['a', 'b', 'user', 'age', 'x1', 'odd key', 'é', 'items'];

const shapeArb: fc.Arbitrary<Shape> = fc.letrec<{ shape: Shape; object: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Leaf>('string', 'number', 'integer', 'boolean', 'null').map((type): Shape => ({ kind: 'leaf', type })),
    tie('object'),
    tie('shape').map((items): Shape => ({ kind: 'array', items })),
  ),
  object: fc
    .uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie('shape')), { minLength: 1, maxLength: 4, selector: ([k]) => k })
    .map((props): Shape => ({ kind: 'object', props })),
})).object;

/** The JSON Schema of a shape: every property required, nothing else allowed. */
function schemaOf(s: Shape): JsonValue {
  switch (s.kind) {
    case 'leaf':
      return { type: s.type };
    case 'array':
      return { type: 'array', items: schemaOf(s.items) };
    case 'object': {
      const properties: { [k: string]: JsonValue } = {};
      for (const [k, v] of s.props) properties[k] = schemaOf(v);
      return { type: 'object', properties, required: s.props.map(([k]) => k), additionalProperties: false };
    }
  }
}

const LEAF_VALUES: Record<Leaf, fc.Arbitrary<JsonValue>> = {
  string: fc.string({ maxLength: 6 }),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }),
  integer: fc.integer(),
  boolean: fc.boolean(),
  null: fc.constant(null),
};

/** A value matching a shape. */
function valueOf(s: Shape): fc.Arbitrary<JsonValue> {
  switch (s.kind) {
    case 'leaf':
      return LEAF_VALUES[s.type];
    case 'array':
      return fc.array(valueOf(s.items), { maxLength: 3 });
    case 'object':
      return fc.tuple(...s.props.map(([, v]) => valueOf(v))).map((vals) => {
        const out: { [k: string]: JsonValue } = {};
        s.props.forEach(([k], i) => (out[k] = vals[i]!));
        return out;
      });
  }
}

/** Every leaf of `value` (by the shape) with its path and type. */
function leaves(s: Shape, value: JsonValue, path: Seg[] = [], out: { path: Seg[]; type: Leaf }[] = []): { path: Seg[]; type: Leaf }[] {
  if (s.kind === 'leaf') out.push({ path, type: s.type });
  else if (s.kind === 'array') (value as JsonValue[]).forEach((v, i) => leaves(s.items, v, [...path, i], out));
  else for (const [k, v] of s.props) leaves(v, (value as { [k: string]: JsonValue })[k]!, [...path, k], out);
  return out;
}

/** Values of every JSON type; a wrong one for a leaf is one its type does not accept. */
const OTHER_VALUES: JsonValue[] = ['text', 1.5, 7, true, null, [], {}];
function accepts(type: Leaf, v: JsonValue): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
  }
}

function replaced(value: JsonValue, path: Seg[], v: JsonValue): JsonValue {
  if (path.length === 0) return v;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((x, i) => (i === head ? replaced(x, rest, v) : x));
  const out = { ...(value as { [k: string]: JsonValue }) };
  out[head as string] = replaced(out[head as string]!, rest, v);
  return out;
}

let h: Harness;
let seq = 0;

before(async () => {
  h = await makeHarness();
});

after(async () => {
  await h?.close();
});

/** Stores a ruleset with `schema` (reading no field) and returns its name. */
async function store(schema: JsonValue): Promise<string> {
  const name = `p${++seq}`;
  await h.service.putRuleset(ctx, {
    config: { name, entry_step: 't', input_schema: schema },
    steps: { t: { type: 'terminal', result: { code: 'DONE' } } },
  });
  return name;
}

test('inputs generated from the schema never get INPUT_INVALID (execute and batch)', async () => {
  await fc.assert(
    fc.asyncProperty(
      shapeArb.chain((shape) => fc.tuple(fc.constant(shape), fc.array(valueOf(shape), { minLength: 1, maxLength: 3 }))),
      async ([shape, inputs]) => {
        const name = await store(schemaOf(shape));
        for (const input of inputs) assert.equal(h.service.execute(ctx, name, input, false).code, 'DONE');
        const batch = h.service.executeBatch(ctx, name, inputs, false);
        assert.equal(batch.summary.failed, 0, JSON.stringify(batch.results));
      },
    ),
    { numRuns: RUNS },
  );
});

test('an input with one leaf of another JSON type always gets INPUT_INVALID naming that leaf', async () => {
  const arb = shapeArb
    .chain((shape) => fc.tuple(fc.constant(shape), valueOf(shape)))
    .filter(([shape, value]) => leaves(shape, value).length > 0)
    .chain(([shape, value]) => {
      const all = leaves(shape, value);
      return fc.tuple(fc.constant(shape), fc.constant(value), fc.constantFrom(...all), fc.constantFrom(...OTHER_VALUES));
    })
    .filter(([, , leaf, wrong]) => !accepts(leaf.type, wrong));
  await fc.assert(
    fc.asyncProperty(arb, async ([shape, value, leaf, wrong]) => {
      const name = await store(schemaOf(shape));
      const input = replaced(value, leaf.path, wrong);
      const where = renderPath({ scope: 'input', segments: leaf.path });
      let thrown: unknown;
      try {
        h.service.execute(ctx, name, input, false);
      } catch (err) {
        thrown = err;
      }
      assert.ok(thrown instanceof ServiceError, `no error for ${JSON.stringify(input)}`);
      assert.equal(thrown.code, 'INPUT_INVALID');
      assert.equal(thrown.httpStatus, 400);
      const problems = thrown.details?.['problems'] as { path: string; message: string }[];
      assert.ok(
        problems.some((p) => p.path === where && p.message.startsWith('must be')),
        `${where} in ${JSON.stringify(problems)}`,
      );
      const batch = h.service.executeBatch(ctx, name, [value, input], false);
      assert.equal(batch.results[0] !== undefined && 'code' in batch.results[0] ? batch.results[0].code : null, 'DONE');
      assert.equal((batch.results[1] as { code: string }).code, 'INPUT_INVALID');
    }),
    { numRuns: RUNS },
  );
});
