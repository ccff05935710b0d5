/** API keys (src/auth/api-key.ts): format, stored hash, constant-time lookup. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { findHash, hashApiKey, hashBytes, looksLikeApiKey, newApiKey, sha256 } from '../../../src/auth/api-key.js';

test('a new key is svck_ and 32 random bytes in base64url, different each time', () => {
  const a = newApiKey();
  const b = newApiKey();
  assert.match(a, /^svck_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a, b);
  assert.equal(Buffer.from(a.slice(5), 'base64url').length, 32);
  assert.ok(looksLikeApiKey(a));
});

test('the stored form is sha256:<hex> of the key text', () => {
  const key = newApiKey();
  assert.equal(hashApiKey(key), `sha256:${createHash('sha256').update(key).digest('hex')}`);
  assert.deepEqual(hashBytes(hashApiKey(key)), sha256(key));
});

test('looksLikeApiKey: prefix, base64url characters, at least 32 bytes', () => {
  assert.equal(looksLikeApiKey('svck_short'), false);
  assert.equal(looksLikeApiKey(`svck_${'a'.repeat(42)}`), false);
  assert.equal(looksLikeApiKey(`svck_${'a'.repeat(43)}`), true);
  assert.equal(looksLikeApiKey(`svck_${'a'.repeat(42)}=`), false);
  assert.equal(looksLikeApiKey(`xxxx_${'a'.repeat(43)}`), false);
  assert.equal(looksLikeApiKey(`svck_${'a'.repeat(600)}`), false);
});

test('findHash finds the matching digest among many, or -1', () => {
  const keys = Array.from({ length: 5 }, () => newApiKey());
  const digests = keys.map(sha256);
  keys.forEach((k, i) => assert.equal(findHash(sha256(k), digests), i));
  assert.equal(findHash(sha256(newApiKey()), digests), -1);
  assert.equal(findHash(sha256(keys[0] as string), []), -1);
});
