/**
 * API keys (EXTENSIONS.md 1): `svck_` + 32 random bytes in base64url. Only the SHA-256 of a key
 * is stored (`sha256:<64 hex>`); a presented key is hashed and compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The prefix of every API key. */
export const API_KEY_PREFIX = 'svck_';

/** Random bytes in a new key. */
export const API_KEY_BYTES = 32;

/** A key's stored form: `sha256:` and 64 lower-case hex digits. */
export const KEY_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** A new random API key. */
export function newApiKey(random: (n: number) => Buffer = randomBytes): string {
  return API_KEY_PREFIX + random(API_KEY_BYTES).toString('base64url');
}

/** The stored form of a key: `sha256:<hex>`. */
export function hashApiKey(key: string): string {
  return `sha256:${sha256(key).toString('hex')}`;
}

/** The 32 digest bytes of a stored `sha256:<hex>` hash. */
export function hashBytes(stored: string): Buffer {
  return Buffer.from(stored.slice('sha256:'.length), 'hex');
}

/** SHA-256 of a key's UTF-8 text. */
export function sha256(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * True when `key` has the shape of an API key. NOTE: keys made by hand may be longer; the
 * rule is the prefix and base64url characters, at least 32 bytes' worth.
 */
export function looksLikeApiKey(key: string): boolean {
  return (
    key.startsWith(API_KEY_PREFIX) && key.length >= API_KEY_PREFIX.length + 43 && key.length <= 512 && /^[A-Za-z0-9_-]+$/.test(key.slice(API_KEY_PREFIX.length))
  );
}

/**
 * The index of the record whose hash equals `digest`, or -1. NOTE (EXTENSIONS.md 1: constant
 * time): every record is compared with `timingSafeEqual` and the loop never stops early, so
 * the time taken says nothing about which record, if any, matched.
 */
export function findHash(digest: Buffer, hashes: readonly Buffer[]): number {
  let found = -1;
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i] as Buffer;
    if (h.length === digest.length && timingSafeEqual(h, digest) && found < 0) found = i;
  }
  return found;
}
