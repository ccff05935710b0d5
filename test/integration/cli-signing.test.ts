/**
 * The signing CLIs as users run them: built binaries (dist/bin, `npm test` builds first) in
 * child processes, real files in a temp dir.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (name: string) => join(root, 'dist', 'bin', `${name}.js`);

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(name: string, args: string[], cwd: string): Run {
  const r = spawnSync(process.execPath, [bin(name), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const RULE = {
  config: { name: 'loan', version: '1.0.0', entry_step: 'age' },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'applicant.age >= 18', next_step: 'ok' }], default_next: 'no' },
    ok: { type: 'terminal', result: { code: 'APPROVED', message: 'welcome ✓' } },
    no: { type: 'terminal', result: { code: 'REJECTED' } },
  },
};
const RULE_YAML = `# loan rule
config:
  name: loan
  version: 1.0.0
  entry_step: age
steps:
  age:
    type: decision
    branches:
      - condition: applicant.age >= 18
        next_step: ok
    default_next: 'no'
  ok:
    type: terminal
    result: {code: APPROVED, message: "welcome ✓"}
  'no':
    type: terminal
    result: {code: REJECTED}
`;

let dir: string;
let publicKey: string;

before(() => {
  for (const name of ['svc-keygen', 'svc-sign', 'svc-verify', 'svc-compile']) {
    assert.ok(existsSync(bin(name)), `${bin(name)} is missing: build first (npx tsc -p tsconfig.json, or npm test)`);
  }
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const r = run('svc-keygen', ['-o', 'keys'], dir);
  assert.equal(r.status, 0, r.stderr);
  publicKey = readFileSync(join(dir, 'keys', 'public.key'), 'utf8').trim();
});

after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string | Buffer): string {
  writeFileSync(join(dir, name), content);
  return name;
}

function read(name: string): Buffer {
  return readFileSync(join(dir, name));
}

describe('svc-keygen', () => {
  it('writes <prefix>public.key (base64 of 32 bytes) and <prefix>private.key (mode 0600)', () => {
    const r = run('svc-keygen', ['--output-dir', 'k2/nested', '--prefix', 'ci-'], dir);
    assert.equal(r.status, 0, r.stderr);
    const pub = read('k2/nested/ci-public.key').toString('utf8');
    assert.match(pub, /^[A-Za-z0-9+/]{43}=\n$/);
    assert.equal(Buffer.from(pub.trim(), 'base64').length, 32);
    assert.match(r.stdout, new RegExp(`public key: ${pub.trim().replace(/[+/]/g, '\\$&')}`));
    const priv = join(dir, 'k2/nested/ci-private.key');
    assert.match(readFileSync(priv, 'utf8'), /^-----BEGIN PRIVATE KEY-----\n/);
    assert.equal(statSync(priv).mode & 0o777, 0o600);
  });

  it('refuses to overwrite an existing key pair unless --force', () => {
    const before = read('keys/private.key');
    const r = run('svc-keygen', ['-o', 'keys'], dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /refusing to overwrite .*private\.key \(use --force/);
    assert.deepEqual(read('keys/private.key'), before);

    assert.equal(run('svc-keygen', ['-o', 'k3'], dir).status, 0);
    const old = read('k3/private.key');
    const forced = run('svc-keygen', ['-o', 'k3', '--force'], dir);
    assert.equal(forced.status, 0, forced.stderr);
    assert.notDeepEqual(read('k3/private.key'), old);
    assert.equal(statSync(join(dir, 'k3/private.key')).mode & 0o777, 0o600);
  });
});

describe('svc-sign', () => {
  it('signs a JSON file in place (pretty JSON with _signature)', () => {
    write('inplace.json', JSON.stringify(RULE));
    const r = run('svc-sign', ['-k', 'keys/private.key', '-i', 'inplace.json'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /signed inplace\.json with /);
    const text = read('inplace.json').toString('utf8');
    assert.match(text, /^\{\n {2}"config"/);
    const doc = JSON.parse(text);
    assert.equal(doc._signature.algorithm, 'ed25519');
    assert.equal(doc._signature.public_key, publicKey);
    assert.match(doc._signature.signed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('writes to -o and leaves the input alone; YAML and JSON twins carry the same signature', () => {
    write('twin.json', JSON.stringify(RULE, null, 2));
    write('twin.yaml', RULE_YAML);
    assert.equal(run('svc-sign', ['-k', 'keys/private.key', '-i', 'twin.json', '-o', 'twin.signed.json'], dir).status, 0);
    const y = run('svc-sign', ['--private-key', 'keys/private.key', '--input', 'twin.yaml', '--output', 'twin.signed.yaml'], dir);
    assert.equal(y.status, 0, y.stderr);
    assert.equal(read('twin.json').toString('utf8'), JSON.stringify(RULE, null, 2));
    assert.equal(read('twin.yaml').toString('utf8'), RULE_YAML);
    const yamlOut = read('twin.signed.yaml').toString('utf8');
    assert.ok(yamlOut.startsWith('# loan rule\n'));
    const jsonSig = JSON.parse(read('twin.signed.json').toString('utf8'))._signature.signature as string;
    const yamlSig = /\n {2}signature: (\S+)\n/.exec(yamlOut)?.[1];
    assert.equal(yamlSig, jsonSig);
    assert.equal(run('svc-verify', ['-k', 'keys/public.key', '-i', 'twin.signed.yaml'], dir).status, 0);
  });

  it('signs an unsigned .svc file', () => {
    write('plain.json', JSON.stringify(RULE));
    assert.equal(run('svc-compile', ['-i', 'plain.json'], dir).status, 0);
    assert.equal(run('svc-verify', ['-k', 'keys/public.key', '-i', 'plain.svc'], dir).stdout, 'failed: no signature found\n');
    const r = run('svc-sign', ['-k', 'keys/private.key', '-i', 'plain.svc'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(read('plain.svc')[5], 1);
    assert.equal(run('svc-verify', ['-k', 'keys/public.key', '-i', 'plain.svc'], dir).status, 0);
  });

  it('usage and I/O errors exit 2; an invalid rule file exits 1', () => {
    write('s.json', JSON.stringify(RULE));
    write('bad.key', 'not a key\n');
    assert.equal(run('svc-sign', ['-i', 's.json'], dir).status, 2);
    const badKey = run('svc-sign', ['-k', 'bad.key', '-i', 's.json'], dir);
    assert.equal(badKey.status, 2);
    assert.match(badKey.stderr, /private key file bad\.key: the private key is neither PKCS#8 PEM nor base64/);
    assert.equal(run('svc-sign', ['-k', 'keys/private.key', '-i', 'missing.json'], dir).status, 2);
    assert.equal(run('svc-sign', ['-k', 'keys/private.key', '-i', 's.json', '-o', 's.svc'], dir).status, 2);
    write('broken.json', '{"config":');
    const broken = run('svc-sign', ['-k', 'keys/private.key', '-i', 'broken.json'], dir);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /broken\.json: invalid JSON/);
    assert.equal(read('broken.json').toString('utf8'), '{"config":');
  });
});

describe('svc-compile and svc-verify', () => {
  it('keygen → sign JSON → compile → verify .svc exits 0; a tampered byte exits 1', () => {
    write('flow.json', JSON.stringify(RULE));
    assert.equal(run('svc-sign', ['-k', 'keys/private.key', '-i', 'flow.json'], dir).status, 0);
    const c = run('svc-compile', ['-i', 'flow.json'], dir);
    assert.equal(c.status, 0, c.stderr);
    assert.match(c.stdout, /compiled flow\.json -> flow\.svc \(signature kept, signed by /);
    const ok = run('svc-verify', ['-k', 'keys/public.key', '-i', 'flow.svc'], dir);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, `valid: flow.svc signed by ${publicKey}\n`);

    const svc = read('flow.svc');
    const payloadByte = Buffer.from(svc);
    payloadByte[svc.length - 5] = (payloadByte[svc.length - 5] as number) ^ 0x01;
    write('flow-payload.svc', payloadByte);
    const p = run('svc-verify', ['-k', 'keys/public.key', '-i', 'flow-payload.svc'], dir);
    assert.equal(p.status, 1);
    assert.match(p.stdout, /^failed: flow-payload\.svc: \.svc CRC32 mismatch/);

    const sigByte = Buffer.from(svc);
    sigByte[60] = (sigByte[60] as number) ^ 0x01;
    write('flow-sig.svc', sigByte);
    const s = run('svc-verify', ['-k', 'keys/public.key', '-i', 'flow-sig.svc'], dir);
    assert.equal(s.status, 1);
    assert.equal(s.stdout, 'failed: invalid signature\n');
  });

  it('verify takes the base64 key itself, and reports an untrusted key or a tampered JSON', () => {
    write('v.json', JSON.stringify(RULE));
    assert.equal(run('svc-sign', ['-k', 'keys/private.key', '-i', 'v.json'], dir).status, 0);
    assert.equal(run('svc-verify', ['-k', publicKey, '-i', 'v.json'], dir).stdout, `valid: v.json signed by ${publicKey}\n`);
    const otherKey = read('k2/nested/ci-public.key').toString('utf8').trim();
    const untrusted = run('svc-verify', ['-k', otherKey, '-i', 'v.json'], dir);
    assert.equal(untrusted.status, 1);
    assert.equal(untrusted.stdout, 'failed: untrusted public key\n');
    write('v-tampered.json', read('v.json').toString('utf8').replace('APPROVED', 'APPROVED!'));
    assert.equal(run('svc-verify', ['-k', publicKey, '-i', 'v-tampered.json'], dir).stdout, 'failed: invalid signature\n');
  });

  it('verify: usage and I/O errors exit 2', () => {
    assert.equal(run('svc-verify', ['-i', 'v.json'], dir).status, 2);
    assert.equal(run('svc-verify', ['-k', publicKey, '-i', 'nope.json'], dir).status, 2);
    const badKey = run('svc-verify', ['-k', 'no-such-key-file', '-i', 'v.json'], dir);
    assert.equal(badKey.status, 2);
    assert.match(badKey.stderr, /cannot read public key file no-such-key-file/);
    write('junk.key', 'junk\n');
    assert.equal(run('svc-verify', ['-k', 'junk.key', '-i', 'v.json'], dir).status, 2);
  });

  it('compile refuses a signed rule whose signature does not match, and writes nothing', () => {
    write('bad-sig.json', JSON.stringify(RULE));
    assert.equal(run('svc-sign', ['-k', 'keys/private.key', '-i', 'bad-sig.json'], dir).status, 0);
    write('bad-sig.json', read('bad-sig.json').toString('utf8').replace('1.0.0', '6.6.6'));
    const r = run('svc-compile', ['-i', 'bad-sig.json'], dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /does not match the rule \(invalid signature\); refusing to compile/);
    assert.equal(existsSync(join(dir, 'bad-sig.svc')), false);
  });

  it('compile -k signs YAML while compiling, to -o', () => {
    write('c.yml', RULE_YAML);
    const r = run('svc-compile', ['-i', 'c.yml', '-o', 'c-signed.svc', '-k', 'keys/private.key'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `compiled c.yml -> c-signed.svc (signed by ${publicKey})\n`);
    assert.equal(run('svc-verify', ['-k', 'keys/public.key', '-i', 'c-signed.svc'], dir).status, 0);
    assert.equal(existsSync(join(dir, 'c.svc')), false);
  });
});
