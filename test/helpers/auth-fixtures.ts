/**
 * API-key fixtures for the authentication tests (EXTENSIONS.md 1): keys made the way
 * `svc-apikey` makes them (`makeKeyRecord`), written to a keys file that a server reads with
 * `--auth-keys-file`, and the `Authorization` header that carries one. JWT and JWKS fixtures
 * live in ./auth-jwt.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeKeyRecord, type AuthRole } from '../../src/auth/index.js';

/** One key to make: its id, role, tenants (default `["*"]`) and expiry (default none). */
export interface KeySpec {
  readonly id: string;
  readonly role: AuthRole;
  readonly tenants?: readonly string[];
  /** ISO 8601 date-time, or null/absent for a key that does not expire. */
  readonly expiresAt?: string | null;
}

/** A keys file on disk and the keys it holds, by id. */
export interface KeysFile {
  readonly path: string;
  /** The secret key of each id (what a client sends). */
  readonly keys: Readonly<Record<string, string>>;
  /** The records written to the file (what an operator keeps). */
  readonly records: readonly Record<string, unknown>[];
}

/** The four roles, each with every tenant: ids `executor`, `viewer`, `editor`, `admin`. */
export const ROLE_KEYS: readonly KeySpec[] = [
  { id: 'executor', role: 'executor' },
  { id: 'viewer', role: 'viewer' },
  { id: 'editor', role: 'editor' },
  { id: 'admin', role: 'admin' },
];

/** Makes a key for each spec and writes them as a JSON keys file `name` in `dir`. */
export function writeKeysFile(dir: string, specs: readonly KeySpec[], name = 'keys.json'): KeysFile {
  const keys: Record<string, string> = {};
  const records: Record<string, unknown>[] = [];
  for (const s of specs) {
    const { key, record } = makeKeyRecord({ id: s.id, role: s.role, tenants: s.tenants ?? ['*'], expiresAt: s.expiresAt ?? null });
    keys[s.id] = key;
    records.push(record);
  }
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ keys: records }, null, 2));
  return { path, keys, records };
}

/** The `Authorization` header carrying `key` as a bearer token. */
export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}

/** A well-formed API key that no keys file holds (`svck_` and 43 base64url characters). */
export const UNKNOWN_KEY = `svck_${'A'.repeat(43)}`;

/** A token with the shape of a JWT (three base64url parts) that nothing signed. */
export const JWT_LOOKING_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJl';
