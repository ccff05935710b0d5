/**
 * What `svc-apikey` prints: a new key and the keys-file record of it (EXTENSIONS.md 1). The
 * record goes through the keys-file parser before it is printed, so a record the server would
 * refuse is never handed out.
 */
import { hashApiKey, newApiKey } from './api-key.js';
import { parseKeysFile } from './keys-file.js';

/** The options of a new key. */
export interface KeyRequest {
  readonly id: string;
  readonly role: string;
  /** Tenant ids, or `['*']`. */
  readonly tenants: readonly string[];
  /** ISO 8601 date-time, or null for a key that does not expire. */
  readonly expiresAt: string | null;
}

/** A new key and its record. Throws `KeysFileError` (naming the bad field) for bad options. */
export function makeKeyRecord(request: KeyRequest, random?: (n: number) => Buffer): { key: string; record: Record<string, unknown> } {
  const key = newApiKey(random);
  let expires: string | null = null;
  if (request.expiresAt !== null) {
    const ms = /^\d{4}-\d{2}-\d{2}/.test(request.expiresAt) ? Date.parse(request.expiresAt) : Number.NaN;
    expires = Number.isFinite(ms) ? new Date(ms).toISOString() : request.expiresAt;
  }
  const record = { id: request.id, hash: hashApiKey(key), role: request.role, tenants: [...request.tenants], expires_at: expires };
  parseKeysFile(JSON.stringify({ keys: [record] }));
  return { key, record };
}
