import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  decodeBase64Strict,
  decodePublicKeyBase64,
  generateKeyPair,
  KeyFormatError,
  parsePrivateKey,
  privateKeyFromSeed,
  privateKeyToPem,
  publicKeyFromRaw,
  rawPublicKey,
  signBytes,
  verifyBytes,
} from '../../../src/signing/ed25519.js';

const message = Buffer.from('{"a":1}', 'utf8');

describe('ed25519', () => {
  it('signs and verifies with the raw 32-byte public key', () => {
    const { privateKey, publicKeyRaw } = generateKeyPair();
    assert.equal(publicKeyRaw.length, 32);
    const sig = signBytes(privateKey, message);
    assert.equal(sig.length, 64);
    assert.equal(verifyBytes(publicKeyRaw, message, sig), true);
  });

  it('rejects a tampered message, a tampered signature and another key', () => {
    const { privateKey, publicKeyRaw } = generateKeyPair();
    const sig = signBytes(privateKey, message);
    assert.equal(verifyBytes(publicKeyRaw, Buffer.from('{"a":2}'), sig), false);
    const bad = Buffer.from(sig);
    bad[10] = (bad[10] as number) ^ 1;
    assert.equal(verifyBytes(publicKeyRaw, message, bad), false);
    assert.equal(verifyBytes(generateKeyPair().publicKeyRaw, message, sig), false);
  });

  it('never throws on wrong lengths', () => {
    const { privateKey, publicKeyRaw } = generateKeyPair();
    const sig = signBytes(privateKey, message);
    assert.equal(verifyBytes(publicKeyRaw.subarray(0, 31), message, sig), false);
    assert.equal(verifyBytes(publicKeyRaw, message, sig.subarray(0, 63)), false);
    assert.equal(verifyBytes(Buffer.alloc(32, 0xff), message, sig), false);
  });

  it('raw public key is the tail of the SPKI DER and round-trips', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ type: 'spki', format: 'der' });
    const raw = rawPublicKey(publicKey);
    assert.deepEqual(raw, der.subarray(der.length - 32));
    const back = publicKeyFromRaw(raw);
    assert.deepEqual(back.export({ type: 'spki', format: 'der' }), der);
    assert.throws(() => publicKeyFromRaw(Buffer.alloc(31)), KeyFormatError);
  });

  it('private key file: PKCS#8 PEM round trip, base64 seed and seed+public forms', () => {
    const { privateKey, publicKeyRaw } = generateKeyPair();
    const pem = privateKeyToPem(privateKey);
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
    assert.deepEqual(rawPublicKey(parsePrivateKey(pem)), publicKeyRaw);

    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    const seed = der.subarray(der.length - 32);
    assert.deepEqual(rawPublicKey(parsePrivateKey(`${seed.toString('base64')}\n`)), publicKeyRaw);
    assert.deepEqual(rawPublicKey(parsePrivateKey(Buffer.concat([seed, publicKeyRaw]).toString('base64'))), publicKeyRaw);
    assert.deepEqual(rawPublicKey(privateKeyFromSeed(seed)), publicKeyRaw);

    const otherPub = generateKeyPair().publicKeyRaw;
    assert.throws(() => parsePrivateKey(Buffer.concat([seed, otherPub]).toString('base64')), KeyFormatError);
    assert.throws(() => parsePrivateKey('not a key'), KeyFormatError);
    assert.throws(() => parsePrivateKey(Buffer.alloc(16).toString('base64')), KeyFormatError);
  });

  it('refuses a non-Ed25519 PEM key', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    assert.throws(() => parsePrivateKey(pem), /not ed25519/);
    assert.ok(createPublicKey(privateKey));
  });
});

describe('strict base64', () => {
  it('accepts padded and unpadded standard base64', () => {
    assert.deepEqual(decodeBase64Strict('aGk='), Buffer.from('hi'));
    assert.deepEqual(decodeBase64Strict('aGk'), Buffer.from('hi'));
    assert.deepEqual(decodeBase64Strict(' aGVsbG8= \n'), Buffer.from('hello'));
  });

  it('rejects junk that Buffer.from would silently accept', () => {
    for (const bad of ['', 'a', 'aG!k', 'aGk=x', 'aGk==', 'aGl=', 'a-_b', 'aG k=']) {
      assert.equal(decodeBase64Strict(bad), undefined, bad);
    }
  });

  it('decodes only 32-byte public keys', () => {
    const { publicKeyRaw } = generateKeyPair();
    assert.deepEqual(decodePublicKeyBase64(publicKeyRaw.toString('base64')), publicKeyRaw);
    assert.equal(decodePublicKeyBase64(Buffer.alloc(31).toString('base64')), undefined);
    assert.equal(decodePublicKeyBase64(Buffer.alloc(33).toString('base64')), undefined);
  });
});
