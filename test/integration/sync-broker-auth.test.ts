/**
 * Broker credentials against a real nats-server (EXTENSIONS.md 1 "Broker credentials"):
 * token, user/password and TLS with a CA made by the openssl CLI. With the right credentials a
 * writer and a reader sync a rule; with wrong ones (or no CA) the reader keeps serving, reports
 * the broker unreachable in its log and `/health` with the reason, and no secret appears in
 * anything the server wrote or answered. An unreadable creds or CA file stops the start.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, ruleset, servedVersion, waitConnected, waitFor } from '../helpers/sync-cluster.js';

/** Waits for the reader's "broker unreachable" line with `reason`, and for `/health` to say so. */
async function assertRefused(proc: ServerProcess, reason: RegExp): Promise<void> {
  const line = await proc.waitForLog((l) => l['msg'] === 'broker unreachable; retrying' && reason.test(String(l['err'])), 20_000);
  assert.equal(line['level'], 'warn');
  const health = await http(proc.url, 'GET', '/health');
  assert.equal(health.status, 200, 'the reader keeps serving');
  assert.equal(health.body.sync.connected, false);
  assert.match(String(health.body.sync.broker.last_error), reason);
}

/** Asserts that none of `secrets` occurs in the processes' whole output or in their `/health` answers. */
async function assertNoSecret(procs: ServerProcess[], secrets: string[]): Promise<void> {
  for (const proc of procs) {
    const health = JSON.stringify((await http(proc.url, 'GET', '/health')).body);
    const output = proc.output();
    assert.ok(output.length > 0);
    for (const secret of secrets) {
      assert.ok(!output.includes(secret), `a secret appears in the output of ${proc.url}`);
      assert.ok(!health.includes(secret), `a secret appears in /health of ${proc.url}`);
    }
  }
}

/** Writes a rule on the writer and waits until the reader serves it. */
async function assertSyncs(writer: ServerProcess, reader: ServerProcess, name: string): Promise<void> {
  await Promise.all([waitConnected(writer), waitConnected(reader)]);
  assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', ruleset(name, '1.0.0'))).body.status, 'created');
  await waitFor(`${name} on the reader`, async () => (await servedVersion(reader.url, name)) === '1.0.0');
}

describe('broker sync with token authentication (nats-server --auth)', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());
  const TOKEN = 'tok-3f9a1c7e5b2d4e6f8a0b1c2d';
  const WRONG = 'tok-wrong-77c1e2d3f4a5b6c7';

  it('syncs with --sync-token (flag and SVC_SYNC_TOKEN); a wrong token is refused and never logged', async () => {
    await cluster.startNats({ extraArgs: ['--auth', TOKEN] });
    const writer = await cluster.writer(['--instance-id', 'tok-writer', '--sync-token', TOKEN]);
    const reader = await cluster.start(['--role', 'reader', '--sync-url', cluster.nats!.url, '--instance-id', 'tok-reader'], {
      env: { SVC_SYNC_TOKEN: TOKEN },
    });
    await assertSyncs(writer, reader, 'with-token');
    const connected = await reader.waitForLog((l) => l['msg'] === 'broker connected');
    assert.equal(connected['auth'], 'token');

    const wrong = await cluster.reader(['--instance-id', 'tok-wrong', '--sync-token', WRONG]);
    const none = await cluster.reader(['--instance-id', 'tok-none']);
    await assertRefused(wrong, /Authorization Violation/);
    await assertRefused(none, /Authorization Violation/);
    assert.equal(await servedVersion(wrong.url, 'with-token'), null);
    await assertNoSecret([writer, reader, wrong, none], [TOKEN, WRONG]);
  });
});

describe('broker sync with user/password authentication (nats-server --user --pass)', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());
  const PASSWORD = 'pw-9d8c7b6a5f4e3d2c1b0a';
  const WRONG = 'pw-wrong-0a1b2c3d4e5f';

  it('syncs with --sync-user/--sync-password; a wrong password is refused and never logged', async () => {
    await cluster.startNats({ extraArgs: ['--user', 'svc', '--pass', PASSWORD] });
    const writer = await cluster.writer(['--instance-id', 'pw-writer', '--sync-user', 'svc', '--sync-password', PASSWORD]);
    const reader = await cluster.start(['--role', 'reader', '--sync-url', cluster.nats!.url, '--instance-id', 'pw-reader', '--sync-user', 'svc'], {
      env: { SVC_SYNC_PASSWORD: PASSWORD },
    });
    await assertSyncs(writer, reader, 'with-password');
    assert.equal((await reader.waitForLog((l) => l['msg'] === 'broker connected'))['auth'], 'user');

    const wrong = await cluster.reader(['--instance-id', 'pw-wrong', '--sync-user', 'svc', '--sync-password', WRONG]);
    await assertRefused(wrong, /Authorization Violation/);
    await assertNoSecret([writer, reader, wrong], [PASSWORD, WRONG]);
  });

  it('never shows credentials written into --sync-url (the client does not use them: the flags are the way)', async () => {
    const url = cluster.nats!.url.replace('nats://', `nats://svc:${PASSWORD}@`);
    const reader = await cluster.start(['--role', 'reader', '--sync-url', url, '--instance-id', 'pw-in-url']);
    await assertRefused(reader, /Authorization Violation/);
    const health = await http(reader.url, 'GET', '/health');
    assert.equal(health.body.sync.broker.url, cluster.nats!.url.replace('nats://', 'nats://***@'));
    await assertNoSecret([reader], [PASSWORD]);
  });
});

/** A CA and a server certificate for 127.0.0.1 signed by it, made with the openssl CLI in `dir`. */
function makeCa(dir: string): { ca: string; cert: string; key: string } {
  const p = (f: string) => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=svc test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run(['req', ...ec, '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', '/CN=nats test server']);
  writeFileSync(p('server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  run([
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('server.pem'),
    '-days',
    '2',
    '-extfile',
    p('server.ext'),
  ]);
  return { ca: p('ca.pem'), cert: p('server.pem'), key: p('server.key') };
}

describe('broker sync over TLS (nats-server --tls, --sync-tls-ca)', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('syncs when the server is verified against --sync-tls-ca; without it the connection fails', async () => {
    const pki = makeCa(cluster.dir('svc-nats-pki-'));
    await cluster.startNats({ extraArgs: ['--tls', '--tlscert', pki.cert, '--tlskey', pki.key] });
    const writer = await cluster.writer(['--instance-id', 'tls-writer', '--sync-tls-ca', pki.ca]);
    const reader = await cluster.reader(['--instance-id', 'tls-reader', '--sync-tls-ca', pki.ca]);
    await assertSyncs(writer, reader, 'over-tls');
    assert.equal((await reader.waitForLog((l) => l['msg'] === 'broker connected'))['tls'], true);

    const noCa = await cluster.reader(['--instance-id', 'tls-no-ca']);
    await assertRefused(noCa, /certificate/i);
    assert.equal(await servedVersion(noCa.url, 'over-tls'), null);
  });

  it('does not fall back to plain text: --sync-tls-ca against a server without TLS fails', async () => {
    const plain = new SyncCluster();
    try {
      const pki = makeCa(plain.dir('svc-nats-pki-'));
      await plain.startNats();
      const reader = await plain.reader(['--instance-id', 'tls-to-plain', '--sync-tls-ca', pki.ca]);
      await assertRefused(reader, /tls/i);
    } finally {
      await plain.dispose();
    }
  });
});

describe('broker credential files that cannot be read', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  for (const flag of ['--sync-creds-file', '--sync-tls-ca']) {
    it(`${flag}: a missing file stops the start with a message naming the flag and the file`, async () => {
      const missing = join(cluster.dir(), 'missing.file');
      await assert.rejects(startServer(['--disable-grpc', '--role', 'reader', '--sync-url', 'nats://127.0.0.1:1', flag, missing]), (err: Error) => {
        assert.match(err.message, /server exited \(1\)/);
        assert.ok(err.message.includes('svc-server could not start'), err.message);
        assert.ok(err.message.includes(`${flag}: cannot read ${missing}: ENOENT`), err.message);
        return true;
      });
    });
  }
});
