/**
 * The JSON text rules shared by HTTP bodies and gRPC `*_json` fields (src/transport/json-text.ts):
 * numbers outside the double range are refused (EXTENSIONS.md 6 "Numbers"), in-range ones of
 * every written form are kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceError } from '../../../src/service/errors.js';
import { parseJsonText } from '../../../src/transport/json-text.js';

const badRequest = (text: string): void => {
  assert.throws(
    () => parseJsonText(text),
    (err: unknown) => err instanceof ServiceError && err.code === 'BAD_REQUEST' && /outside the double range/.test(err.message),
    text.slice(0, 80),
  );
};

test('a number outside the double range anywhere in the text is BAD_REQUEST', () => {
  badRequest('{"x": 1e309}');
  badRequest('{"x": -1E+400}');
  badRequest('{"input": {"a": [1, 2, {"b": 2.5e308}]}}');
  badRequest(`[${'9'.repeat(400)}]`);
});

test('in-range numbers of every form are kept, and strings that look like numbers are not numbers', () => {
  assert.deepEqual(parseJsonText('{"x": 1e308, "y": -1.7976931348623157e308, "z": 1e-400, "w": 5e-324}'), {
    x: 1e308,
    y: -1.7976931348623157e308,
    z: 0,
    w: 5e-324,
  });
  assert.deepEqual(parseJsonText('{"s": "1e309", "t": "9e999"}'), { s: '1e309', t: '9e999' });
  assert.deepEqual(parseJsonText(`{"n": ${'9'.repeat(300)}}`), { n: Number('9'.repeat(300)) });
});
