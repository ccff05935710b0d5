/**
 * Rule signatures end to end: keys and signed files made by the real CLIs
 * (dist/bin/svc-keygen|sign|compile), checked by the real server (dist/bin/svc-server) over
 * HTTP, for API uploads (body `_signature` and the X-Svc-* headers) and for rule files loaded
 * from --rules-dir (JSON, YAML, .svc), in the four modes of docs/signing.md.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT, http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const execFileP = promisify(execFile);
const bin = (name: string) => join(ROOT, 'dist', 'bin', `${name}.js`);

/** Runs a built CLI in `dir`; fails the test on a non-zero exit. */
async function cli(name: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await execFileP(process.execPath, [bin(name), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
    return stdout;
  } catch (err) {
    const e = err as { code?: unknown; stderr?: string };
    throw new Error(`${name} ${args.join(' ')} failed (${String(e.code)}): ${e.stderr ?? String(err)}`);
  }
}

/** A small ruleset: adults get `code`, others REJECTED. */
function rule(name: string, code: string, version = '1.0.0'): Record<string, unknown> {
  return {
    config: { name, version, entry_step: 'age' },
    steps: {
      age: { type: 'decision', branches: [{ condition: 'applicant.age >= 18', next_step: 'ok' }], default_next: 'no' },
      ok: { type: 'terminal', result: { code } },
      no: { type: 'terminal', result: { code: 'REJECTED' } },
    },
  };
}

const LOCAL_YAML = `# signed YAML rule of the rules dir
config:
  name: local-yaml
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
    result: {code: YAML_OK}
  'no':
    type: terminal
    result: {code: REJECTED}
`;

const forbidden = (reason: string) => ({ error: 'Forbidden', code: 'FORBIDDEN', message: `signature verification failed: ${reason}` });
const INCOMPLETE_HEADERS = { error: 'X-Svc-Signature and X-Svc-Public-Key must be sent together', code: 'BAD_REQUEST' };

type Doc = Record<string, any>;

let tmp: { path: string; remove: () => void };
let dir: string;
let keyA: string; // trusted
let keyB: string; // never trusted
/** Signed by A with svc-sign (body `_signature`). */
let loan: Doc;
let hdr: Doc;
/** Signed by B (untrusted). */
let evil: Doc;
const servers: ServerProcess[] = [];

async function start(args: string[]): Promise<ServerProcess> {
  const s = await startServer(args);
  servers.push(s);
  return s;
}

const readJson = (p: string): Doc => JSON.parse(readFileSync(join(dir, p), 'utf8')) as Doc;
const without = (doc: Doc, key: string): Doc => {
  const { [key]: _, ...rest } = doc;
  return rest;
};
const post = (s: ServerProcess, body: unknown, headers: Record<string, string> = {}) => http(s.url, 'POST', '/api/v1/rulesets', body, headers);
const get = (s: ServerProcess, name: string) => http(s.url, 'GET', `/api/v1/rulesets/${name}`);
const runRule = async (s: ServerProcess, name: string): Promise<unknown> => {
  const r = await http(s.url, 'POST', `/api/v1/execute/${name}`, { input: { applicant: { age: 30 } } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.code;
};
/** The reason logged for a skipped rule file (undefined when it was not skipped). */
const skipReason = (s: ServerProcess, file: string): unknown =>
  s.logs.find((l) => l['msg'] === 'skipped a rule file' && String(l['path']).endsWith(`/${file}`))?.['reason'];

before(async () => {
  for (const name of ['svc-server', 'svc-keygen', 'svc-sign', 'svc-compile']) {
    assert.ok(existsSync(bin(name)), `${bin(name)} is missing: build first (npx tsc -p tsconfig.json, or npm test)`);
  }
  tmp = tempDir('svc-signing-server-');
  dir = tmp.path;
  await Promise.all([cli('svc-keygen', ['-o', 'keys'], dir), cli('svc-keygen', ['-o', 'other'], dir)]);
  keyA = readFileSync(join(dir, 'keys/public.key'), 'utf8').trim();
  keyB = readFileSync(join(dir, 'other/public.key'), 'utf8').trim();
  writeFileSync(join(dir, 'trusted.keys'), `# CI pipeline key (test)\n\n${keyA}\n`);

  mkdirSync(join(dir, 'rules'));
  mkdirSync(join(dir, 'src'));
  const files: Record<string, unknown> = {
    'loan.json': rule('loan', 'APPROVED'),
    'hdr.json': rule('hdr', 'HDR_OK'),
    'evil.json': rule('evil', 'EVIL'),
    'rules/local-json.json': rule('local-json', 'JSON_OK'),
    'rules/unsigned-local.json': rule('unsigned-local', 'UNSIGNED_OK'),
    'src/local-svc.json': rule('local-svc', 'SVC_OK'),
    'src/broken-svc.json': rule('broken-svc', 'BROKEN'),
    'src/badsig-svc.json': rule('badsig-svc', 'BADSIG'),
  };
  for (const [p, doc] of Object.entries(files)) writeFileSync(join(dir, p), JSON.stringify(doc));
  writeFileSync(join(dir, 'rules/local-yaml.yaml'), LOCAL_YAML);

  const A = ['-k', 'keys/private.key'];
  await Promise.all([
    cli('svc-sign', [...A, '-i', 'loan.json'], dir),
    cli('svc-sign', [...A, '-i', 'hdr.json'], dir),
    cli('svc-sign', ['-k', 'other/private.key', '-i', 'evil.json'], dir),
    cli('svc-sign', [...A, '-i', 'rules/local-json.json'], dir),
    cli('svc-sign', [...A, '-i', 'rules/local-yaml.yaml'], dir),
    cli('svc-sign', [...A, '-i', 'src/local-svc.json'], dir),
  ]);
  await Promise.all([
    // The signed JSON compiled as is: the .svc keeps its signature.
    cli('svc-compile', ['-i', 'src/local-svc.json', '-o', 'rules/local-svc.svc'], dir),
    cli('svc-compile', [...A, '-i', 'src/broken-svc.json', '-o', 'rules/broken-svc.svc'], dir),
    cli('svc-compile', [...A, '-i', 'src/badsig-svc.json', '-o', 'rules/badsig-svc.svc'], dir),
  ]);
  // One flipped payload byte (CRC check), one flipped signature byte (signature check).
  const broken = readFileSync(join(dir, 'rules/broken-svc.svc'));
  broken[110 + Math.floor((broken.length - 110) / 2)]! ^= 0x01;
  writeFileSync(join(dir, 'rules/broken-svc.svc'), broken);
  const badsig = readFileSync(join(dir, 'rules/badsig-svc.svc'));
  assert.equal(badsig[5], 1, 'compiled with -k: HAS_SIGNATURE');
  badsig[46 + 10]! ^= 0x01;
  writeFileSync(join(dir, 'rules/badsig-svc.svc'), badsig);

  loan = readJson('loan.json');
  hdr = readJson('hdr.json');
  evil = readJson('evil.json');
  assert.equal(loan['_signature'].public_key, keyA);
  assert.equal(evil['_signature'].public_key, keyB);
});

after(async () => {
  // Every server this file started, stopped by its own pid (also after a failure).
  await Promise.allSettled(servers.map((s) => s.stop()));
  tmp?.remove();
});

describe('signatures required (trusted keys file, rules dir, unsigned local files allowed by default)', () => {
  let s: ServerProcess;
  before(async () => {
    s = await start([
      '--rules-dir',
      join(dir, 'rules'),
      '--signature-enabled',
      '--signature-require',
      '--signature-trusted-keys-file',
      join(dir, 'trusted.keys'),
    ]);
  });
  after(async () => {
    await s?.stop();
  });

  it('accepts a rule signed with svc-sign, executes it, and GET returns it without _signature', async () => {
    const r = await post(s, loan);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { status: 'created', name: 'loan' });
    assert.equal(await runRule(s, 'loan'), 'APPROVED');
    const g = await get(s, 'loan');
    assert.equal(g.status, 200);
    assert.deepEqual(g.body, without(loan, '_signature'));
  });

  it('rejects each bad signature with the exact 403 body and stores nothing', async () => {
    const cases: Array<[string, Doc, string]> = [
      ['unsigned', rule('unsigned-api', 'X'), 'no signature found'],
      ['tampered after signing', { ...hdr, steps: { ...hdr['steps'], ok: { type: 'terminal', result: { code: 'PWNED' } } } }, 'invalid signature'],
      ['signed by an untrusted key', evil, 'untrusted public key'],
      ['public_key not base64', { ...hdr, _signature: { ...hdr['_signature'], public_key: 'not base64 !!' } }, 'invalid public key base64'],
      [
        'public_key base64 of 31 bytes',
        { ...hdr, _signature: { ...hdr['_signature'], public_key: Buffer.alloc(31, 7).toString('base64') } },
        'invalid public key base64',
      ],
      ['another algorithm', { ...hdr, _signature: { ...hdr['_signature'], algorithm: 'rsa' } }, 'invalid signature'],
    ];
    for (const [what, body, reason] of cases) {
      const r = await post(s, body);
      assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, forbidden(reason), what);
      const name = (body['config'] as Doc)['name'] as string;
      assert.equal((await get(s, name)).status, 404, `${what}: ${name} must not be stored`);
      assert.equal(existsSync(join(dir, 'rules', `${name}.json`)), false, `${what}: no file for ${name}`);
    }
  });

  it('a rejected update leaves the previous version served', async () => {
    // loan 1.0.0 is stored (first test); a re-labelled copy keeps the old signature: tampered.
    const tampered = { ...loan, config: { ...loan['config'], version: '2.0.0' } };
    const r = await post(s, tampered);
    assert.deepEqual([r.status, r.body], [403, forbidden('invalid signature')]);
    const g = await get(s, 'loan');
    assert.equal(g.body.config.version, '1.0.0');
    assert.equal(readJson('rules/loan.json')['config'].version, '1.0.0');
  });

  it('accepts the header form (X-Svc-Signature + X-Svc-Public-Key); one header alone is 400; a wrong one 403', async () => {
    const plain = without(hdr, '_signature');
    const sigHeaders = { 'X-Svc-Signature': hdr['_signature'].signature as string, 'X-Svc-Public-Key': keyA };

    const onlySig = await post(s, plain, { 'X-Svc-Signature': sigHeaders['X-Svc-Signature'] });
    assert.deepEqual([onlySig.status, onlySig.body], [400, INCOMPLETE_HEADERS]);
    const onlyKey = await post(s, plain, { 'X-Svc-Public-Key': keyA });
    assert.deepEqual([onlyKey.status, onlyKey.body], [400, INCOMPLETE_HEADERS]);
    // Even with a valid body signature, a lone header is malformed.
    const lone = await post(s, hdr, { 'X-Svc-Public-Key': keyA });
    assert.deepEqual([lone.status, lone.body], [400, INCOMPLETE_HEADERS]);

    const wrongSig = await post(s, plain, { ...sigHeaders, 'X-Svc-Signature': loan['_signature'].signature as string });
    assert.deepEqual([wrongSig.status, wrongSig.body], [403, forbidden('invalid signature')]);
    const wrongKey = await post(s, plain, { ...sigHeaders, 'X-Svc-Public-Key': keyB });
    assert.deepEqual([wrongKey.status, wrongKey.body], [403, forbidden('untrusted public key')]);
    const badKey = await post(s, plain, { ...sigHeaders, 'X-Svc-Public-Key': '%%%' });
    assert.deepEqual([badKey.status, badKey.body], [403, forbidden('invalid public key base64')]);
    // Headers are THE signature: a valid body _signature does not rescue a wrong header pair.
    const bodyDoesNotCount = await post(s, hdr, { ...sigHeaders, 'X-Svc-Signature': loan['_signature'].signature as string });
    assert.deepEqual([bodyDoesNotCount.status, bodyDoesNotCount.body], [403, forbidden('invalid signature')]);
    assert.equal((await get(s, 'hdr')).status, 404);

    const ok = await post(s, plain, sigHeaders);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(await runRule(s, 'hdr'), 'HDR_OK');
    assert.deepEqual((await get(s, 'hdr')).body, plain);
    // The header signature is written into the stored file (docs/decisions.md).
    assert.deepEqual(readJson('rules/hdr.json')['_signature'], { algorithm: 'ed25519', public_key: keyA, signature: hdr['_signature'].signature });
  });

  it('loads signed JSON, YAML and compiled .svc files of the rules dir, and an unsigned local file', async () => {
    assert.equal(await runRule(s, 'local-json'), 'JSON_OK');
    assert.equal(await runRule(s, 'local-yaml'), 'YAML_OK');
    assert.equal(await runRule(s, 'local-svc'), 'SVC_OK');
    // Unsigned local files are allowed by default (--signature-allow-unsigned-local true)...
    assert.equal(await runRule(s, 'unsigned-local'), 'UNSIGNED_OK');
    // ...while the same unsigned rule over the API is refused.
    const up = await post(s, rule('unsigned-local', 'UNSIGNED_OK', '1.0.1'));
    assert.deepEqual([up.status, up.body], [403, forbidden('no signature found')]);
    assert.equal((await get(s, 'unsigned-local')).body.config.version, '1.0.0');
    const yaml = await get(s, 'local-yaml');
    assert.equal(yaml.body._signature, undefined);
    assert.equal(yaml.body.steps.ok.result.code, 'YAML_OK');
  });

  it('skips a corrupted .svc and one with a broken signature, logging why, and serves the rest', async () => {
    assert.match(String(skipReason(s, 'broken-svc.svc')), /CRC32 mismatch/);
    assert.equal(skipReason(s, 'badsig-svc.svc'), 'signature verification failed: invalid signature');
    assert.equal((await get(s, 'broken-svc')).status, 404);
    assert.equal((await get(s, 'badsig-svc')).status, 404);
    for (const f of ['local-json.json', 'local-yaml.yaml', 'local-svc.svc', 'unsigned-local.json']) {
      assert.equal(skipReason(s, f), undefined, f);
    }
    const list = await http(s.url, 'GET', '/api/v1/rulesets');
    const names = (list.body as Array<{ name: string }>).map((r) => r.name);
    for (const n of ['local-json', 'local-yaml', 'local-svc', 'unsigned-local']) assert.ok(names.includes(n), n);
  });

  it('never crashes on malformed signatures: each is a 4xx and /health stays 200', async () => {
    const big = 'A'.repeat(4 * 1024 * 1024);
    const base = without(hdr, '_signature');
    const cases: Array<[string, unknown, Record<string, string>, number, unknown]> = [
      ['_signature string', { ...base, _signature: hdr['_signature'].signature }, {}, 403, forbidden('invalid signature')],
      ['_signature array', { ...base, _signature: [hdr['_signature']] }, {}, 403, forbidden('invalid signature')],
      ['_signature number', { ...base, _signature: 42 }, {}, 403, forbidden('invalid signature')],
      ['_signature null', { ...base, _signature: null }, {}, 403, forbidden('no signature found')],
      ['_signature {}', { ...base, _signature: {} }, {}, 403, forbidden('invalid public key base64')],
      ['public_key a number', { ...base, _signature: { ...hdr['_signature'], public_key: 12 } }, {}, 403, forbidden('invalid public key base64')],
      ['huge base64 signature', { ...base, _signature: { ...hdr['_signature'], signature: big } }, {}, 403, forbidden('invalid signature')],
      ['huge base64 public key', { ...base, _signature: { ...hdr['_signature'], public_key: big } }, {}, 403, forbidden('invalid public key base64')],
      ['long header signature', base, { 'X-Svc-Signature': 'A'.repeat(8000), 'X-Svc-Public-Key': keyA }, 403, forbidden('invalid signature')],
      ['body over the size limit', { ...base, _signature: { ...hdr['_signature'], signature: 'A'.repeat(11 * 1024 * 1024) } }, {}, 413, undefined],
    ];
    for (const [what, body, headers, status, expected] of cases) {
      const r = await post(s, body, headers);
      assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)?.slice(0, 300)}`);
      if (expected !== undefined) assert.deepEqual(r.body, expected, what);
      assert.equal((await http(s.url, 'GET', '/health')).status, 200, `${what}: /health`);
    }
    assert.equal(s.child.exitCode, null);
    assert.equal((await get(s, 'hdr')).status, 200);
  });
});

describe('signatures disabled (default)', () => {
  let s: ServerProcess;
  before(async () => {
    s = await start([]);
  });
  after(async () => {
    await s?.stop();
  });

  it('accepts unsigned rules; any _signature (even a bad one) is not checked and GET drops it', async () => {
    assert.equal((await post(s, rule('plain', 'PLAIN'))).status, 200);
    assert.equal(await runRule(s, 'plain'), 'PLAIN');
    const tampered = { ...loan, steps: { ...loan['steps'], ok: { type: 'terminal', result: { code: 'TAMPERED' } } } };
    const cases: Doc[] = [
      tampered,
      { ...rule('bad-block', 'BAD_BLOCK'), _signature: { algorithm: 'rsa', public_key: '%%%', signature: 'x' } },
      { ...rule('sig-string', 'SIG_STRING'), _signature: 'nope' },
      { ...rule('sig-array', 'SIG_ARRAY'), _signature: [1, 2] },
      { ...rule('sig-null', 'SIG_NULL'), _signature: null },
    ];
    for (const body of cases) {
      const name = body['config'].name as string;
      const r = await post(s, body);
      assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
      const g = await get(s, name);
      assert.equal(g.status, 200);
      assert.equal(Object.hasOwn(g.body, '_signature'), false, name);
      assert.deepEqual(g.body, without(body, '_signature'));
    }
    assert.equal(await runRule(s, 'loan'), 'TAMPERED');
    // The X-Svc-* headers are not looked at either: a lone header is not a 400 here.
    const lone = await post(s, rule('lone-header', 'LONE'), { 'X-Svc-Signature': 'abc' });
    assert.equal(lone.status, 200, JSON.stringify(lone.body));
  });
});

describe('signatures optional (--signature-enabled, --signature-trusted-keys)', () => {
  let s: ServerProcess;
  before(async () => {
    s = await start(['--signature-enabled', '--signature-trusted-keys', keyA]);
  });
  after(async () => {
    await s?.stop();
  });

  it('accepts unsigned and valid signed rules; rejects untrusted, tampered and malformed signatures', async () => {
    assert.equal((await post(s, rule('plain', 'PLAIN'))).status, 200);
    assert.equal(await runRule(s, 'plain'), 'PLAIN');
    const signed = await post(s, loan);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    assert.deepEqual((await get(s, 'loan')).body, without(loan, '_signature'));
    const hdrOk = await post(s, without(hdr, '_signature'), { 'X-Svc-Signature': hdr['_signature'].signature, 'X-Svc-Public-Key': keyA });
    assert.equal(hdrOk.status, 200, JSON.stringify(hdrOk.body));

    const untrusted = await post(s, evil);
    assert.deepEqual([untrusted.status, untrusted.body], [403, forbidden('untrusted public key')]);
    assert.equal((await get(s, 'evil')).status, 404);
    const tampered = await post(s, { ...loan, config: { ...loan['config'], version: '9.9.9' } });
    assert.deepEqual([tampered.status, tampered.body], [403, forbidden('invalid signature')]);
    assert.equal((await get(s, 'loan')).body.config.version, '1.0.0');
    const str = await post(s, { ...rule('sig-string', 'X'), _signature: 'nope' });
    assert.deepEqual([str.status, str.body], [403, forbidden('invalid signature')]);
    const lone = await post(s, rule('lone-header', 'LONE'), { 'X-Svc-Signature': 'abc' });
    assert.deepEqual([lone.status, lone.body], [400, INCOMPLETE_HEADERS]);
  });
});

describe('file watcher with signatures required (--signature-allow-unsigned-local=false)', () => {
  it('reloads signed files, and skips (logging why) unsigned and tampered ones while the loaded version keeps serving', async () => {
    const rules = join(dir, 'rules-watch');
    mkdirSync(rules);
    /** Writes a rule file atomically (dotfile temp + rename: the watcher ignores dotfiles). */
    const put = (file: string, content: string | Buffer) => {
      writeFileSync(join(rules, `.${file}.tmp`), content);
      renameSync(join(rules, `.${file}.tmp`), join(rules, file));
    };
    const s = await start([
      '--rules-dir',
      rules,
      '--watch-rules',
      '--signature-enabled',
      '--signature-require',
      '--signature-allow-unsigned-local=false',
      '--signature-trusted-keys-file',
      join(dir, 'trusted.keys'),
    ]);
    try {
      await s.waitForLog((l) => l['msg'] === 'rule watcher ready');
      const reloaded = (name: string) => s.waitForLog((l) => l['msg'] === 'rule reloaded from file' && l['name'] === name);
      const skipped = (file: string) =>
        s.waitForLog((l) => l['msg'] === 'rule file skipped; the loaded version keeps serving' && String(l['path']).endsWith(`/${file}`));

      put('local-json.json', readFileSync(join(dir, 'rules/local-json.json')));
      await reloaded('local-json');
      assert.equal(await runRule(s, 'local-json'), 'JSON_OK');
      put('local-svc.svc', readFileSync(join(dir, 'rules/local-svc.svc')));
      await reloaded('local-svc');
      assert.equal(await runRule(s, 'local-svc'), 'SVC_OK');

      const signed = readJson('rules/local-json.json');
      put('local-json.json', JSON.stringify({ ...signed, config: { ...signed['config'], version: '6.6.6' } }));
      assert.equal((await skipped('local-json.json'))['err'], 'signature verification failed: invalid signature');
      assert.equal((await get(s, 'local-json')).body.config.version, '1.0.0');

      put('unsigned-local.json', JSON.stringify(rule('unsigned-local', 'UNSIGNED_OK')));
      assert.equal((await skipped('unsigned-local.json'))['err'], 'signature verification failed: no signature found');
      assert.equal((await get(s, 'unsigned-local')).status, 404);
    } finally {
      await s.stop();
    }
  });
});

describe('restart with --signature-allow-unsigned-local=false', () => {
  it('keeps uploaded signatures on disk, so the rules still load; unsigned files are skipped', async () => {
    const rules = join(dir, 'rules-restart');
    mkdirSync(rules);
    copyFileSync(join(dir, 'rules/local-json.json'), join(rules, 'local-json.json'));
    writeFileSync(join(rules, 'unsigned-local.json'), JSON.stringify(rule('unsigned-local', 'UNSIGNED_OK')));
    const common = ['--rules-dir', rules, '--signature-enabled', '--signature-require', '--signature-trusted-keys-file', join(dir, 'trusted.keys')];

    const first = await start(common);
    try {
      assert.equal(await runRule(first, 'unsigned-local'), 'UNSIGNED_OK');
      const body = await post(first, loan);
      assert.equal(body.status, 200, JSON.stringify(body.body));
      // Header form, with a stale body _signature (by the untrusted key B): the headers are
      // the signature, and they are what must be stored.
      const headerForm = await post(
        first,
        { ...without(hdr, '_signature'), _signature: evil['_signature'] },
        {
          'X-Svc-Signature': hdr['_signature'].signature,
          'X-Svc-Public-Key': keyA,
        },
      );
      assert.equal(headerForm.status, 200, JSON.stringify(headerForm.body));
      assert.deepEqual((await get(first, 'hdr')).body, without(hdr, '_signature'));
    } finally {
      await first.stop();
    }
    assert.deepEqual(JSON.parse(readFileSync(join(rules, 'loan.json'), 'utf8'))['_signature'], loan['_signature']);
    assert.deepEqual(JSON.parse(readFileSync(join(rules, 'hdr.json'), 'utf8'))['_signature'], {
      algorithm: 'ed25519',
      public_key: keyA,
      signature: hdr['_signature'].signature,
    });

    const second = await start([...common, '--signature-allow-unsigned-local=false']);
    try {
      assert.equal(skipReason(second, 'loan.json'), undefined);
      assert.equal(skipReason(second, 'hdr.json'), undefined);
      assert.equal(await runRule(second, 'loan'), 'APPROVED');
      assert.equal(await runRule(second, 'hdr'), 'HDR_OK');
      assert.equal(await runRule(second, 'local-json'), 'JSON_OK');
      assert.deepEqual((await get(second, 'loan')).body, without(loan, '_signature'));
      // The unsigned local file is now refused, with the reason in the log.
      assert.equal(skipReason(second, 'unsigned-local.json'), 'signature verification failed: no signature found');
      assert.equal((await get(second, 'unsigned-local')).status, 404);
    } finally {
      await second.stop();
    }
  });
});
