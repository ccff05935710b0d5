/**
 * The API keys file (EXTENSIONS.md 1), JSON or YAML:
 * `{"keys": [{"id": "deployer", "hash": "sha256:<64 hex>", "role": "editor", "tenants": ["*"], "expires_at": null}]}`.
 * Parsed and checked whole: one bad record makes the whole file bad (the caller keeps the
 * previous keys), with a reason that names the record.
 */
import { parse as parseYaml } from 'yaml';
import { KEY_HASH_PATTERN, hashBytes } from './api-key.js';
import { AUTH_ROLES, isAuthRole, makePrincipal, type Principal } from './permissions.js';

/** A keys file that cannot be used; the message says where and why. */
export class KeysFileError extends Error {
  override readonly name = 'KeysFileError';
}

/** One usable key: its digest and the principal it stands for. */
export interface KeyEntry {
  readonly digest: Buffer;
  readonly principal: Principal;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/;
const FIELDS = new Set(['id', 'hash', 'role', 'tenants', 'expires_at', 'comment']);

/** Parses and checks the text of a keys file. Throws `KeysFileError`. */
export function parseKeysFile(text: string): KeyEntry[] {
  let doc: unknown;
  try {
    doc = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new KeysFileError(`not valid JSON or YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || !Array.isArray((doc as { keys?: unknown }).keys)) {
    throw new KeysFileError('must be an object with a "keys" array');
  }
  const records = (doc as { keys: unknown[] }).keys;
  const ids = new Set<string>();
  const hashes = new Set<string>();
  return records.map((raw, i) => {
    const where = `keys[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new KeysFileError(`${where} must be an object`);
    const r = raw as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!FIELDS.has(k)) throw new KeysFileError(`${where} has an unknown field "${k}"`);
    const id = r['id'];
    if (typeof id !== 'string' || !ID_PATTERN.test(id))
      throw new KeysFileError(`${where}.id must be 1-128 letters, digits or _ . @ : - (starting with a letter or digit)`);
    if (ids.has(id)) throw new KeysFileError(`${where}.id "${id}" is used twice`);
    ids.add(id);
    const hash = r['hash'];
    if (typeof hash !== 'string' || !KEY_HASH_PATTERN.test(hash))
      throw new KeysFileError(`${where} (${id}).hash must be "sha256:" and 64 lower-case hex digits`);
    if (hashes.has(hash)) throw new KeysFileError(`${where} (${id}).hash is the hash of another record`);
    hashes.add(hash);
    const role = r['role'];
    if (!isAuthRole(role)) throw new KeysFileError(`${where} (${id}).role must be one of ${AUTH_ROLES.join(', ')}`);
    const tenants = r['tenants'];
    if (!Array.isArray(tenants) || tenants.length === 0 || !tenants.every((t) => typeof t === 'string' && t.length > 0)) {
      throw new KeysFileError(`${where} (${id}).tenants must be a non-empty list of tenant ids ("*" for all)`);
    }
    const expires = r['expires_at'] ?? null;
    let expiresAt = Number.POSITIVE_INFINITY;
    if (expires !== null) {
      // NOTE: YAML reads an unquoted timestamp as a Date.
      const ms =
        expires instanceof Date ? expires.getTime() : typeof expires === 'string' && /^\d{4}-\d{2}-\d{2}/.test(expires) ? Date.parse(expires) : Number.NaN;
      if (!Number.isFinite(ms)) throw new KeysFileError(`${where} (${id}).expires_at must be null or an ISO 8601 date-time`);
      expiresAt = ms;
    }
    return { digest: hashBytes(hash), principal: makePrincipal(id, 'api_key', role, tenants as string[], expiresAt) };
  });
}
