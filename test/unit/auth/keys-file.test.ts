/**
 * The API keys file parser (src/auth/keys-file.ts): every refusal with its message, the YAML
 * form, and `svc-apikey` (the built dist/bin/svc-apikey.js, run as a child process) printing a
 * key and a record that round-trip through the parser.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hashApiKey, KeysFileError, parseKeysFile } from '../../../src/auth/index.js';
import { sha256 } from '../../../src/auth/api-key.js';
import { ROOT } from '../../helpers/server-process.js';

const HASH_A = hashApiKey('svck_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
const HASH_B = hashApiKey('svck_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');

const rec = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: 'deployer',
  hash: HASH_A,
  role: 'editor',
  tenants: ['*'],
  expires_at: null,
  ...over,
});
const file = (...records: unknown[]): string => JSON.stringify({ keys: records });

function refuses(text: string, message: RegExp): void {
  assert.throws(
    () => parseKeysFile(text),
    (err: unknown) => {
      assert.ok(err instanceof KeysFileError, `a KeysFileError, got ${String(err)}`);
      assert.match(err.message, message);
      return true;
    },
    text,
  );
}

describe('parseKeysFile: accepted', () => {
  it('a JSON file: principal id, role, tenants, expiry; the digest is the hash', () => {
    const [a, b] = parseKeysFile(
      file(rec(), rec({ id: 'ci@build:1', hash: HASH_B, role: 'executor', tenants: ['acme', 'beta'], expires_at: '2030-01-02T03:04:05Z', comment: 'ci' })),
    );
    assert.equal(a!.principal.id, 'deployer');
    assert.equal(a!.principal.source, 'api_key');
    assert.equal(a!.principal.role, 'editor');
    assert.equal(a!.principal.allTenants, true);
    assert.equal(a!.principal.expiresAt, Number.POSITIVE_INFINITY);
    assert.equal(a!.digest.toString('hex'), HASH_A.slice('sha256:'.length));
    assert.equal(b!.principal.id, 'ci@build:1');
    assert.equal(b!.principal.allTenants, false);
    assert.deepEqual([...b!.principal.tenants], ['acme', 'beta']);
    assert.equal(b!.principal.expiresAt, Date.parse('2030-01-02T03:04:05Z'));
  });

  it('the YAML form (an unquoted timestamp too); an empty list is no keys', () => {
    const yaml = [
      'keys:',
      '  - id: deployer',
      `    hash: "${HASH_A}"`,
      '    role: admin',
      '    tenants: ["*"]',
      '  - id: reader',
      `    hash: ${HASH_B}`,
      '    role: viewer',
      '    tenants:',
      '      - acme',
      '    expires_at: 2031-05-06T07:08:09Z',
      '',
    ].join('\n');
    const entries = parseKeysFile(yaml);
    assert.deepEqual(
      entries.map((e) => [e.principal.id, e.principal.role, e.principal.expiresAt]),
      [
        ['deployer', 'admin', Number.POSITIVE_INFINITY],
        ['reader', 'viewer', Date.parse('2031-05-06T07:08:09Z')],
      ],
    );
    assert.deepEqual(parseKeysFile('{"keys": []}'), []);
    assert.deepEqual(parseKeysFile('keys: []\n'), []);
  });
});

describe('parseKeysFile: refusals name the record and the reason', () => {
  it('not JSON or YAML, no "keys" array', () => {
    refuses('{"keys": [', /^not valid JSON or YAML/);
    refuses('keys: [\n', /^not valid JSON or YAML/);
    refuses('[]', /must be an object with a "keys" array/);
    refuses('{}', /must be an object with a "keys" array/);
    refuses('{"keys": {}}', /must be an object with a "keys" array/);
    refuses('', /must be an object with a "keys" array/);
  });

  it('a record that is not an object', () => {
    refuses(file(rec(), 'deployer'), /^keys\[1\] must be an object$/);
    refuses(file(null), /^keys\[0\] must be an object$/);
  });

  it('an unknown field', () => {
    refuses(file(rec({ key: 'svck_plaintext' })), /^keys\[0\] has an unknown field "key"$/);
    refuses(file(rec({ tenant: ['*'] })), /^keys\[0\] has an unknown field "tenant"$/);
  });

  it('a bad id', () => {
    for (const id of ['', '-dash-first', 'has space', 'x'.repeat(129), 7, null]) {
      refuses(file(rec({ id })), /^keys\[0\]\.id must be 1-128 letters, digits or _ \. @ : -/);
    }
    refuses(file(rec({ id: undefined })), /^keys\[0\]\.id must be/);
  });

  it('a duplicate id or hash', () => {
    refuses(file(rec(), rec({ hash: HASH_B })), /^keys\[1\]\.id "deployer" is used twice$/);
    refuses(file(rec(), rec({ id: 'other' })), /^keys\[1\] \(other\)\.hash is the hash of another record$/);
  });

  it('a bad hash', () => {
    for (const hash of [HASH_A.toUpperCase(), HASH_A.slice(7), `sha512:${HASH_A.slice(7)}`, `${HASH_A}0`, HASH_A.slice(0, -1), 'svck_plaintext', null]) {
      refuses(file(rec({ hash })), /^keys\[0\] \(deployer\)\.hash must be "sha256:" and 64 lower-case hex digits$/);
    }
  });

  it('a bad role', () => {
    for (const role of ['root', 'Admin', '', null, ['admin']]) {
      refuses(file(rec({ role })), /^keys\[0\] \(deployer\)\.role must be one of executor, viewer, editor, admin$/);
    }
  });

  it('empty or bad tenants', () => {
    for (const tenants of [[], '*', [''], ['acme', 3], null]) {
      refuses(file(rec({ tenants })), /^keys\[0\] \(deployer\)\.tenants must be a non-empty list of tenant ids/);
    }
  });

  it('a bad expires_at', () => {
    for (const expires_at of ['tomorrow', '2030-13-45T00:00:00Z', 1893456000, '1893456000', true]) {
      refuses(file(rec({ expires_at })), /^keys\[0\] \(deployer\)\.expires_at must be null or an ISO 8601 date-time$/);
    }
  });

  it('one bad record refuses the whole file', () => {
    refuses(file(rec(), rec({ id: 'b', hash: HASH_B, role: 'nobody' })), /^keys\[1\] \(b\)\.role/);
  });
});

describe('svc-apikey (built, child process)', () => {
  const BIN = join(ROOT, 'dist', 'bin', 'svc-apikey.js');
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

  it('prints a key (line 1) and its record (line 2) that the keys-file parser accepts', () => {
    const out = run('--id', 'deployer', '--role', 'editor', '--tenants', 'acme, beta', '--expires-at', '2031-01-01T00:00:00Z');
    assert.equal(out.status, 0, out.stderr);
    const lines = out.stdout.split('\n');
    assert.equal(lines.length, 3, 'two lines and a final newline');
    assert.equal(lines[2], '');
    const [key, line2] = lines as [string, string];
    assert.match(key, /^svck_[A-Za-z0-9_-]{43}$/);
    const record = JSON.parse(line2) as Record<string, unknown>;
    assert.deepEqual(record, { id: 'deployer', hash: hashApiKey(key), role: 'editor', tenants: ['acme', 'beta'], expires_at: '2031-01-01T00:00:00.000Z' });
    assert.ok(!line2.includes(key), 'the record does not hold the key');
    const [entry] = parseKeysFile(JSON.stringify({ keys: [record] }));
    assert.equal(entry!.principal.id, 'deployer');
    assert.equal(entry!.principal.role, 'editor');
    assert.deepEqual(entry!.digest, sha256(key));
  });

  it('defaults: all tenants, no expiry; each run makes a different key', () => {
    const a = run('--id', 'x', '--role', 'admin');
    const b = run('--id', 'x', '--role', 'admin');
    assert.equal(a.status, 0, a.stderr);
    const [keyA, recA] = a.stdout.split('\n') as [string, string];
    const [keyB] = b.stdout.split('\n') as [string];
    assert.notEqual(keyA, keyB);
    assert.deepEqual(JSON.parse(recA), { id: 'x', hash: hashApiKey(keyA), role: 'admin', tenants: ['*'], expires_at: null });
  });

  it('a bad --role exits 2 naming --role, printing no key', () => {
    const out = run('--id', 'deployer', '--role', 'root');
    assert.equal(out.status, 2);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /--role must be one of executor, viewer, editor, admin/);
  });

  it('a bad --id, --tenants or --expires-at exits 2 naming the option', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--id', 'has space', '--role', 'viewer'], /--id must be/],
      [['--id', 'a', '--role', 'viewer', '--tenants', ' , '], /--tenants must be a non-empty list/],
      [['--id', 'a', '--role', 'viewer', '--expires-at', 'soon'], /--expires-at must be null or an ISO 8601/],
    ];
    for (const [args, message] of cases) {
      const out = run(...args);
      assert.equal(out.status, 2, args.join(' '));
      assert.equal(out.stdout, '');
      assert.match(out.stderr, message);
    }
  });
});
