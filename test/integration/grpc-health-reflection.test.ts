/**
 * The standard services beside `rules.RuleService`, against the real built server process:
 *
 * - Server reflection (v1 and v1alpha), with a reflection client written on grpc-js (grpcurl
 *   is not installed here): list the services, fetch the file descriptor of `rules.RuleService`
 *   by symbol and by file name, decode it, and call RPCs (old and new) through a client built
 *   only from those descriptors. An unknown symbol is an error answer, not a broken stream.
 * - `grpc.health.v1.Health`: Check for "" and `rules.RuleService` follows readiness (the rules
 *   dir removed: NOT_SERVING; back: SERVING), an unknown service is NOT_FOUND; Watch sends the
 *   status and each change, SERVICE_UNKNOWN for an unknown service, and on SIGTERM sends
 *   NOT_SERVING and ends, so an open Watch does not hold the shutdown.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadRulesPackage, SERVICE_NAME } from '../../src/transport/grpc/proto.js';
import { LOAN, postRulesets } from '../helpers/grpc-fixtures.js';
import { clientFromReflection, healthCheck, healthClient, reflect } from '../helpers/grpc-reflection.js';
import { startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const RULE_SERVICE_METHODS = Object.keys(loadRulesPackage()[SERVICE_NAME] as object).sort();

/** Calls `method` on a client built from reflection; resolves to the answer or rejects. */
function invoke(client: grpc.Client, method: string, request: object): Promise<any> {
  return new Promise((resolve, reject) => {
    (client as any)[method](request, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: unknown) => (err ? reject(err) : resolve(res)));
  });
}

describe('server reflection', () => {
  let server: ServerProcess;

  before(async () => {
    server = await startServer([]);
    await postRulesets(server.url, [LOAN]);
  });

  after(async () => {
    await server?.stop();
  });

  for (const version of ['v1', 'v1alpha'] as const) {
    it(`${version}: lists rules.RuleService and grpc.health.v1.Health`, async () => {
      const [answer] = await reflect(server.grpcAddress, [{ list_services: '*' }], version);
      assert.equal(answer?.message_response, 'list_services_response');
      const names = answer!.list_services_response!.service.map((s) => s.name).sort();
      assert.deepEqual(names, ['grpc.health.v1.Health', 'rules.RuleService']);
    });

    it(`${version}: the descriptor of rules.RuleService builds a client that calls the server (old and new RPCs)`, async () => {
      const [bySymbol, byFile] = await reflect(server.grpcAddress, [{ file_containing_symbol: SERVICE_NAME }, { file_by_filename: 'rules.proto' }], version);
      assert.equal(bySymbol?.message_response, 'file_descriptor_response');
      const files = bySymbol!.file_descriptor_response!.file_descriptor_proto;
      assert.ok(files.length >= 1);
      assert.deepEqual(byFile!.file_descriptor_response!.file_descriptor_proto, files, 'by file name: the same descriptor');
      const Ctor = clientFromReflection(files, SERVICE_NAME);
      // Every RPC of proto/rules.proto is in the reflected service.
      assert.deepEqual(Object.keys(Ctor.service).sort(), RULE_SERVICE_METHODS);
      const client = new Ctor(server.grpcAddress, grpc.credentials.createInsecure());
      try {
        const res = await invoke(client, 'Execute', { name: 'loan', input_json: JSON.stringify({ user: { age: 30, country: 'US' } }) });
        assert.equal(res.code, 'APPROVED');
        const put = await invoke(client, 'PutRuleset', { ruleset_json: JSON.stringify({ ...LOAN, config: { ...LOAN.config, name: `reflected-${version}` } }) });
        assert.deepEqual({ status: put.status, name: put.name }, { status: 'created', name: `reflected-${version}` });
        const list = await invoke(client, 'ListRuleSets', {});
        assert.ok(list.rulesets.some((r: { name: string }) => r.name === `reflected-${version}`));
      } finally {
        client.close();
      }
    });

    it(`${version}: message symbols resolve to the same file; an unknown symbol is an error answer (NOT_FOUND) and the stream goes on`, async () => {
      const answers = await reflect(
        server.grpcAddress,
        [
          { file_containing_symbol: 'rules.PutRulesetRequest' },
          { file_containing_symbol: 'rules.Nothing' },
          { file_containing_symbol: 'grpc.health.v1.Health' },
        ],
        version,
      );
      assert.equal(answers[0]?.message_response, 'file_descriptor_response');
      assert.equal(answers[1]?.message_response, 'error_response');
      assert.equal(answers[1]?.error_response?.error_code, grpc.status.NOT_FOUND);
      assert.equal(answers[2]?.message_response, 'file_descriptor_response');
      const Health = clientFromReflection(answers[2]!.file_descriptor_response!.file_descriptor_proto, 'grpc.health.v1.Health');
      const client = new Health(server.grpcAddress, grpc.credentials.createInsecure());
      try {
        assert.equal((await invoke(client, 'Check', { service: '' })).status, 'SERVING');
      } finally {
        client.close();
      }
    });
  }
});

describe('grpc.health.v1.Health', () => {
  const dir = tempDir('svc-grpc-health-');
  const rules = join(dir.path, 'rules');
  let server: ServerProcess;
  let health: ReturnType<typeof healthClient>;

  before(async () => {
    mkdirSync(rules);
    server = await startServer(['--rules-dir', rules, '--shutdown-timeout-secs', '30']);
    health = healthClient(server.grpcAddress);
  });

  after(async () => {
    health?.close();
    if (server.child.exitCode === null) await server.stop();
    dir.remove();
  });

  /** A Watch whose answers arrive in `seen`; `next(status)` resolves once that status is the latest. */
  function watch(service: string) {
    const seen: string[] = [];
    const waiters: Array<{ status: string; resolve: () => void }> = [];
    const call = (health['Watch'] as Function).call(health, { service }) as grpc.ClientReadableStream<{ status: string }>;
    let ended = false;
    let error: grpc.ServiceError | undefined;
    call.on('data', (m: { status: string }) => {
      seen.push(m.status);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.status === m.status) {
          waiters[i]!.resolve();
          waiters.splice(i, 1);
        }
      }
    });
    const closed = new Promise<void>((resolve) => {
      call.on('end', () => {
        ended = true;
        resolve();
      });
      call.on('error', (err: grpc.ServiceError) => {
        error = err;
        resolve();
      });
    });
    const next = (status: string, timeoutMs = 10_000): Promise<void> =>
      seen.at(-1) === status
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            const t = setTimeout(() => reject(new Error(`no ${status} within ${timeoutMs} ms; seen ${seen.join(', ')}`)), timeoutMs);
            waiters.push({ status, resolve: () => (clearTimeout(t), resolve()) });
          });
    return { call, seen, next, closed, ended: () => ended, error: () => error };
  }

  it('Check: SERVING for "" and rules.RuleService; NOT_FOUND (svc-error-code NOT_FOUND) for another name', async () => {
    assert.deepEqual(await healthCheck(health, ''), { status: 'SERVING' });
    assert.deepEqual(await healthCheck(health, SERVICE_NAME), { status: 'SERVING' });
    const unknown = await healthCheck(health, 'rules.Nothing');
    assert.equal(unknown.error?.code, grpc.status.NOT_FOUND);
    assert.equal(unknown.error?.metadata.get('svc-error-code')[0], 'NOT_FOUND');
  });

  it('Watch: SERVICE_UNKNOWN for an unknown service, and the call stays open', async () => {
    const w = watch('rules.Nothing');
    await w.next('SERVICE_UNKNOWN');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(w.ended(), false);
    assert.deepEqual(w.seen, ['SERVICE_UNKNOWN']);
    w.call.cancel();
  });

  it('readiness drives both: the rules dir gone is NOT_SERVING (Check, and a change on Watch), back is SERVING', async () => {
    const w = watch('');
    const named = watch(SERVICE_NAME);
    await w.next('SERVING');
    await named.next('SERVING');
    rmSync(rules, { recursive: true, force: true });
    try {
      assert.deepEqual(await healthCheck(health, ''), { status: 'NOT_SERVING' });
      assert.deepEqual(await healthCheck(health, SERVICE_NAME), { status: 'NOT_SERVING' });
      await w.next('NOT_SERVING');
      await named.next('NOT_SERVING');
    } finally {
      mkdirSync(rules, { recursive: true });
    }
    await w.next('SERVING');
    assert.deepEqual(await healthCheck(health, ''), { status: 'SERVING' });
    assert.deepEqual(w.seen, ['SERVING', 'NOT_SERVING', 'SERVING'], 'one message per change');
    w.call.cancel();
    named.call.cancel();
  });

  it('SIGTERM: an open Watch gets NOT_SERVING and ends, and does not hold the shutdown', async () => {
    const w = watch('');
    await w.next('SERVING');
    const started = Date.now();
    const code = await server.stop('SIGTERM');
    await w.closed;
    assert.equal(code, 0);
    assert.deepEqual(w.seen, ['SERVING', 'NOT_SERVING']);
    assert.ok(w.ended() || w.error() !== undefined);
    // The shutdown timeout is 30 s: without the drain the Watch would hold tryShutdown until then.
    assert.ok(Date.now() - started < 10_000, `stopped after ${Date.now() - started} ms`);
  });
});
