/**
 * Graceful shutdown covers gRPC calls in flight, in two ways:
 * - a raw HTTP/2 client sends half of an Execute request, the server gets SIGTERM (the test
 *   waits for `shutting down`), then the rest: the call still answers OK and the process exits 0
 *   (a server that cancelled open streams at shutdown fails this);
 * - a long Execute is running when SIGTERM arrives (the test waits for the ruleset's own
 *   `counting started` log line): it completes OK, then the process exits 0.
 */
import assert from 'node:assert/strict';
import { connect as h2connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { connect, type TestClient } from '../helpers/grpc-client.js';
import { ruleServiceDefinition } from '../../src/transport/grpc/proto.js';
import { counter, postRulesets } from '../helpers/grpc-fixtures.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

// About a second of work: 2 steps per count.
const LIMIT = 10_000_000;

const ARGS = ['--max-steps', String(4 * LIMIT), '--execution-timeout-ms', '600000', '--shutdown-timeout-secs', '120'];

describe('graceful shutdown over gRPC: a request half sent when SIGTERM arrives', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer(ARGS);
    await postRulesets(server.url, [counter('slow')]);
  });
  after(async () => {
    await server?.stop('SIGKILL');
  });

  it('is still answered OK after the signal, then the process exits 0', async () => {
    const method = ruleServiceDefinition()['Execute']!;
    const message = method.requestSerialize({ name: 'slow', input_json: JSON.stringify({ limit: 5 }), trace: false });
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message]);
    frame.writeUInt32BE(message.length, 1);

    const session = h2connect(`http://${server.grpcAddress}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': method.path, 'content-type': 'application/grpc', te: 'trailers' });
      const chunks: Buffer[] = [];
      let status: string | undefined;
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('trailers', (t) => (status = String(t['grpc-status'])));
      const ended = new Promise<void>((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('error', reject);
        stream.on('close', () => resolve());
      });
      stream.write(frame.subarray(0, 8));
      // NOTE: a PING ack comes from the native HTTP/2 layer and does not prove that grpc-js has
      // registered the session and the half-sent call. A complete Health call on the same session
      // (a later stream id) does: once it is answered, the earlier stream is in the server's hands.
      const health = ruleServiceDefinition()['Health']!;
      const probe = session.request({ ':method': 'POST', ':path': health.path, 'content-type': 'application/grpc', te: 'trailers' });
      await new Promise<void>((resolve, reject) => {
        probe.on('error', reject);
        probe.on('close', () => resolve());
        probe.resume();
        probe.end(Buffer.from([0, 0, 0, 0, 0]));
      });

      const exited = server.stop('SIGTERM');
      await server.waitForLog((l) => l['msg'] === 'shutting down');
      stream.end(frame.subarray(8));
      await ended;

      assert.equal(status, '0', `grpc-status ${status}`);
      const body = Buffer.concat(chunks);
      const res = method.responseDeserialize(body.subarray(5)) as { code: string; output_json: string };
      assert.equal(res.code, 'COUNTED');
      assert.deepEqual(JSON.parse(res.output_json), { n: 5 });
      assert.equal(await exited, 0);
    } finally {
      session.destroy();
    }
  });
});

describe('graceful shutdown over gRPC: a long execution when SIGTERM arrives', () => {
  let server: ServerProcess;
  let client: TestClient;
  before(async () => {
    server = await startServer(ARGS);
    await postRulesets(server.url, [counter('slow')]);
    client = connect(server.grpcAddress);
  });
  after(async () => {
    client?.close();
    await server?.stop('SIGKILL');
  });

  it('a call in flight when SIGTERM arrives completes OK, then the process exits 0', async () => {
    await client.ok('Health', {}); // the connection is up before the slow call
    const pending = client.call('Execute', { name: 'slow', input_json: JSON.stringify({ limit: LIMIT }) });
    await server.waitForLog((l) => l['msg'] === 'counting started' && l['ruleset'] === 'slow', 60_000);
    const exited = server.stop('SIGTERM');

    const out = await pending;
    assert.equal(out.ok, true, out.ok ? '' : `call failed: ${out.code} ${out.details}`);
    if (out.ok) {
      assert.equal(out.value.code, 'COUNTED');
      assert.deepEqual(JSON.parse(out.value.output_json), { n: LIMIT });
    }
    assert.equal(await exited, 0);
    assert.ok(server.logs.some((l) => l['msg'] === 'shutting down'));
    assert.ok(server.stdout.some((l) => l['event'] === 'server_stopped'));
  });
});
