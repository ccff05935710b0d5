import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateKeyPair } from '../../../src/signing/ed25519.js';
import { signatureOf } from '../../../src/signing/policy.js';
import {
  decodeRuleFile,
  MAX_NESTING_DEPTH,
  MAX_RULE_FILE_BYTES,
  plainDataProblem,
  readRuleFile,
  readRuleFileSync,
  RuleFileError,
  ruleFileFormat,
} from '../../../src/signing/rule-file.js';
import { encodeSvc, initSvcCodec } from '../../../src/signing/svc-format.js';

await initSvcCodec();

const doc = {
  config: { name: 'r1', version: '1.0.0', entry_step: 'a' },
  steps: { a: { type: 'terminal', result: { code: 'OK', rate: 0.5, tags: ['x', 'y'], none: null, yes: true } } },
};
const yamlText = `# comment
config:
  name: r1
  version: "1.0.0"
  entry_step: a
steps:
  a:
    type: terminal
    result:
      code: OK
      rate: 0.5
      tags: [x, y]
      none: null
      yes: true
`;

function fails(path: string, bytes: Buffer | string, pattern: RegExp): void {
  assert.throws(
    () => decodeRuleFile(path, Buffer.from(bytes)),
    (err: unknown) => {
      assert.ok(err instanceof RuleFileError, `expected RuleFileError, got ${String(err)}`);
      assert.equal(err.path, path);
      assert.ok(err.message.startsWith(`${path}: `), err.message);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe('ruleFileFormat', () => {
  it('goes by extension, case-insensitively', () => {
    assert.equal(ruleFileFormat('a/b.json'), 'json');
    assert.equal(ruleFileFormat('b.YAML'), 'yaml');
    assert.equal(ruleFileFormat('b.yml'), 'yaml');
    assert.equal(ruleFileFormat('b.svc'), 'svc');
    assert.equal(ruleFileFormat('b.txt'), undefined);
    assert.equal(ruleFileFormat('json'), undefined);
  });
});

describe('decodeRuleFile', () => {
  it('reads JSON, YAML and .svc into the same data', () => {
    assert.deepEqual(decodeRuleFile('r1.json', Buffer.from(JSON.stringify(doc))), doc);
    assert.deepEqual(decodeRuleFile('r1.yaml', Buffer.from(yamlText)), doc);
    assert.deepEqual(decodeRuleFile('r1.yml', Buffer.from(yamlText)), doc);
    assert.deepEqual(decodeRuleFile('r1.svc', encodeSvc(doc)), doc);
  });

  it('rebuilds _signature for a signed .svc', () => {
    const key = generateKeyPair();
    const out = decodeRuleFile('r1.svc', encodeSvc(doc, signatureOf(doc, key.privateKey)));
    assert.equal((out._signature as { public_key: string }).public_key, key.publicKeyRaw.toString('base64'));
  });

  it('accepts a UTF-8 BOM in JSON', () => {
    assert.deepEqual(decodeRuleFile('r1.json', Buffer.from(`\uFEFF${JSON.stringify(doc)}`)), doc);
  });

  it('names the file and the reason for bad content', () => {
    fails('rules/bad.json', '{"config":', /invalid JSON/);
    fails('rules/bad.json', '[1,2]', /must hold an object .*got an array/);
    fails('rules/bad.json', Buffer.from([0x7b, 0xff, 0x7d]), /not valid UTF-8/);
    fails('rules/bad.yaml', 'config: [1,\n', /invalid YAML/);
    fails('rules/bad.yaml', '- 1\n- 2\n', /got an array/);
    fails('rules/bad.yaml', 'just a string', /got a string/);
    fails('rules/bad.svc', 'SVCRjunk', /\.svc/);
    fails('rules/bad.txt', '{}', /unknown rule file extension/);
  });

  it('refuses __proto__ keys in every format, at any depth', () => {
    fails('p.json', '{"__proto__":{"polluted":1}}', /"__proto__" is not allowed/);
    fails('p.json', '{"config":{"a":[{"__proto__":1}]}}', /\$\.config\.a\[0\]: the key "__proto__"/);
    fails('p.yaml', '__proto__:\n  polluted: 1\n', /"__proto__" is not allowed/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('YAML: one document only', () => {
    fails('m.yaml', 'a: 1\n---\nb: 2\n', /multiple documents/);
  });

  it('YAML: no custom or YAML 1.1 tags', () => {
    fails('t.yaml', 'a: !!js/function "function () {}"\n', /Unresolved tag/);
    fails('t.yaml', 'a: !custom x\n', /Unresolved tag/);
    fails('t.yaml', 'a: !!binary aGVsbG8=\n', /Unresolved tag/);
    fails('t.yaml', 'a: !!set {x}\n', /Unresolved tag/);
  });

  it('YAML: duplicate keys, non-string keys and non-finite numbers are refused', () => {
    fails('d.yaml', 'a: 1\na: 2\n', /unique/);
    fails('d.yaml', '? [1]\n: 2\n', /keys must be strings/);
    fails('d.yaml', 'a: .inf\n', /Infinity is not a JSON number/);
    fails('d.yaml', 'a: .nan\n', /NaN is not a JSON number/);
  });

  it('YAML: merge keys stay plain keys (no merging)', () => {
    assert.deepEqual(decodeRuleFile('m.yaml', Buffer.from('<<: {a: 1}\n')), { '<<': { a: 1 } });
  });

  it('YAML: aliases work, but an alias bomb (billion laughs) is refused', () => {
    assert.deepEqual(decodeRuleFile('a.yaml', Buffer.from('x: &v [1, 2]\ny: *v\n')), { x: [1, 2], y: [1, 2] });
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    fails('bomb.yaml', `${levels.join('\n')}\n`, /alias/i);
  });

  it('refuses nesting deeper than the limit', () => {
    const deep = `${'['.repeat(MAX_NESTING_DEPTH + 1)}${']'.repeat(MAX_NESTING_DEPTH + 1)}`;
    fails('deep.json', `{"a":${deep}}`, /nested deeper than/);
  });
});

describe('plainDataProblem', () => {
  it('accepts plain JSON data and names the path of anything else', () => {
    assert.equal(plainDataProblem(doc), undefined);
    assert.match(plainDataProblem({ a: [1, new Date(0)] }) ?? '', /\$\.a\[1\]: not a plain JSON object/);
    assert.match(plainDataProblem({ a: 1n }) ?? '', /bigint/);
  });
});

describe('reading rule files', () => {
  it('reads a file whole, sync and async', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-rule-read-'));
    try {
      const path = join(dir, 'a.json');
      const text = JSON.stringify({ config: { name: 'a' }, note: 'é'.repeat(70_000) });
      writeFileSync(path, text);
      assert.equal(readRuleFileSync(path).toString('utf8'), text);
      assert.equal((await readRuleFile(path)).toString('utf8'), text);
      writeFileSync(path, '');
      assert.equal(readRuleFileSync(path).length, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a file over the limit from its size, before reading it (a 3 GiB sparse file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-rule-read-'));
    try {
      const path = join(dir, 'huge.json');
      writeFileSync(path, '');
      truncateSync(path, 3 * 2 ** 30);
      const expected = (e: unknown) =>
        e instanceof RuleFileError && e.message === `${path}: file is ${3 * 2 ** 30} bytes, over the ${MAX_RULE_FILE_BYTES}-byte limit`;
      assert.throws(() => readRuleFileSync(path), expected);
      await assert.rejects(readRuleFile(path), expected);
      // One byte over the limit is refused; the limit itself is read.
      truncateSync(path, MAX_RULE_FILE_BYTES + 1);
      assert.throws(() => readRuleFileSync(path), RuleFileError);
      truncateSync(path, MAX_RULE_FILE_BYTES);
      assert.equal(readRuleFileSync(path).length, MAX_RULE_FILE_BYTES);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing file is the file system error', async () => {
    assert.throws(() => readRuleFileSync('/nonexistent/svc/a.json'), { code: 'ENOENT' });
    await assert.rejects(readRuleFile('/nonexistent/svc/a.json'), { code: 'ENOENT' });
  });
});
