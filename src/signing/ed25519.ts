/**
 * Ed25519 keys and signatures on top of `node:crypto` (SPEC.md "Authentication" item 1).
 *
 * Key formats (docs/signing.md "Keys"):
 * - Public keys travel as base64 (standard alphabet, padded) of the raw 32-byte key. The raw
 *   key is the last 32 bytes of the SPKI DER encoding.
 * - Private key files written by `svc-keygen` are PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`),
 *   the same thing `openssl genpkey -algorithm ed25519` writes. Readers also accept a single
 *   base64 line holding the raw 32-byte seed, or 64 bytes of seed followed by its public key
 *   (the libsodium / Go layout), which is handy for CI secrets.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/** Length of a raw Ed25519 public key. */
export const PUBLIC_KEY_BYTES = 32;
/** Length of an Ed25519 signature. */
export const SIGNATURE_BYTES = 64;
/** Length of a raw Ed25519 private key seed. */
export const SEED_BYTES = 32;

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw key follows it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** DER prefix of an Ed25519 PKCS#8 PrivateKeyInfo; the raw seed follows it. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Error for a key that cannot be read (wrong format, wrong type, wrong length). */
export class KeyFormatError extends Error {
  override readonly name = 'KeyFormatError';
}

/**
 * Strict base64 decoding (standard alphabet; padding optional; surrounding whitespace trimmed).
 * Returns `undefined` for anything else. NOTE: `Buffer.from(s, 'base64')` silently skips bad
 * characters, so it cannot tell a typo from a key; we re-encode and compare instead.
 */
export function decodeBase64Strict(text: string): Buffer | undefined {
  const s = text.trim();
  if (s.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return undefined;
  const unpadded = s.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return undefined;
  const bytes = Buffer.from(unpadded, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== unpadded) return undefined;
  if (s.length !== unpadded.length && s.length % 4 !== 0) return undefined;
  return bytes;
}

/** Decodes a base64 public key into its raw 32 bytes, or `undefined` when it is not one. */
export function decodePublicKeyBase64(text: string): Buffer | undefined {
  const raw = decodeBase64Strict(text);
  return raw && raw.length === PUBLIC_KEY_BYTES ? raw : undefined;
}

/** Canonical base64 text (padded) of a raw public key or a signature. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** A fresh key pair: the private `KeyObject` and the raw 32-byte public key. */
export interface GeneratedKeyPair {
  readonly privateKey: KeyObject;
  readonly publicKeyRaw: Buffer;
}

/** Generates a new Ed25519 key pair. */
export function generateKeyPair(): GeneratedKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKeyRaw: rawPublicKey(publicKey) };
}

/** Raw 32-byte public key of an Ed25519 public or private `KeyObject`. */
export function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  assertEd25519(pub);
  const der = pub.export({ type: 'spki', format: 'der' });
  return Buffer.from(der.subarray(der.length - PUBLIC_KEY_BYTES));
}

/** Public `KeyObject` from a raw 32-byte key (SPKI DER prefix + raw). Throws `KeyFormatError`. */
export function publicKeyFromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== PUBLIC_KEY_BYTES) {
    throw new KeyFormatError(`an Ed25519 public key has ${PUBLIC_KEY_BYTES} bytes, got ${raw.length}`);
  }
  try {
    return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch (err) {
    throw new KeyFormatError(`not a usable Ed25519 public key: ${(err as Error).message}`);
  }
}

/** Private `KeyObject` from a raw 32-byte seed. Throws `KeyFormatError`. */
export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== SEED_BYTES) {
    throw new KeyFormatError(`an Ed25519 private key seed has ${SEED_BYTES} bytes, got ${seed.length}`);
  }
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The private key file text written by `svc-keygen`: PKCS#8 PEM. */
export function privateKeyToPem(key: KeyObject): string {
  assertEd25519(key);
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * Reads a private key file's text: PKCS#8 PEM, or one base64 line of the 32-byte seed, or of
 * 64 bytes (seed then public key; the public half must match the seed). Throws `KeyFormatError`.
 */
export function parsePrivateKey(text: string): KeyObject {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch (err) {
      throw new KeyFormatError(`cannot read the PEM private key: ${(err as Error).message}`);
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new KeyFormatError(`the private key is ${key.asymmetricKeyType ?? 'unknown'}, not ed25519`);
    }
    return key;
  }
  const raw = decodeBase64Strict(trimmed);
  if (!raw) throw new KeyFormatError('the private key is neither PKCS#8 PEM nor base64');
  if (raw.length === SEED_BYTES) return privateKeyFromSeed(raw);
  if (raw.length === SEED_BYTES + PUBLIC_KEY_BYTES) {
    const key = privateKeyFromSeed(raw.subarray(0, SEED_BYTES));
    if (!rawPublicKey(key).equals(raw.subarray(SEED_BYTES))) {
      throw new KeyFormatError('the 64-byte private key does not hold the public key of its seed');
    }
    return key;
  }
  throw new KeyFormatError(`a base64 private key must hold 32 or 64 bytes, got ${raw.length}`);
}

/** Signs `bytes` with an Ed25519 private key; returns the 64-byte signature. */
export function signBytes(privateKey: KeyObject, bytes: Uint8Array): Buffer {
  assertEd25519(privateKey);
  return sign(null, bytes, privateKey);
}

/**
 * True when `signature` is a valid Ed25519 signature of `bytes` by the raw public key.
 * Never throws: wrong lengths or unusable keys give `false`.
 */
export function verifyBytes(publicKeyRaw: Uint8Array, bytes: Uint8Array, signature: Uint8Array): boolean {
  if (publicKeyRaw.length !== PUBLIC_KEY_BYTES || signature.length !== SIGNATURE_BYTES) return false;
  try {
    return verify(null, bytes, publicKeyFromRaw(publicKeyRaw), signature);
  } catch {
    return false;
  }
}

function assertEd25519(key: KeyObject): void {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new KeyFormatError(`expected an ed25519 key, got ${key.asymmetricKeyType ?? 'a symmetric key'}`);
  }
}
