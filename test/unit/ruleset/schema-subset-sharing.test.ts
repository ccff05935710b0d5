/**
 * The schema walker shares leaf nodes, name lists and whole trees between schemas written alike
 * (src/ruleset/schema-subset.ts): validators that share them must still answer for their own
 * schema, with their own paths, required names and bounds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSubset, subsetTree } from '../../../src/ruleset/schema-subset.js';

function errorsOf(schema: Record<string, unknown>, input: unknown): Array<{ instancePath: string; keyword: string; params: unknown }> {
  const validate = compileSubset(schema as never);
  assert.ok(validate !== null);
  validate(input);
  return (validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, params: e.params }));
}

const LEAF = { type: 'integer', minimum: 0, maximum: 5 };

test('a leaf written alike in two schemas reports under each schema own property name', () => {
  const a = { type: 'object', properties: { x: LEAF } };
  const b = { type: 'object', properties: { y: { ...LEAF } }, required: ['y'] };
  assert.deepEqual(errorsOf(a, { x: 9 }), [{ instancePath: '/x', keyword: 'maximum', params: { comparison: '<=', limit: 5 } }]);
  assert.deepEqual(errorsOf(b, { y: -1 }), [{ instancePath: '/y', keyword: 'minimum', params: { comparison: '>=', limit: 0 } }]);
  assert.deepEqual(errorsOf(b, {}), [{ instancePath: '', keyword: 'required', params: { missingProperty: 'y' } }]);
  assert.deepEqual(errorsOf(a, {}), []);
});

test('equal name lists in a different order keep each schema own required slots', () => {
  const first = { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'number' } } };
  const second = { type: 'object', required: ['a', 'b'], properties: { b: { type: 'number' }, a: { type: 'string' } } };
  for (const schema of [first, second]) {
    assert.deepEqual(errorsOf(schema, { a: 'x' }), [{ instancePath: '', keyword: 'required', params: { missingProperty: 'b' } }]);
    assert.deepEqual(errorsOf(schema, { a: 1, b: 2 }), [{ instancePath: '/a', keyword: 'type', params: { type: 'string' } }]);
    assert.deepEqual(errorsOf(schema, { a: 'x', b: 2 }), []);
  }
});

test('schemas that differ only in their bounds share one tree and keep their own bounds', () => {
  const low = { type: 'object', properties: { n: { type: 'number', maximum: 10 } } };
  const high = { type: 'object', properties: { n: { type: 'number', maximum: 100 } } };
  const lowCheck = compileSubset(low as never)!;
  const highCheck = compileSubset(high as never)!;
  assert.ok(subsetTree(lowCheck) !== null);
  assert.equal(subsetTree(lowCheck), subsetTree(highCheck), 'one tree for both');
  assert.deepEqual(errorsOf(low, { n: 50 }), [{ instancePath: '/n', keyword: 'maximum', params: { comparison: '<=', limit: 10 } }]);
  assert.deepEqual(errorsOf(high, { n: 50 }), []);
  assert.deepEqual(errorsOf(high, { n: 500 }), [{ instancePath: '/n', keyword: 'maximum', params: { comparison: '<=', limit: 100 } }]);
});

test('every kind of bound is read from its own schema, in a shared tree, nested and in items', () => {
  const schemaWith = (k: number) => ({
    type: 'object',
    properties: {
      a: { type: 'number', minimum: k, exclusiveMaximum: k + 10, exclusiveMinimum: k - 1, maximum: k + 20 },
      s: { type: 'string', minLength: k, maxLength: k + 1 },
      list: { type: 'array', minItems: k, maxItems: k + 1, items: { type: 'integer', maximum: k * 2 } },
      deep: { type: 'object', additionalProperties: { type: 'number', minimum: k * 3 } },
    },
  });
  const one = schemaWith(1);
  const five = schemaWith(5);
  assert.equal(subsetTree(compileSubset(one as never)!), subsetTree(compileSubset(five as never)!));
  const input = { a: 1, s: 'x', list: [9], deep: { q: 2 } };
  const keywords = (schema: Record<string, unknown>) => errorsOf(schema, input).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`);
  assert.deepEqual(keywords(one), ['/list/0 maximum {"comparison":"<=","limit":2}', '/deep/q minimum {"comparison":">=","limit":3}']);
  assert.deepEqual(keywords(five), [
    '/a minimum {"comparison":">=","limit":5}',
    '/a exclusiveMinimum {"comparison":">","limit":4}',
    '/s minLength {"limit":5}',
    '/list minItems {"limit":5}',
    '/deep/q minimum {"comparison":">=","limit":15}',
  ]);
});

test('a property named like a bound keyword is part of the shape, not a bound', () => {
  const a = { type: 'object', properties: { maximum: { type: 'number', maximum: 1 } } };
  const b = { type: 'object', properties: { minimum: { type: 'number', maximum: 1 } } };
  assert.notEqual(subsetTree(compileSubset(a as never)!), subsetTree(compileSubset(b as never)!));
  assert.deepEqual(errorsOf(a, { maximum: 2 }), [{ instancePath: '/maximum', keyword: 'maximum', params: { comparison: '<=', limit: 1 } }]);
  assert.deepEqual(errorsOf(b, { maximum: 2 }), []);
});

test('schemas that differ in anything but a bound do not share a tree', () => {
  const base = { type: 'object', required: ['n'], properties: { n: { type: 'number', maximum: 10 } } };
  const others = [
    { type: 'object', required: ['n'], properties: { n: { type: 'integer', maximum: 10 } } },
    { type: 'object', required: [], properties: { n: { type: 'number', maximum: 10 } } },
    { type: 'object', required: ['n'], properties: { n: { type: 'number', minimum: 10 } } },
    { type: 'object', required: ['n'], properties: { n: { type: 'number', maximum: 10, enum: [1, 2] } } },
  ];
  const tree = subsetTree(compileSubset(base as never)!);
  for (const other of others) assert.notEqual(subsetTree(compileSubset(other as never)!), tree, JSON.stringify(other));
});

test('a schema of a known shape whose bound is not a valid bound stays outside the subset', () => {
  // A known shape skips building the tree (only the bounds are read): each bound is still
  // checked as building it would, so these fall back to the full validator as before.
  const valid = {
    type: 'object',
    properties: { s: { type: 'string', maxLength: 3 }, n: { type: 'number', maximum: 10 }, l: { type: 'array', items: { type: 'number', minimum: 0 } } },
  };
  assert.ok(compileSubset(valid as never) !== null);
  const withBound = (path: 's' | 'n' | 'l', key: string, value: unknown) => {
    const copy = JSON.parse(JSON.stringify(valid)) as { properties: Record<string, Record<string, unknown>> };
    if (path === 'l') (copy.properties['l']!['items'] as Record<string, unknown>)[key] = value;
    else copy.properties[path]![key] = value;
    return copy;
  };
  for (const bad of [
    withBound('s', 'maxLength', -1),
    withBound('s', 'maxLength', 2.5),
    withBound('s', 'maxLength', '3'),
    withBound('n', 'maximum', 'x'),
    withBound('n', 'maximum', null),
    withBound('l', 'minimum', [0]),
  ]) {
    assert.equal(compileSubset(bad as never), null, JSON.stringify(bad));
  }
  // And a valid one of the same shape shares the tree, with its own bounds.
  const other = withBound('l', 'minimum', 5);
  const check = compileSubset(other as never)!;
  assert.equal(subsetTree(check), subsetTree(compileSubset(valid as never)!));
  assert.deepEqual(errorsOf(other, { l: [6, 4] }), [{ instancePath: '/l/1', keyword: 'minimum', params: { comparison: '>=', limit: 5 } }]);
  assert.deepEqual(errorsOf(valid, { l: [6, 4], s: 'abcd' }), [{ instancePath: '/s', keyword: 'maxLength', params: { limit: 3 } }]);
});
