/**
 * Credentials re-read while the server runs (EXTENSIONS.md 1 "The file is re-read when it
 * changes (and on SIGHUP); a broken file keeps the previous keys and logs why"), against the
 * real built server process: keys added by an in-place write and by rename-over, a removed key
 * refused at once (no cached principal keeps it), broken files keeping the previous keys with
 * an error line naming the file, SIGHUP reloading a change the file watch cannot see and not
 * ending the process (auth off too), and a JWKS change picked up likewise.
 *
 * NOTE: the tests wait for the server's own log lines (`api keys loaded`, `jwks loaded`,
 * `credentials file not reloaded...`) with a bounded wait rather than polling requests: every
 * refused request counts toward the 20 failures a minute that block an address.
 */
import assert from 'node:assert/strict';
import { renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, makeSigningKey, makeTestKey, signToken, writeJwks, writeKeysFile, type SigningKey, type TestKey } from '../helpers/auth-jwt.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

type Line = Record<string, unknown>;

/** Resolves with the first log line after index `from` satisfying `pred` (bounded wait). */
async function logAfter(server: ServerProcess, from: number, pred: (l: Line) => boolean, what: string, timeoutMs = 10_000): Promise<Line> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = server.logs.slice(from).find(pred);
    if (line) return line;
    if (Date.now() > deadline) assert.fail(`no log line "${what}" within ${timeoutMs} ms; logs: ${JSON.stringify(server.logs.slice(from))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const keysLoaded = (path: string, n: number) => (l: Line) => l['msg'] === 'api keys loaded' && l['file'] === path && l['keys'] === n;
const jwksLoaded = (path: string, n: number) => (l: Line) => l['msg'] === 'jwks loaded' && l['file'] === path && l['keys'] === n;
const notReloaded = (path: string, reason: RegExp) => (l: Line) =>
  l['level'] === 'error' && l['file'] === path && /not reloaded/.test(String(l['msg'])) && reason.test(String(l['err']));

describe('credentials hot reload (keys file and JWKS)', () => {
  const dir = tempDir('svc-auth-reload-');
  const keysPath = join(dir.path, 'keys.json');
  const jwksPath = join(dir.path, 'jwks.json');
  const a = makeTestKey('key-a', 'viewer');
  const b = makeTestKey('key-b', 'viewer');
  const c = makeTestKey('key-c', 'viewer');
  let k1: SigningKey;
  let k2: SigningKey;
  let server: ServerProcess | undefined;

  /** Status of GET /api/v1/rulesets with `key`. */
  const statusWith = async (credential: string) =>
    (await http(server!.url, 'GET', '/api/v1/rulesets', undefined, { authorization: bearer(credential) })).status;

  /** Writes the keys file in place and waits until the server has loaded `n` keys from it. */
  const rewriteKeys = async (keys: TestKey[]) => {
    const from = server!.logs.length;
    writeKeysFile(keysPath, keys);
    await logAfter(server!, from, keysLoaded(keysPath, keys.length), `api keys loaded (${keys.length})`);
  };

  before(async () => {
    writeKeysFile(keysPath, [a]);
    k1 = await makeSigningKey('ES256', 'k1');
    k2 = await makeSigningKey('EdDSA', 'k2');
    writeJwks(jwksPath, [k1]);
    server = await startServer(['--auth-keys-file', keysPath, '--auth-jwt-jwks-file', jwksPath]);
    await logAfter(server, 0, keysLoaded(keysPath, 1), 'initial keys');
  });

  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('a key added by writing the file in place is accepted once the file is re-read', async () => {
    assert.equal(await statusWith(a.key), 200);
    assert.equal(await statusWith(b.key), 401);
    await rewriteKeys([a, b]);
    assert.equal(await statusWith(b.key), 200);
    assert.equal(await statusWith(a.key), 200);
  });

  it('a removed key is refused at once, though its principal was cached', async () => {
    for (let i = 0; i < 3; i++) assert.equal(await statusWith(a.key), 200);
    await rewriteKeys([b]);
    const res = await http(server!.url, 'GET', '/api/v1/rulesets', undefined, { authorization: bearer(a.key) });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'UNAUTHENTICATED');
    assert.equal(await statusWith(b.key), 200);
  });

  it('a key added by renaming a new file over the old one is accepted', async () => {
    const from = server!.logs.length;
    const tmp = join(dir.path, 'keys.json.tmp');
    writeKeysFile(tmp, [b, c]);
    const before = statSync(keysPath).ino;
    renameSync(tmp, keysPath);
    assert.notEqual(statSync(keysPath).ino, before, 'a new file (inode) took the name');
    await logAfter(server!, from, keysLoaded(keysPath, 2), 'api keys loaded after rename');
    assert.equal(await statusWith(c.key), 200);
    assert.equal(await statusWith(b.key), 200);
  });

  it('a broken keys file (invalid JSON, a bad record, gone) keeps the previous keys and logs an error naming the file', async () => {
    const broken: Array<[string, () => void, RegExp]> = [
      ['invalid JSON', () => writeFileSync(keysPath, '{"keys": [ {"id": '), /not valid JSON or YAML/],
      [
        'a bad record',
        () => writeFileSync(keysPath, JSON.stringify({ keys: [b.record, { ...c.record, role: 'root' }, makeTestKey('key-d', 'admin').record] })),
        /keys\[1\] \(key-c\)\.role must be one of/,
      ],
      ['removed', () => rmSync(keysPath), /does not exist/],
    ];
    for (const [what, breakIt, reason] of broken) {
      const from = server!.logs.length;
      breakIt();
      const line = await logAfter(server!, from, notReloaded(keysPath, reason), `error for ${what}`);
      assert.match(String(line['msg']), /previous credentials stay in force/, what);
      // The previous keys (b, c) still work; nothing of the broken file was taken.
      assert.equal(await statusWith(b.key), 200, what);
      assert.equal(await statusWith(c.key), 200, what);
      assert.equal(
        server!.logs.slice(from).some((l) => l['msg'] === 'api keys loaded'),
        false,
        `${what}: nothing loaded`,
      );
    }
    await rewriteKeys([b, c]);
    assert.equal(await statusWith(c.key), 200);
    const all = JSON.stringify(server!.logs) + JSON.stringify(server!.stdout);
    for (const k of [a, b, c]) assert.ok(!all.includes(k.key), `key ${k.id} never logged`);
  });

  it('SIGHUP re-reads a change the file watch cannot see, at once, and the server keeps running', async () => {
    // Same size, same inode, same mtime: the stat poll sees no change; only SIGHUP reloads.
    const d = makeTestKey('key-d', 'viewer');
    const fixed = new Date('2020-01-01T00:00:00Z');
    const from0 = server!.logs.length;
    writeKeysFile(keysPath, [b, c]);
    utimesSync(keysPath, fixed, fixed);
    await logAfter(server!, from0, keysLoaded(keysPath, 2), 'keys loaded with the fixed mtime');
    const st = statSync(keysPath);
    const from = server!.logs.length;
    writeKeysFile(keysPath, [b, d]);
    utimesSync(keysPath, fixed, fixed);
    const now = statSync(keysPath);
    assert.deepEqual([now.size, now.ino, now.mtimeMs], [st.size, st.ino, st.mtimeMs], 'the file looks unchanged to a stat');
    process.kill(server!.pid, 'SIGHUP');
    const hup = await logAfter(server!, from, (l) => l['msg'] === 'reloading credentials' && l['signal'] === 'SIGHUP', 'reloading credentials');
    const at = server!.logs.indexOf(hup);
    await logAfter(server!, at, keysLoaded(keysPath, 2), 'api keys loaded after SIGHUP');
    await logAfter(server!, at, jwksLoaded(jwksPath, 1), 'jwks loaded after SIGHUP');
    assert.equal(await statusWith(d.key), 200);
    assert.equal(await statusWith(c.key), 401, 'the key no longer in the file is refused');
    assert.equal(server!.child.exitCode, null, 'still running');
    assert.equal(server!.child.signalCode, null, 'not ended by the signal');
    assert.equal((await http(server!.url, 'GET', '/health')).status, 200);
  });

  it('a JWKS change is picked up: a new key is trusted, a removed one refused (cached or not), a broken JWKS keeps the previous one', async () => {
    const t1 = await signToken(k1, { sub: 'one', role: 'viewer' });
    const t2 = await signToken(k2, { sub: 'two', role: 'viewer' });
    assert.equal(await statusWith(t1), 200);
    assert.equal(await statusWith(t1), 200);
    assert.equal(await statusWith(t2), 401);

    let from = server!.logs.length;
    writeJwks(jwksPath, [k1, k2]);
    await logAfter(server!, from, jwksLoaded(jwksPath, 2), 'jwks loaded (2)');
    assert.equal(await statusWith(t2), 200);

    from = server!.logs.length;
    writeFileSync(jwksPath, JSON.stringify({ keys: [k2.privateJwk] }));
    await logAfter(server!, from, notReloaded(jwksPath, /private key/), 'error for a private key in the JWKS');
    assert.equal(await statusWith(t1), 200, 'the previous JWKS stays in force');
    assert.equal(await statusWith(t2), 200);

    from = server!.logs.length;
    const tmp = join(dir.path, 'jwks.tmp');
    writeJwks(tmp, [k2]);
    renameSync(tmp, jwksPath);
    await logAfter(server!, from, jwksLoaded(jwksPath, 1), 'jwks loaded (1) after rename');
    assert.equal(await statusWith(t1), 401, 'a token of the removed key is refused though it was cached');
    assert.equal(await statusWith(t2), 200);
  });
});

describe('SIGHUP with authentication off', () => {
  let server: ServerProcess | undefined;

  before(async () => {
    server = await startServer([]);
  });

  after(async () => {
    await server?.stop();
  });

  it('does not end the server; it logs that there is nothing to reload and keeps serving', async () => {
    const from = server!.logs.length;
    process.kill(server!.pid, 'SIGHUP');
    await logAfter(server!, from, (l) => /authentication is off/.test(String(l['msg'])), 'nothing to reload');
    assert.equal(server!.child.exitCode, null);
    assert.equal(server!.child.signalCode, null);
    assert.equal((await http(server!.url, 'GET', '/api/v1/rulesets')).status, 200);
    // A second SIGHUP too.
    process.kill(server!.pid, 'SIGHUP');
    assert.equal((await http(server!.url, 'GET', '/health')).status, 200);
    assert.equal(await server!.stop(), 0, 'SIGTERM still ends it cleanly');
  });
});
