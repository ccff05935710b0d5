/**
 * The gRPC server's transports and settings against the real built server process: TLS from
 * openssl-made PEM files (and every way the files can be unusable), the Unix socket of
 * --uds-path (stale socket removed, non-socket and live socket refused, removed at shutdown),
 * --disable-grpc, tenancy metadata, a reader instance, and Health when readiness fails.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, makeSelfSignedCert, Status } from '../helpers/grpc-client.js';
import { LOAN, postRulesets } from '../helpers/grpc-fixtures.js';
import { http, startFails, tempDir, withServer } from '../helpers/server-process.js';

const APPROVE = JSON.stringify({ user: { age: 30, country: 'US' } });

let tmp: { path: string; remove: () => void };
before(() => {
  tmp = tempDir('svc-grpc-');
});
after(() => tmp.remove());

describe('TLS', () => {
  let pem: ReturnType<typeof makeSelfSignedCert>;
  before(() => {
    const dir = join(tmp.path, 'tls');
    mkdirSync(dir);
    pem = makeSelfSignedCert(dir);
  });

  it('serves every method over TLS with an openssl-made certificate; a plaintext client is refused', async () => {
    await withServer(['--grpc-tls-cert', pem.certPath, '--grpc-tls-key', pem.keyPath], async (server) => {
      const line = server.logs.find((l) => l['msg'] === 'grpc listening');
      assert.equal(line?.['tls'], true);
      await postRulesets(server.url, [LOAN]);
      const secure = connect(server.grpcAddress, { caPem: pem.cert });
      const plain = connect(server.grpcAddress);
      try {
        assert.equal((await secure.ok('Execute', { name: 'loan', input_json: APPROVE })).code, 'APPROVED');
        assert.equal((await secure.ok('ListRuleSets', {})).rulesets.length, 1);
        assert.equal(JSON.parse((await secure.ok('GetRuleSet', { name: 'loan' })).ruleset_json).config.name, 'loan');
        assert.equal((await secure.ok('Health', {})).status, 'healthy');
        assert.equal((await secure.ok('Eval', { expression: '1 + 2' })).result_json, '3');
        assert.equal((await secure.ok('BatchExecute', { name: 'loan', inputs_json: [APPROVE] })).summary.success, 1);
        const refused = await plain.call('Health', {});
        assert.equal(refused.ok, false);
        if (!refused.ok) assert.equal(refused.code, Status.UNAVAILABLE);
      } finally {
        secure.close();
        plain.close();
      }
    });
  });

  it('a missing certificate file stops the start with a message naming it', async () => {
    const missing = join(tmp.path, 'tls', 'nope.pem');
    const text = await startFails(['--grpc-tls-cert', missing, '--grpc-tls-key', pem.keyPath]);
    assert.match(text, /server exited \(1\)/);
    assert.ok(text.includes(`gRPC TLS certificate ${missing} (--grpc-tls-cert) does not exist`), text);
  });

  it('a missing key file stops the start with a message naming it', async () => {
    const missing = join(tmp.path, 'tls', 'nokey.pem');
    const text = await startFails(['--grpc-tls-cert', pem.certPath, '--grpc-tls-key', missing]);
    assert.ok(text.includes(`gRPC TLS private key ${missing} (--grpc-tls-key) does not exist`), text);
  });

  it('an unreadable key path (a directory) stops the start with a message naming it', async () => {
    const dir = join(tmp.path, 'tls', 'a-dir');
    mkdirSync(dir);
    const text = await startFails(['--grpc-tls-cert', pem.certPath, '--grpc-tls-key', dir]);
    assert.ok(text.includes(`gRPC TLS private key ${dir} (--grpc-tls-key) is a directory`), text);
  });

  it('a certificate file that is not PEM stops the start', async () => {
    const bad = join(tmp.path, 'tls', 'garbage.pem');
    writeFileSync(bad, 'this is not a certificate\n');
    const text = await startFails(['--grpc-tls-cert', bad, '--grpc-tls-key', pem.keyPath]);
    assert.ok(text.includes(`gRPC TLS certificate ${bad} (--grpc-tls-cert) is not a PEM certificate`), text);
  });

  it('a broken PEM certificate stops the start', async () => {
    const bad = join(tmp.path, 'tls', 'broken.pem');
    writeFileSync(bad, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const text = await startFails(['--grpc-tls-cert', bad, '--grpc-tls-key', pem.keyPath]);
    assert.ok(text.includes(`gRPC TLS certificate ${bad} (--grpc-tls-cert) is not a valid PEM certificate`), text);
  });

  it('a key that is not PEM, or does not match the certificate, stops the start', async () => {
    const notKey = join(tmp.path, 'tls', 'notkey.pem');
    writeFileSync(notKey, 'nope\n');
    const t1 = await startFails(['--grpc-tls-cert', pem.certPath, '--grpc-tls-key', notKey]);
    assert.ok(t1.includes(`gRPC TLS private key ${notKey} (--grpc-tls-key) is not a PEM private key`), t1);
    const otherDir = join(tmp.path, 'tls', 'other');
    mkdirSync(otherDir);
    const other = makeSelfSignedCert(otherDir);
    const t2 = await startFails(['--grpc-tls-cert', pem.certPath, '--grpc-tls-key', other.keyPath]);
    assert.ok(t2.includes(`gRPC TLS private key ${other.keyPath} (--grpc-tls-key) does not match the certificate ${pem.certPath}`), t2);
  });
});

describe('Unix socket (--uds-path)', () => {
  it('serves the same service on unix:///abs/path, audits source_ip null, and removes the socket at shutdown', async () => {
    const sock = join(tmp.path, 'svc.sock');
    const code = await withServer(['--uds-path', sock, '--audit-sample-rate', '100'], async (server) => {
      const line = await server.waitForLog((l) => l['msg'] === 'uds listening');
      assert.equal(line['path'], sock);
      assert.ok(lstatSync(sock).isSocket());
      await postRulesets(server.url, [LOAN]);
      const client = connect(`unix://${sock}`);
      try {
        const res = await client.ok('Execute', { name: 'loan', input_json: APPROVE, trace: true });
        assert.equal(res.code, 'APPROVED');
        assert.equal(res.trace.path, 'check -> ok');
        assert.equal((await client.ok('Health', {})).status, 'healthy');
        assert.equal((await client.ok('ListRuleSets', {})).rulesets[0].name, 'loan');
        const missing = await client.call('Execute', { name: 'nope', input_json: '{}' });
        assert.equal(missing.ok ? 0 : missing.code, Status.NOT_FOUND);
        for (let i = 0; i < 100 && !server.stdout.some((l) => l['event'] === 'rule_executed' && l['rule_name'] === 'loan'); i++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        const audit = server.stdout.find((l) => l['event'] === 'rule_executed' && l['rule_name'] === 'loan');
        assert.ok(audit, 'rule_executed line');
        assert.equal(audit['source_ip'], null);
      } finally {
        client.close();
      }
    });
    assert.equal(code, 0);
    assert.equal(existsSync(sock), false, 'socket removed at shutdown');
  });

  it('removes a stale socket file at start', async () => {
    const sock = join(tmp.path, 'stale.sock');
    // A process that dies while listening leaves its socket file behind.
    spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    assert.ok(lstatSync(sock).isSocket(), 'a stale socket exists');
    await withServer(['--uds-path', sock], async (server) => {
      await server.waitForLog((l) => l['msg'] === 'uds listening');
      const client = connect(`unix://${sock}`);
      try {
        assert.equal((await client.ok('Health', {})).status, 'healthy');
      } finally {
        client.close();
      }
    });
  });

  it('refuses to delete a path that is not a socket', async () => {
    const file = join(tmp.path, 'precious.txt');
    writeFileSync(file, 'keep me');
    const text = await startFails(['--uds-path', file]);
    assert.ok(text.includes(`--uds-path ${file} exists and is not a socket; refusing to remove it`), text);
    assert.equal(readFileSync(file, 'utf8'), 'keep me');
  });

  it('refuses a socket another process is listening on', async () => {
    const sock = join(tmp.path, 'live.sock');
    const other = createServer();
    await new Promise<void>((r) => other.listen(sock, r));
    try {
      const text = await startFails(['--uds-path', sock]);
      assert.ok(text.includes(`--uds-path ${sock} is in use`), text);
      assert.ok(lstatSync(sock).isSocket(), 'the live socket is untouched');
    } finally {
      await new Promise((r) => other.close(r));
    }
  });

  it('--disable-grpc with --uds-path serves gRPC on the socket only', async () => {
    const sock = join(tmp.path, 'only.sock');
    await withServer(['--disable-grpc', '--uds-path', sock], async (server) => {
      await server.waitForLog((l) => l['msg'] === 'uds listening');
      assert.equal(
        server.logs.some((l) => l['msg'] === 'grpc listening'),
        false,
      );
      const client = connect(`unix://${sock}`);
      try {
        assert.equal((await client.ok('Health', {})).status, 'healthy');
      } finally {
        client.close();
      }
    });
  });
});

describe('--disable-grpc', () => {
  it('starts no gRPC listener; HTTP still serves', async () => {
    await withServer(['--disable-grpc'], async (server) => {
      for (let i = 0; i < 200 && !server.stdout.some((l) => l['event'] === 'server_started'); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(server.stdout.some((l) => l['event'] === 'server_started'));
      assert.equal(
        server.logs.some((l) => l['msg'] === 'grpc listening' || l['msg'] === 'uds listening'),
        false,
      );
      assert.equal((await http(server.url, 'GET', '/healthz/live')).status, 200);
    });
  });
});

describe('tenancy metadata', () => {
  it('with --multi-tenancy-enabled, x-tenant-id selects the tenant', async () => {
    await withServer(['--multi-tenancy-enabled'], async (server) => {
      // Tenants must exist before they hold rulesets (docs/tenancy.md).
      assert.equal((await http(server.url, 'POST', '/api/v1/tenants', { id: 'acme' })).status, 201);
      await postRulesets(server.url, [LOAN], { 'x-tenant-id': 'acme' });
      const client = connect(server.grpcAddress);
      try {
        assert.equal((await client.ok('Execute', { name: 'loan', input_json: APPROVE }, { 'x-tenant-id': 'acme' })).code, 'APPROVED');
        assert.deepEqual(
          (await client.ok('ListRuleSets', {}, { 'x-tenant-id': 'acme' })).rulesets.map((r: any) => r.name),
          ['loan'],
        );
        assert.deepEqual((await client.ok('ListRuleSets', {})).rulesets, []);
        const other = await client.call('Execute', { name: 'loan', input_json: APPROVE }, { 'x-tenant-id': 'globex' });
        assert.equal(other.ok ? 0 : other.code, Status.NOT_FOUND, 'an unknown tenant is NOT_FOUND (TENANT_NOT_FOUND)');
      } finally {
        client.close();
      }
    });
  });

  it('without it, x-tenant-id is ignored (everything is tenant default)', async () => {
    await withServer([], async (server) => {
      await postRulesets(server.url, [LOAN]);
      const client = connect(server.grpcAddress);
      try {
        assert.equal((await client.ok('Execute', { name: 'loan', input_json: APPROVE }, { 'x-tenant-id': 'acme' })).code, 'APPROVED');
      } finally {
        client.close();
      }
    });
  });
});

describe('a reader instance, and Health when readiness fails', () => {
  it('serves gRPC reads on a reader (HTTP and gRPC writes are READ_ONLY); Health is UNAVAILABLE once the rules dir is gone', async () => {
    const rules = join(tmp.path, 'rules');
    mkdirSync(rules);
    writeFileSync(join(rules, 'loan.json'), JSON.stringify(LOAN));
    await withServer(['--role', 'reader', '--rules-dir', rules], async (server) => {
      const client = connect(server.grpcAddress);
      try {
        assert.equal((await client.ok('Execute', { name: 'loan', input_json: APPROVE })).code, 'APPROVED');
        assert.equal((await client.ok('Health', {})).rules_count, 1);
        const write = await http(server.url, 'POST', '/api/v1/rulesets', LOAN);
        assert.equal(write.status, 409);
        assert.equal(write.body.code, 'READ_ONLY');
        // The gRPC writes are refused alike: FAILED_PRECONDITION, svc-error-code READ_ONLY, HTTP's message.
        for (const [method, request] of [
          ['PutRuleset', { ruleset_json: JSON.stringify(LOAN) }],
          ['DeleteRuleset', { name: 'loan' }],
          ['Rollback', { name: 'loan', seq: 1 }],
          ['PutData', { name: 'zips', data_json: '{}' }],
          ['SetAuditSampleRate', { sample_rate: 5 }],
        ] as const) {
          const out = await client.call(method, request);
          assert.equal(out.ok, false, method);
          if (!out.ok) {
            assert.equal(out.code, Status.FAILED_PRECONDITION, method);
            assert.equal(out.svcCode, 'READ_ONLY', method);
            assert.equal(out.details, write.body.error, method);
          }
        }
        assert.equal((await client.ok('GetRuleSet', { name: 'loan' })).ruleset_json, JSON.stringify(LOAN), 'nothing changed');

        rmSync(rules, { recursive: true, force: true });
        const health = await client.call('Health', {});
        assert.equal(health.ok, false);
        if (!health.ok) {
          assert.equal(health.code, Status.UNAVAILABLE);
          assert.equal(health.svcCode, 'NOT_READY');
          assert.match(health.details, /not ready: rules dir not writable/);
        }
      } finally {
        client.close();
      }
    });
  });
});
