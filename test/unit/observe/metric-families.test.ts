import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { HistogramData, registerCounterFamily, registerHistogramFamily } from '../../../src/observe/metric-families.js';
import { parseExposition, value } from './exposition.js';

test('HistogramData: a value equal to a bound falls in that bucket (le is inclusive)', () => {
  const h = new HistogramData([0.1, 1]);
  h.observe(0.1);
  h.observe(0.10001);
  h.observe(1);
  h.observe(5);
  assert.deepEqual([...h.counts], [1, 2, 1]);
  assert.equal(h.count, 4);
  assert.ok(Math.abs(h.sum - 6.20001) < 1e-12);
});

test('HistogramData: NaN is ignored and negative values count as 0', () => {
  const h = new HistogramData([0.1]);
  h.observe(Number.NaN);
  h.observe(-3);
  assert.deepEqual([...h.counts], [1, 0]);
  assert.equal(h.count, 1);
  assert.equal(h.sum, 0);
});

test('families render as counter and cumulative histogram series read at scrape time', async () => {
  const registry = new Registry();
  let n = 1;
  const h = new HistogramData([0.5, 1]);
  registerCounterFamily(registry, 'x_total', 'X', function* () {
    yield [{ kind: 'a"b\\c' }, n];
  });
  registerHistogramFamily(registry, 'x_seconds', 'X seconds', function* () {
    yield [{ kind: 'k' }, h];
  });
  h.observe(0.2);
  h.observe(0.7);
  h.observe(3);
  n = 7;
  const text = await registry.metrics();
  const exp = parseExposition(text);
  assert.equal(exp.types.get('x_total'), 'counter');
  assert.equal(exp.types.get('x_seconds'), 'histogram');
  assert.equal(value(exp, 'x_total', { kind: 'a"b\\c' }), 7, 'label values are escaped and read back');
  assert.equal(value(exp, 'x_seconds_bucket', { kind: 'k', le: '0.5' }), 1);
  assert.equal(value(exp, 'x_seconds_bucket', { kind: 'k', le: '1' }), 2);
  assert.equal(value(exp, 'x_seconds_bucket', { kind: 'k', le: '+Inf' }), 3);
  assert.equal(value(exp, 'x_seconds_count', { kind: 'k' }), 3);
  assert.ok(Math.abs(value(exp, 'x_seconds_sum', { kind: 'k' }) - 3.9) < 1e-12);
  assert.match(text, /x_seconds_bucket\{kind="k",le="\+Inf"\} 3/);
});
