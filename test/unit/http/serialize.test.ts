/**
 * The hot-route serializers (src/transport/http/serialize.ts) write exactly what JSON.stringify
 * writes, for any result shape: property-tested with arbitrary JSON outputs, frozen or not,
 * extra keys, traces and odd numbers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { serializeBatch, serializeEval, serializeExecution } from '../../../src/transport/http/serialize.js';

const deepFreeze = (v: unknown): unknown => {
  if (typeof v === 'object' && v !== null) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
};

const json = fc.jsonValue();
const output = fc.dictionary(fc.string(), json);
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, Number.NaN, Infinity));

test('serializeExecution equals JSON.stringify (property)', () => {
  fc.assert(
    fc.property(
      fc.fullUnicodeString(),
      fc.fullUnicodeString(),
      output,
      number,
      fc.boolean(),
      fc.option(fc.constantFrom('trace', 'extra', 'reorder')),
      (code, message, out, us, frozen, twist) => {
        const o = frozen ? deepFreeze(out) : out;
        let r: any = { code, message, output: o, duration_us: us };
        if (twist === 'trace') r.trace = { path: 'a -> b', steps: [{ id: 'a', name: 'a', duration_us: 1 }] };
        if (twist === 'extra') r.tenant = 'x';
        if (twist === 'reorder') r = { message, code, output: o, duration_us: us };
        assert.equal(serializeExecution(r), JSON.stringify(r));
        assert.equal(serializeExecution(r), JSON.stringify(r), 'again (cached static output)');
      },
    ),
    { numRuns: 500 },
  );
});

test('serializeExecution falls back for non-object outputs and other shapes', () => {
  for (const r of [
    { code: 'A', message: 'm', output: null, duration_us: 1 },
    { code: 'A', message: 'm', output: [1, 2], duration_us: 1 },
    { code: 1, message: 'm', output: {}, duration_us: 1 },
    { code: 'A', message: 'm', output: {}, duration_us: 1, trace: undefined },
    { code: 'A', message: 'm', output: {} },
  ]) {
    assert.equal(serializeExecution(r as never), JSON.stringify(r));
  }
});

test('serializeExecution: one frozen output under two codes gives each its own envelope', () => {
  const out = Object.freeze({ tier: 'gold' });
  const a = { code: 'A', message: 'first', output: out, duration_us: 3 };
  const b = { code: 'B', message: 'second', output: out, duration_us: 4 };
  for (let i = 0; i < 3; i++) {
    assert.equal(serializeExecution(a), JSON.stringify(a));
    assert.equal(serializeExecution(b), JSON.stringify(b));
  }
});

test('serializeExecution: the cached envelope is exact for text outside Latin-1 and lone surrogates', () => {
  // The cached prefix is copied into one flat string through UTF-8: exact because JSON text
  // escapes lone surrogates (so nothing is lost in the round trip).
  for (const [code, message, out] of [
    ['\ud800', 'lone \udc00 surrogate', { s: '\udbff' }],
    ['ÄÖÜ', 'emoji 😀 and CJK 漢字', { t: '€' }],
    ['A', '', {}],
  ] as const) {
    const r = { code, message, output: Object.freeze({ ...out }), duration_us: 7 };
    assert.equal(serializeExecution(r), JSON.stringify(r));
    assert.equal(serializeExecution(r), JSON.stringify(r), 'again, from the cache');
  }
});

test('serializeEval equals JSON.stringify (property)', () => {
  fc.assert(
    fc.property(json, fc.fullUnicodeString(), fc.option(fc.constantFrom('extra', 'undefined', 'reorder')), (result, parsed, twist) => {
      let r: any = { result, parsed };
      if (twist === 'extra') r.x = 1;
      if (twist === 'undefined') r = { result: undefined, parsed };
      if (twist === 'reorder') r = { parsed, result };
      assert.equal(serializeEval(r), JSON.stringify(r));
    }),
    { numRuns: 500 },
  );
});

test('serializeBatch equals JSON.stringify (property): results, error items, traces, shared frozen outputs, odd shapes', () => {
  const shared = Object.freeze({ tier: 'gold' });
  const item = fc.oneof(
    fc
      .tuple(fc.fullUnicodeString(), fc.fullUnicodeString(), fc.oneof(output, fc.constant(shared)), number)
      .map(([code, message, o, us]) => ({ code, message, output: o, duration_us: us })),
    fc.record({ error: fc.fullUnicodeString(), code: fc.constantFrom('BAD_REQUEST', 'INTERNAL_ERROR', 'TIMEOUT') }),
    fc.constant({ code: 'A', message: '', output: shared, duration_us: 1, trace: { path: 'a', steps: [] } }),
    json,
  );
  const summary = fc.record({ total: fc.nat(), success: fc.nat(), failed: fc.nat(), total_duration_us: number });
  fc.assert(
    fc.property(fc.array(item, { maxLength: 20 }), summary, fc.option(fc.constantFrom('reorder', 'extra', 'not-array')), (results, sum, twist) => {
      let b: any = { results, summary: sum };
      if (twist === 'reorder') b = { summary: sum, results };
      if (twist === 'extra') b.more = 1;
      if (twist === 'not-array') b = { results: { 0: results[0] }, summary: sum };
      assert.equal(serializeBatch(b), JSON.stringify(b));
    }),
    { numRuns: 500 },
  );
});
