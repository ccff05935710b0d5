/** svc-cluster's decisions before it forks (src/cluster/plan.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterProblem, parseWorkers, takeWorkersFlag, withoutInstanceId, workerInstanceId } from '../../../src/cluster/plan.js';

test('--workers is taken out of the arguments in both spellings', () => {
  assert.deepEqual(takeWorkersFlag(['--workers', '4', '--role', 'reader']), { workers: 4, rest: ['--role', 'reader'] });
  assert.deepEqual(takeWorkersFlag(['--rules-dir', 'x', '--workers=2']), { workers: 2, rest: ['--rules-dir', 'x'] });
  assert.deepEqual(takeWorkersFlag(['--port', '80']), { workers: null, rest: ['--port', '80'] });
  for (const bad of [['--workers'], ['--workers', '0'], ['--workers=257'], ['--workers', '2.5'], ['--workers', 'x']]) {
    assert.throws(() => takeWorkersFlag(bad), /--workers must be a whole number from 1 to 256/);
  }
  assert.equal(parseWorkers('8', 'SVC_WORKERS'), 8);
  assert.throws(() => parseWorkers('-1', 'SVC_WORKERS'), /SVC_WORKERS/);
});

test('each worker gets its own instance id within 64 characters', () => {
  assert.deepEqual(withoutInstanceId(['--instance-id', 'r1', '--role', 'reader', '--instance-id=r2']), ['--role', 'reader']);
  assert.equal(workerInstanceId('reader', 3), 'reader-w3');
  const long = 'x'.repeat(64);
  assert.equal(workerInstanceId(long, 12).length, 64);
  assert.ok(workerInstanceId(long, 12).endsWith('-w12'));
});

test('configurations that several identical workers cannot serve are refused with the reason', () => {
  const base = { role: 'standalone' as const, rulesDir: '/r', watchRules: true, udsPath: null };
  assert.equal(clusterProblem(base), null);
  assert.equal(clusterProblem({ ...base, role: 'reader', rulesDir: null, watchRules: false }), null);
  assert.match(clusterProblem({ ...base, watchRules: false })!, /--watch-rules/);
  assert.match(clusterProblem({ ...base, rulesDir: null })!, /--rules-dir/);
  assert.match(clusterProblem({ ...base, role: 'writer' })!, /single process/);
  assert.match(clusterProblem({ ...base, udsPath: '/tmp/s.sock' })!, /--uds-path/);
});
