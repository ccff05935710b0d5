/**
 * Broker credentials (EXTENSIONS.md 1): `readBrokerAuth` reads the creds and CA files at start
 * (a missing or wrong file is a ConfigError naming the flag and the file), maps each option to
 * the NATS connection options, and never puts a secret in what it shows (`redactUrl`).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../../src/config/index.js';
import { readBrokerAuth, redactUrl, type BrokerAuthConfig } from '../../../src/sync/broker-auth.js';
import { loadNatsApi, type NatsApi } from '../../../src/sync/nats-api.js';
import { tempDir } from '../../helpers/server-process.js';

const none: BrokerAuthConfig = { syncUrl: 'nats://127.0.0.1:4222', syncToken: null, syncUser: null, syncPassword: null, syncCredsFile: null, syncTlsCa: null };
const dir = tempDir('svc-broker-auth-');
after(() => dir.remove());

// The layout `nsc` writes; the JWT and seed are placeholders (nothing here talks to a server).
const SEED = 'SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4';
const CREDS = `-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.

-----BEGIN USER NKEY SEED-----
${SEED}
------END USER NKEY SEED------
`;

/** A client whose credsAuthenticator records what it was given. */
function recordingApi(): { api: NatsApi; given: Uint8Array[] } {
  const given: Uint8Array[] = [];
  const api = {
    connect: () => Promise.reject(new Error('unused')),
    jetstream: () => {
      throw new Error('unused');
    },
    jetstreamManager: () => Promise.reject(new Error('unused')),
    credsAuthenticator: (creds: Uint8Array) => {
      given.push(creds);
      return 'the-authenticator';
    },
  } as unknown as NatsApi;
  return { api, given };
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `a ConfigError, not ${String(err)}`);
    return err;
  }
  assert.fail('no error');
}

describe('readBrokerAuth', () => {
  it('passes no credentials when none are configured', () => {
    const auth = readBrokerAuth(none);
    assert.equal(auth.kind, 'none');
    assert.equal(auth.tls, false);
    assert.deepEqual(auth.connectOptions(recordingApi().api), {});
  });

  it('maps --sync-token and --sync-user/--sync-password to the connection options', () => {
    const token = readBrokerAuth({ ...none, syncToken: 't0ken' });
    assert.equal(token.kind, 'token');
    assert.deepEqual(token.connectOptions(recordingApi().api), { token: 't0ken' });
    const user = readBrokerAuth({ ...none, syncUser: 'svc', syncPassword: 'pw' });
    assert.equal(user.kind, 'user');
    assert.deepEqual(user.connectOptions(recordingApi().api), { user: 'svc', pass: 'pw' });
  });

  it('reads the creds file once, at start, and hands its bytes to credsAuthenticator', () => {
    const path = join(dir.path, 'svc.creds');
    writeFileSync(path, CREDS);
    const auth = readBrokerAuth({ ...none, syncCredsFile: path });
    // Read at start: a file changed or removed afterwards does not matter any more.
    writeFileSync(path, 'changed');
    const { api, given } = recordingApi();
    assert.equal(auth.kind, 'creds');
    assert.deepEqual(auth.connectOptions(api), { authenticator: 'the-authenticator' });
    assert.equal(given.length, 1);
    assert.equal(Buffer.from(given[0]!).toString('utf8'), CREDS);
  });

  it('builds a working authenticator with the installed NATS client', async () => {
    const loaded = await loadNatsApi();
    assert.ok(loaded.ok, 'the NATS client is installed');
    assert.equal(typeof loaded.api.credsAuthenticator, 'function');
    const path = join(dir.path, 'real.creds');
    writeFileSync(path, CREDS);
    const options = readBrokerAuth({ ...none, syncCredsFile: path }).connectOptions(loaded.api);
    const authenticator = options['authenticator'] as (nonce?: string) => Record<string, unknown>;
    assert.equal(typeof authenticator, 'function');
    // The client parses the file when it authenticates: the JWT block comes out as given.
    const auth = authenticator('bm9uY2U');
    assert.equal(auth['jwt'], 'eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln');
    assert.equal(typeof auth['sig'], 'string');
  });

  it('stops the start when the creds file is missing or is not a creds file, naming the flag and the file', () => {
    const missing = join(dir.path, 'no-such.creds');
    const err = configError(() => readBrokerAuth({ ...none, syncCredsFile: missing }));
    assert.match(err.message, /^--sync-creds-file: cannot read .*no-such\.creds: ENOENT$/);
    const wrong = join(dir.path, 'wrong.creds');
    writeFileSync(wrong, 'just a token\n');
    assert.match(
      configError(() => readBrokerAuth({ ...none, syncCredsFile: wrong })).message,
      /^--sync-creds-file: .*wrong\.creds is not a NATS credentials file/,
    );
  });

  it('reads the CA for --sync-tls-ca and refuses a missing file or one without a certificate', () => {
    const ca = join(dir.path, 'ca.pem');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(ca, pem);
    const auth = readBrokerAuth({ ...none, syncTlsCa: ca, syncToken: 'x' });
    assert.equal(auth.tls, true);
    const options = auth.connectOptions(recordingApi().api);
    assert.deepEqual(Object.keys(options), ['tls', 'token']);
    assert.equal((options['tls'] as { ca: string }).ca, pem);
    assert.match(
      configError(() => readBrokerAuth({ ...none, syncTlsCa: join(dir.path, 'nope.pem') })).message,
      /^--sync-tls-ca: cannot read .*nope\.pem: ENOENT$/,
    );
    const empty = join(dir.path, 'empty.pem');
    writeFileSync(empty, '');
    assert.match(configError(() => readBrokerAuth({ ...none, syncTlsCa: empty })).message, /^--sync-tls-ca: .*empty\.pem holds no PEM certificate/);
  });
});

describe('the TLS host name check', () => {
  type Check = (name: string, cert: unknown) => Error | undefined;
  const checkOf = (syncUrl: string): Check => {
    const ca = join(dir.path, 'check-ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const options = readBrokerAuth({ ...none, syncUrl, syncTlsCa: ca }).connectOptions(recordingApi().api);
    return (options['tls'] as { checkServerIdentity: Check }).checkServerIdentity;
  };
  const certFor = (san: string) => ({ subject: { CN: 'nats' }, subjectaltname: san });

  it('checks an IP-address URL against the IP subjectAltName (the client leaves node to check "localhost")', () => {
    const check = checkOf('nats://127.0.0.1:4222');
    assert.equal(check('localhost', certFor('IP Address:127.0.0.1')), undefined);
    assert.ok(check('localhost', certFor('IP Address:10.9.9.9')) instanceof Error, 'a certificate for another address is refused');
    assert.equal(checkOf('nats://[::1]:4222')('localhost', certFor('IP Address:0:0:0:0:0:0:0:1')), undefined);
  });

  it('checks a host name as usual', () => {
    const check = checkOf('nats://nats.internal:4222');
    assert.equal(check('nats.internal', certFor('DNS:nats.internal')), undefined);
    assert.ok(check('nats.internal', certFor('DNS:other.internal')) instanceof Error);
    assert.ok(check('localhost', certFor('IP Address:127.0.0.1')) instanceof Error, 'no IP in the URL: nothing else is accepted');
  });
});

describe('redactUrl', () => {
  it('hides user, password and token written into the URL, and leaves other URLs alone', () => {
    assert.equal(redactUrl('nats://svc:hunter2@nats-1:4222'), 'nats://***@nats-1:4222');
    assert.equal(redactUrl('nats://t0ken@nats-1:4222, tls://u:p@nats-2:4222'), 'nats://***@nats-1:4222, tls://***@nats-2:4222');
    assert.equal(redactUrl('nats://127.0.0.1:4222'), 'nats://127.0.0.1:4222');
  });
});
