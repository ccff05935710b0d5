/**
 * Trusted public keys of the signature policy (SPEC.md "Authentication" item 6):
 * `--signature-trusted-keys` (comma-separated base64 keys) and `--signature-trusted-keys-file`
 * (one base64 key per line; lines starting with `#` are comments; blank lines are ignored).
 * Every key is checked here, at start-up, so a typo is a clear error instead of a rule that
 * later fails with "untrusted public key".
 */
import { readFileSync } from 'node:fs';
import { decodePublicKeyBase64, toBase64 } from './ed25519.js';

/** A trusted-key entry that is not base64 of a 32-byte Ed25519 public key. */
export class TrustedKeyError extends Error {
  override readonly name = 'TrustedKeyError';
}

/** Normalises one base64 key (trimmed, canonical padding), or `undefined` when it is not a key. */
export function normalizePublicKey(text: string): string | undefined {
  const raw = decodePublicKeyBase64(text);
  return raw ? toBase64(raw) : undefined;
}

/**
 * Parses the value of `--signature-trusted-keys`: comma-separated base64 keys, spaces around
 * entries and empty entries ignored. Throws `TrustedKeyError` naming the bad entry (1-based).
 */
export function parseTrustedKeyList(list: string, source = '--signature-trusted-keys'): string[] {
  const keys: string[] = [];
  const entries = list.split(',');
  entries.forEach((entry, i) => {
    const text = entry.trim();
    if (text === '') return;
    const key = normalizePublicKey(text);
    if (!key) throw new TrustedKeyError(`${source}: entry ${i + 1} (${preview(text)}) ${NOT_A_KEY}`);
    keys.push(key);
  });
  return dedupe(keys);
}

/**
 * Parses the text of a trusted keys file: one base64 key per line; a line whose first
 * non-blank character is `#` is a comment; blank lines are ignored; CRLF is accepted.
 * Throws `TrustedKeyError` naming the file and the line.
 */
export function parseTrustedKeysFile(text: string, fileName = 'trusted keys file'): string[] {
  const keys: string[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const key = normalizePublicKey(trimmed);
    if (!key) throw new TrustedKeyError(`${fileName}:${i + 1}: '${preview(trimmed)}' ${NOT_A_KEY}`);
    keys.push(key);
  });
  return dedupe(keys);
}

/** Reads and parses a trusted keys file. Throws `TrustedKeyError` (also for I/O errors). */
export function readTrustedKeysFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TrustedKeyError(`cannot read trusted keys file ${path}: ${(err as Error).message}`);
  }
  return parseTrustedKeysFile(text, path);
}

/**
 * All trusted keys from the two server options (either may be absent), normalised and
 * de-duplicated, list entries first. `list` is the raw `--signature-trusted-keys` text or the
 * already split entries. Throws `TrustedKeyError` naming the bad entry or file line.
 */
export function loadTrustedKeys(options: { list?: string | readonly string[] | null | undefined; file?: string | null | undefined }): string[] {
  const list = options.list ?? '';
  const fromList = parseTrustedKeyList(typeof list === 'string' ? list : list.join(','));
  const fromFile = options.file ? readTrustedKeysFile(options.file) : [];
  return dedupe([...fromList, ...fromFile]);
}

const NOT_A_KEY = 'is not a base64 Ed25519 public key (44 characters of base64 encoding 32 bytes)';

function dedupe(keys: string[]): string[] {
  return [...new Set(keys)];
}

function preview(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 60 ? `${clean.slice(0, 57)}...` : clean;
}
