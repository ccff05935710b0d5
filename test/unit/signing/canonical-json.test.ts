import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, CanonicalJsonError, compareCodePoints, signedBytes, unsignedCanonical } from '../../../src/signing/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and writes no whitespace', () => {
    const value = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: null }, A: true };
    assert.equal(canonicalJson(value), '{"A":true,"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('keeps array order', () => {
    assert.equal(canonicalJson([3, 1, 2, 'b', 'a']), '[3,1,2,"b","a"]');
  });

  it('orders keys by code point, including non-ASCII and astral characters', () => {
    // U+FF61 (halfwidth ideographic full stop) sorts before U+1F600 (emoji) by code point,
    // although its UTF-16 code unit 0xFF61 is above the emoji's lead surrogate 0xD83D.
    const value = { '\u{1F600}': 1, '\uFF61': 2, é: 3, z: 4, Z: 5, '': 6, ab: 7, a: 8 };
    assert.equal(canonicalJson(value), '{"":6,"Z":5,"a":8,"ab":7,"z":4,"é":3,"｡":2,"😀":1}');
    assert.ok(compareCodePoints('\uFF61', '\u{1F600}') < 0);
    assert.ok('\uFF61' > '\u{1F600}', 'sanity: UTF-16 order differs');
  });

  it('writes numbers as JSON.stringify does', () => {
    assert.equal(canonicalJson({ a: 1.0, b: 1e21, c: 1e-7, d: -0, e: 0.1, f: 123456789012 }), '{"a":1,"b":1e+21,"c":1e-7,"d":0,"e":0.1,"f":123456789012}');
    assert.equal(canonicalJson(JSON.parse('{"x":1.0,"y":1E2,"z":2.50}')), '{"x":1,"y":100,"z":2.5}');
    assert.equal(canonicalJson([Number.NaN, Number.POSITIVE_INFINITY]), '[null,null]');
  });

  it('writes strings as JSON.stringify does (unicode kept, controls escaped)', () => {
    const s = 'héllo "w" \\ \n\t\u0001 😀 \u2028';
    assert.equal(canonicalJson({ s }), `{"s":${JSON.stringify(s)}}`);
    assert.equal(canonicalJson('😀é'), '"😀é"');
  });

  it('drops undefined members and writes undefined array items as null', () => {
    assert.equal(canonicalJson({ a: undefined, b: 1, c: () => 1 }), '{"b":1}');
    assert.equal(canonicalJson([undefined, 1]), '[null,1]');
  });

  it('keeps an own __proto__ key as data', () => {
    const v = JSON.parse('{"__proto__":{"x":1},"a":2}') as Record<string, unknown>;
    assert.equal(canonicalJson(v), '{"__proto__":{"x":1},"a":2}');
  });

  it('rejects cycles, BigInt and top-level undefined', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => canonicalJson(cyclic), CanonicalJsonError);
    assert.throws(() => canonicalJson({ n: 1n }), CanonicalJsonError);
    assert.throws(() => canonicalJson(undefined), CanonicalJsonError);
  });

  it('gives the same text for the same data in any key order', () => {
    assert.equal(canonicalJson({ x: { b: 1, a: 2 }, y: 1 }), canonicalJson({ y: 1, x: { a: 2, b: 1 } }));
  });
});

describe('unsignedCanonical', () => {
  it('drops only the top-level _signature', () => {
    const doc = { config: { _signature: 'inner stays' }, _signature: { signature: 'x' }, b: 1 };
    assert.equal(unsignedCanonical(doc), '{"b":1,"config":{"_signature":"inner stays"}}');
    assert.deepEqual(signedBytes(doc), Buffer.from('{"b":1,"config":{"_signature":"inner stays"}}', 'utf8'));
  });

  it('equals canonicalJson for a doc without _signature', () => {
    assert.equal(unsignedCanonical({ b: 1, a: 2 }), '{"a":2,"b":1}');
  });
});
