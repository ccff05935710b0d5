import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateKeyPair } from '../../../src/signing/ed25519.js';
import {
  loadTrustedKeys,
  normalizePublicKey,
  parseTrustedKeyList,
  parseTrustedKeysFile,
  readTrustedKeysFile,
  TrustedKeyError,
} from '../../../src/signing/trusted-keys.js';

const k1 = generateKeyPair().publicKeyRaw.toString('base64');
const k2 = generateKeyPair().publicKeyRaw.toString('base64');

describe('trusted keys', () => {
  it('parses a comma-separated list, ignoring spaces and empty entries', () => {
    assert.deepEqual(parseTrustedKeyList(` ${k1} ,${k2},, `), [k1, k2]);
    assert.deepEqual(parseTrustedKeyList(''), []);
  });

  it('names the bad entry of the list', () => {
    assert.throws(
      () => parseTrustedKeyList(`${k1},nope`),
      (err: unknown) => {
        assert.ok(err instanceof TrustedKeyError);
        assert.match(err.message, /--signature-trusted-keys: entry 2 \(nope\) is not a base64 Ed25519 public key/);
        return true;
      },
    );
  });

  it('parses a keys file with comments, blank lines, CRLF and duplicates', () => {
    const text = `# production signer\n${k1}\r\n\n   \n  # indented comment\n${k2}  \n${k1}\n`;
    assert.deepEqual(parseTrustedKeysFile(text, 'keys.txt'), [k1, k2]);
  });

  it('names the file and line of a bad key', () => {
    const text = `# ok\n${k1}\n\n${k2.slice(0, 20)}\n`;
    assert.throws(() => parseTrustedKeysFile(text, 'keys.txt'), /keys\.txt:4: '.*' is not a base64 Ed25519 public key/);
  });

  it('normalises unpadded keys to canonical base64', () => {
    assert.equal(normalizePublicKey(k1.replace(/=+$/, '')), k1);
    assert.equal(normalizePublicKey('abc'), undefined);
  });

  it('reads the keys file and merges it with the list', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-keys-'));
    try {
      const file = join(dir, 'trusted.keys');
      writeFileSync(file, `${k2}\n${k1}\n`);
      assert.deepEqual(readTrustedKeysFile(file), [k2, k1]);
      assert.deepEqual(loadTrustedKeys({ list: k1, file }), [k1, k2]);
      assert.deepEqual(loadTrustedKeys({}), []);
      assert.deepEqual(loadTrustedKeys({ list: [k2, ` ${k1} `], file: null }), [k2, k1]);
      assert.throws(() => loadTrustedKeys({ list: [k1, 'bad'] }), /entry 2 \(bad\)/);
      assert.throws(() => readTrustedKeysFile(join(dir, 'missing')), /cannot read trusted keys file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
