/**
 * Transport security against the real built server process (EXTENSIONS.md 1 "TLS" and
 * "Warning"): HTTPS from openssl-made PEM files (and the files that stop the start), mTLS on
 * HTTPS and gRPC (no client certificate, one from an untrusted CA, one from the trusted CA),
 * the mode of the Unix socket, and the open-door warning when authentication is off.
 */
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { connect, Status } from '../helpers/grpc-client.js';
import { LOAN } from '../helpers/grpc-fixtures.js';
import { makePki, type Pem, type Pki } from '../helpers/pki.js';
import { startFails, startServer, tempDir, withServer, type ServerProcess } from '../helpers/server-process.js';

const APPROVE = { input: { user: { age: 30, country: 'US' } } };

let tmp: { path: string; remove: () => void };
let pki: Pki;
before(() => {
  tmp = tempDir('svc-tls-');
  pki = makePki(tmp.path);
});
after(() => tmp.remove());

interface HttpsAnswer {
  status: number;
  body: any;
  peerCertSubject: string | undefined;
}

/** One HTTPS request that trusts `pki.ca` (and presents `client`, when given). */
function https(base: string, method: string, path: string, body?: unknown, client?: Pem): Promise<HttpsAnswer> {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca: pki.ca.cert,
        ...(client ? { cert: client.cert, key: client.key } : {}),
        agent: false,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const cn = (res.socket as TLSSocket).getPeerCertificate().subject?.CN;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const peerCertSubject = Array.isArray(cn) ? cn.join(',') : cn;
          resolve({ status: res.statusCode ?? 0, body: text.length > 0 ? JSON.parse(text) : undefined, peerCertSubject });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The request must fail before any HTTP answer: resolves to the error. */
async function refused(attempt: Promise<unknown>): Promise<Error> {
  try {
    const answer = await attempt;
    assert.fail(`expected the TLS handshake to be refused, got an answer: ${JSON.stringify(answer)}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    // The server's alert (TLS 1.3: after the client's side of the handshake) or the reset.
    assert.match(String((err as NodeJS.ErrnoException).code ?? (err as Error).message), /ECONNRESET|ERR_SSL|EPIPE|alert|socket hang up/i);
    return err as Error;
  }
}

const HTTPS_ARGS = () => ['--http-tls-cert', pki.server.certPath, '--http-tls-key', pki.server.keyPath];
const GRPC_TLS_ARGS = () => ['--grpc-tls-cert', pki.server.certPath, '--grpc-tls-key', pki.server.keyPath];

describe('HTTPS (--http-tls-cert, --http-tls-key)', () => {
  it('serves create, execute (hot path and fastify) and health over TLS; plain HTTP to it fails', async () => {
    const code = await withServer(HTTPS_ARGS(), async (server) => {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const created = await https(server.url, 'POST', '/api/v1/rulesets', LOAN);
      assert.equal(created.body.status, 'created', JSON.stringify(created.body));
      assert.equal(created.peerCertSubject, 'server');
      const executed = await https(server.url, 'POST', '/api/v1/execute/loan', APPROVE);
      assert.equal(executed.status, 200);
      assert.equal(executed.body.code, 'APPROVED');
      // A query string takes the request past the hot dispatcher to fastify.
      const viaFastify = await https(server.url, 'POST', '/api/v1/execute/loan?x=1', APPROVE);
      assert.equal(viaFastify.body.code, 'APPROVED');
      const health = await https(server.url, 'GET', '/health');
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'healthy');
      const plain = server.url.replace(/^https:/, 'http:');
      await assert.rejects(fetch(`${plain}/health`), 'plain HTTP to the HTTPS listener must fail');
    });
    assert.equal(code, 0, 'the HTTPS server shuts down gracefully');
  });

  it('a missing certificate stops the start naming the file and --http-tls-cert', async () => {
    const missing = `${tmp.path}/nope.crt`;
    const text = await startFails(['--http-tls-cert', missing, '--http-tls-key', pki.server.keyPath]);
    assert.match(text, /server exited \(1\)/);
    assert.ok(text.includes(`HTTPS certificate ${missing} (--http-tls-cert) does not exist`), text);
  });

  it('a key that is not PEM, or does not match the certificate, stops the start naming --http-tls-key', async () => {
    const notKey = `${tmp.path}/notkey.pem`;
    writeFileSync(notKey, 'nope\n');
    const t1 = await startFails(['--http-tls-cert', pki.server.certPath, '--http-tls-key', notKey]);
    assert.ok(t1.includes(`HTTPS private key ${notKey} (--http-tls-key) is not a PEM private key`), t1);
    const t2 = await startFails(['--http-tls-cert', pki.server.certPath, '--http-tls-key', pki.client.keyPath]);
    assert.ok(t2.includes(`HTTPS private key ${pki.client.keyPath} (--http-tls-key) does not match the certificate ${pki.server.certPath}`), t2);
    assert.equal(t2.includes(pki.client.key.toString('latin1').split('\n')[1]!), false, 'no key material in the message');
  });

  it('a client CA bundle that is missing or holds no certificate stops the start naming --tls-client-ca', async () => {
    const missing = `${tmp.path}/no-ca.crt`;
    const t1 = await startFails([...HTTPS_ARGS(), '--tls-client-ca', missing, '--disable-grpc']);
    assert.ok(t1.includes(`mTLS client CA bundle ${missing} (--tls-client-ca) does not exist`), t1);
    const t2 = await startFails([...HTTPS_ARGS(), ...GRPC_TLS_ARGS(), '--tls-client-ca', pki.ca.keyPath]);
    assert.ok(t2.includes(`mTLS client CA bundle ${pki.ca.keyPath} (--tls-client-ca) holds no PEM certificate`), t2);
  });
});

describe('mTLS (--tls-client-ca)', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer([...HTTPS_ARGS(), ...GRPC_TLS_ARGS(), '--tls-client-ca', pki.ca.certPath]);
  });
  after(() => server.stop());

  it('HTTPS: a client certificate from the trusted CA gets 200', async () => {
    const created = await https(server.url, 'POST', '/api/v1/rulesets', LOAN, pki.client);
    assert.equal(created.body.status, 'created', JSON.stringify(created.body));
    const executed = await https(server.url, 'POST', '/api/v1/execute/loan', APPROVE, pki.client);
    assert.equal(executed.status, 200);
    assert.equal(executed.body.code, 'APPROVED');
    assert.equal((await https(server.url, 'GET', '/health', undefined, pki.client)).status, 200);
  });

  it('HTTPS: no client certificate is refused in the handshake', async () => {
    await refused(https(server.url, 'GET', '/health'));
    await refused(https(server.url, 'POST', '/api/v1/execute/loan', APPROVE));
  });

  it('HTTPS: a client certificate from an untrusted CA is refused in the handshake', async () => {
    await refused(https(server.url, 'GET', '/health', undefined, pki.rogueClient));
  });

  it('gRPC: trusted client certificate served; none or an untrusted one refused', async () => {
    const good = connect(server.grpcAddress, { caPem: pki.ca.cert, clientCert: pki.client });
    const none = connect(server.grpcAddress, { caPem: pki.ca.cert });
    const rogue = connect(server.grpcAddress, { caPem: pki.ca.cert, clientCert: pki.rogueClient });
    try {
      assert.equal((await good.ok('Health', {})).status, 'healthy');
      for (const client of [none, rogue]) {
        const out = await client.call('Health', {});
        assert.equal(out.ok, false);
        if (!out.ok) assert.equal(out.code, Status.UNAVAILABLE);
      }
    } finally {
      good.close();
      none.close();
      rogue.close();
    }
  });

  it('the listening lines say mTLS is on', () => {
    assert.equal(server.logs.find((l) => l['msg'] === 'http listening')?.['mtls'], true);
    assert.equal(server.logs.find((l) => l['msg'] === 'grpc listening')?.['mtls'], true);
  });
});

describe('Unix socket mode (--uds-mode)', () => {
  it('is 0600 by default, before "uds listening" is logged', async () => {
    const sock = `${tmp.path}/default.sock`;
    await withServer(['--uds-path', sock], async (server) => {
      const line = await server.waitForLog((l) => l['msg'] === 'uds listening');
      assert.equal(line['mode'], '0600');
      assert.equal(statSync(sock).mode & 0o777, 0o600);
      const client = connect(`unix://${sock}`);
      try {
        assert.equal((await client.ok('Health', {})).status, 'healthy');
      } finally {
        client.close();
      }
    });
  });

  it('is 0660 with --uds-mode 0660', async () => {
    const sock = `${tmp.path}/group.sock`;
    await withServer(['--uds-path', sock, '--uds-mode', '0660'], async (server) => {
      await server.waitForLog((l) => l['msg'] === 'uds listening');
      assert.equal(statSync(sock).mode & 0o777, 0o660);
    });
  });

  it('stays without TLS when mTLS is on for TCP', async () => {
    const sock = `${tmp.path}/mtls.sock`;
    await withServer(['--uds-path', sock, ...HTTPS_ARGS(), ...GRPC_TLS_ARGS(), '--tls-client-ca', pki.ca.certPath], async (server) => {
      await server.waitForLog((l) => l['msg'] === 'uds listening');
      const client = connect(`unix://${sock}`);
      try {
        assert.equal((await client.ok('Health', {})).status, 'healthy');
      } finally {
        client.close();
      }
    });
  });
});

describe('open-door warning (authentication off, address not loopback)', () => {
  const WARNING = /authentication is off: anyone who can reach .* can read and change rules/;

  /** Waits until start-up is over (the `server_started` audit line is written after the warning). */
  async function started(server: ServerProcess): Promise<Record<string, unknown>[]> {
    for (let i = 0; i < 500 && !server.stdout.some((l) => l['event'] === 'server_started'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(
      server.stdout.some((l) => l['event'] === 'server_started'),
      'server_started',
    );
    return server.logs.filter((l) => typeof l['msg'] === 'string' && WARNING.test(l['msg']));
  }

  it('is logged once for HTTP on 0.0.0.0, naming the address and the auth flags', async () => {
    await withServer(
      ['--http-addr', '0.0.0.0:0', '--grpc-addr', '127.0.0.1:0'],
      async (server) => {
        const warnings = await started(server);
        assert.equal(warnings.length, 1, JSON.stringify(server.logs));
        const line = warnings[0]!;
        assert.equal(line['level'], 'warn');
        assert.deepEqual(line['addresses'], ['0.0.0.0:0']);
        assert.match(String(line['msg']), /0\.0\.0\.0:0 \(HTTP\)/);
        assert.match(String(line['msg']), /--auth-keys-file or --auth-jwt-jwks-file/);
      },
      { ephemeral: false },
    );
  });

  it('is not logged when both listeners are on 127.0.0.1', async () => {
    await withServer([], async (server) => {
      assert.equal((await started(server)).length, 0);
    });
  });

  it('is not logged when authentication is on (a keys file), even on 0.0.0.0', async () => {
    const keys = `${tmp.path}/keys.json`;
    writeFileSync(keys, JSON.stringify({ keys: [] }));
    await withServer(
      ['--http-addr', '0.0.0.0:0', '--grpc-addr', '0.0.0.0:0', '--auth-keys-file', keys],
      async (server) => {
        assert.equal((await started(server)).length, 0);
      },
      { ephemeral: false },
    );
  });
});
