/**
 * `--log-level` and request logging against the real built server: at `debug` every
 * answered HTTP request and gRPC call writes one debug line (method, url, status, duration,
 * source ip); at `info` there are none, and no debug line at all.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { connect } from '../helpers/grpc-client.js';
import { http, startServer } from '../helpers/server-process.js';

const RULESET = {
  config: { name: 'logme', entry_step: 'end' },
  steps: { end: { type: 'terminal', result: { code: 'DONE' } } },
};

/** One HTTP write, one execution, one 404, one gRPC call. */
async function traffic(url: string, grpcAddress: string): Promise<void> {
  assert.equal((await http(url, 'POST', '/api/v1/rulesets', RULESET)).status, 200);
  assert.equal((await http(url, 'POST', '/api/v1/execute/logme?x=1', { input: {} })).status, 200);
  assert.equal((await http(url, 'GET', '/api/v1/rulesets/missing')).status, 404);
  const client = connect(grpcAddress);
  try {
    assert.equal((await client.ok('Execute', { name: 'logme', input_json: '{}' })).code, 'DONE');
  } finally {
    client.close();
  }
}

describe('request logging', () => {
  it('--log-level debug: one debug line per HTTP request and per gRPC call', async () => {
    const server = await startServer(['--log-level', 'debug']);
    try {
      await traffic(server.url, server.grpcAddress);
      const execute = await server.waitForLog((l) => l['msg'] === 'http request' && l['url'] === '/api/v1/execute/logme?x=1');
      assert.equal(execute['level'], 'debug');
      assert.equal(execute['method'], 'POST');
      assert.equal(execute['status'], 200);
      assert.equal(typeof execute['duration_ms'], 'number');
      assert.ok((execute['duration_ms'] as number) >= 0);
      assert.equal(execute['source_ip'], '127.0.0.1');
      const missing = await server.waitForLog((l) => l['msg'] === 'http request' && l['url'] === '/api/v1/rulesets/missing');
      assert.equal(missing['method'], 'GET');
      assert.equal(missing['status'], 404);
      const grpc = await server.waitForLog((l) => l['msg'] === 'grpc request');
      assert.equal(grpc['level'], 'debug');
      assert.equal(grpc['rpc'], 'rules.RuleService/Execute');
      assert.equal(grpc['status'], 'OK');
      assert.equal(typeof grpc['duration_ms'], 'number');
      assert.equal(grpc['source_ip'], '127.0.0.1');
    } finally {
      await server.stop();
    }
  });

  it('--log-level info: no request lines and no debug lines', async () => {
    const server = await startServer(['--log-level', 'info']);
    try {
      await traffic(server.url, server.grpcAddress);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    // Every line has been read once stderr has ended.
    const stderr = server.child.stderr!;
    if (!stderr.readableEnded) await once(stderr, 'end');
    assert.ok(
      server.logs.some((l) => l['msg'] === 'http listening'),
      'info lines are written',
    );
    assert.deepEqual(
      server.logs.filter((l) => l['msg'] === 'http request' || l['msg'] === 'grpc request' || l['level'] === 'debug'),
      [],
    );
  });
});
