/**
 * The schema walker shares leaf nodes and name lists between schemas written alike
 * (src/ruleset/schema-subset.ts): validators that share them must still answer for their own
 * schema, with their own paths, required names and bounds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSubset } from '../../../src/ruleset/schema-subset.js';

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

test('leaves that differ only in a bound are not shared', () => {
  const low = { type: 'object', properties: { n: { type: 'number', maximum: 10 } } };
  const high = { type: 'object', properties: { n: { type: 'number', maximum: 100 } } };
  assert.deepEqual(errorsOf(low, { n: 50 }), [{ instancePath: '/n', keyword: 'maximum', params: { comparison: '<=', limit: 10 } }]);
  assert.deepEqual(errorsOf(high, { n: 50 }), []);
});
