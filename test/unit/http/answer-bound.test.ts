/**
 * EXTENSIONS.md 6 "Answers": an answer over `--max-response-bytes` is not sent, on every route
 * and both request paths (hot dispatcher, fastify): 500 LIMIT_EXCEEDED naming the bound. And
 * "Every error answer is in the catalog": an unexpected error is reported with its stack, also
 * when the façade already wrapped it, and the stack never reaches the caller.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ServiceError, toServiceError } from '../../../src/service/errors.js';
import { answerTooLarge, checkAnswerText } from '../../../src/transport/answer-bound.js';
import { errorAnswer } from '../../../src/transport/http/errors.js';
import { ageRules, assertError, makeHarness, type Harness } from './harness.js';

const MAX = 4000;

describe('checkAnswerText', () => {
  it('counts UTF-8 bytes, not UTF-16 units, near the bound', () => {
    checkAnswerText('a'.repeat(MAX), MAX);
    assert.throws(
      () => checkAnswerText('a'.repeat(MAX + 1), MAX),
      (e: ServiceError) => e.code === 'LIMIT_EXCEEDED',
    );
    // 'é' is 2 bytes: 2001 of them are 4002 bytes, over a 4000-byte bound in 2001 units.
    checkAnswerText('é'.repeat(2000), MAX);
    assert.throws(() => checkAnswerText('é'.repeat(2001), MAX), /answer of 4002 bytes exceeds --max-response-bytes \(4000\)/);
  });
  it('names the size in MB for large answers', () => {
    assert.equal(answerTooLarge(16_600_000, 10485760).message, 'answer of 16.6 MB exceeds --max-response-bytes (10485760)');
  });
});

describe('answers over --max-response-bytes are LIMIT_EXCEEDED', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ maxResponseBytes: MAX });
    const doc = ageRules('big', { description: 'd'.repeat(MAX) });
    assert.equal((await h.request('POST', '/api/v1/rulesets', doc)).status, 200);
    assert.equal((await h.request('POST', '/api/v1/rulesets', ageRules('age'))).status, 200);
  });
  after(() => h.close());

  it('eval (hot dispatcher and fastify)', async () => {
    const body = { expression: 'upper(s)', context: { s: 'x'.repeat(MAX) } };
    assertError(await h.request('POST', '/api/v1/eval', body), 500, 'LIMIT_EXCEEDED', /exceeds --max-response-bytes \(4000\)/);
    // A charset spelling the hot dispatcher leaves to fastify.
    const viaFastify = await h.request('POST', '/api/v1/eval', JSON.stringify(body), { 'content-type': 'application/json;  charset=utf-8' });
    assertError(viaFastify, 500, 'LIMIT_EXCEEDED');
    const small = await h.request('POST', '/api/v1/eval', { expression: 'upper(s)', context: { s: 'x'.repeat(100) } });
    assert.equal(small.status, 200);
  });
  it('execute and batch', async () => {
    const one = await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 30 } } });
    assert.equal(one.status, 200);
    const inputs = Array.from({ length: 200 }, () => ({ user: { age: 30 } }));
    const batch = await h.request('POST', '/api/v1/execute/age/batch', { inputs });
    assertError(batch, 500, 'LIMIT_EXCEEDED', /--max-response-bytes/);
  });
  it('get ruleset and versions (fastify JSON routes)', async () => {
    assertError(await h.request('GET', '/api/v1/rulesets/big'), 500, 'LIMIT_EXCEEDED');
    assert.equal((await h.request('GET', '/api/v1/rulesets/age')).status, 200);
    assert.equal((await h.request('GET', '/api/v1/rulesets/age')).headers['content-type'], 'application/json; charset=utf-8');
  });
});

describe('filter answers are bounded with their SQL text', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ maxResponseBytes: 60 });
    assert.equal((await h.request('POST', '/api/v1/rulesets', ageRules('age'))).status, 200);
  });
  after(() => h.close());
  it('a filter answer over the bound is LIMIT_EXCEEDED', async () => {
    assertError(await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: ['ADULT'] }), 500, 'LIMIT_EXCEEDED');
  });
});

describe('unexpected errors are reported with their stack', () => {
  const req = { url: '/api/v1/eval', socket: {} } as unknown as IncomingMessage;
  it('a wrapped RangeError (toServiceError) is reported with the original error', () => {
    const seen: unknown[] = [];
    const wrapped = toServiceError(new RangeError('Invalid string length'));
    const e = errorAnswer(wrapped, req, (err) => seen.push(err));
    assert.equal(e.code, 'INTERNAL_ERROR');
    assert.equal(seen.length, 1);
    assert.ok(seen[0] instanceof RangeError && typeof seen[0].stack === 'string');
    assert.deepEqual(Object.keys(e.toBody()).sort(), ['code', 'error']);
    assert.doesNotMatch(JSON.stringify(e.toBody()), /at /);
  });
  it('a bare error is reported; a catalog error is not', () => {
    const seen: unknown[] = [];
    errorAnswer(new TypeError('boom'), req, (err) => seen.push(err));
    errorAnswer(new ServiceError('INTERNAL_ERROR', 'no matching branch'), req, (err) => seen.push(err));
    errorAnswer(new ServiceError('LIMIT_EXCEEDED', 'too big'), req, (err) => seen.push(err));
    assert.equal(seen.length, 1);
    assert.ok(seen[0] instanceof TypeError);
  });
});
