/**
 * JWT and JWKS fixtures for the authentication tests (EXTENSIONS.md 1): key pairs made with
 * jose (RS256, ES256, EdDSA), a JWKS file of their public halves, and tokens signed with
 * `SignJWT` whose claims (sub, role, tenants, iss, aud, exp, nbf) the test chooses. Also a
 * small API-key helper (one key per role through `makeKeyRecord`) for the tests that mix both
 * sources; the HTTP tests' fixtures are in ./auth-fixtures.ts.
 */
import { writeFileSync } from 'node:fs';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { makeKeyRecord } from '../../src/auth/index.js';

/** The signature algorithms the server accepts. */
export type JwtAlg = 'RS256' | 'ES256' | 'EdDSA';

/** The private key type jose's `generateKeyPair` makes. */
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A signing key and the public JWK of it (with `kid`, `alg`, `use`). */
export interface SigningKey {
  readonly alg: JwtAlg;
  readonly kid: string;
  readonly privateKey: PrivateKey;
  readonly publicJwk: JWK;
  /** The private half as a JWK (for tests that put a private key where a public one belongs). */
  readonly privateJwk: JWK;
}

/** A new key pair for `alg`; `kid` defaults to `<alg>-<random>`. */
export async function makeSigningKey(alg: JwtAlg, kid = `${alg.toLowerCase()}-${Math.random().toString(36).slice(2, 10)}`): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, publicJwk, privateJwk };
}

/** The JWKS document of the public halves of `keys`. */
export function jwksOf(keys: readonly SigningKey[]): { keys: JWK[] } {
  return { keys: keys.map((k) => k.publicJwk) };
}

/** Writes the JWKS of `keys` to `path` (replacing it in place). */
export function writeJwks(path: string, keys: readonly SigningKey[]): void {
  writeFileSync(path, JSON.stringify(jwksOf(keys)));
}

/** The claims of a test token. Times are offsets in seconds from now; null leaves the claim out. */
export interface TokenClaims {
  readonly sub?: string | null;
  /** `svc_role` (or `roleClaim`); any JSON value, to test values that are not roles. */
  readonly role?: unknown;
  /** `svc_tenants` (or `tenantsClaim`). */
  readonly tenants?: unknown;
  readonly roleClaim?: string;
  readonly tenantsClaim?: string;
  readonly iss?: string | null;
  readonly aud?: string | string[] | null;
  /** Seconds from now; default +300. */
  readonly expIn?: number | null;
  /** Seconds from now; default: no `nbf`. */
  readonly nbfIn?: number | null;
  /** More claims. */
  readonly extra?: JWTPayload;
}

/** A compact JWS signed with `key` carrying `claims` (defaults: sub "tester", role viewer, tenants ["*"], exp in 5 min). */
export async function signToken(key: SigningKey, claims: TokenClaims = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = { ...claims.extra };
  if (claims.role !== null) payload[claims.roleClaim ?? 'svc_role'] = claims.role === undefined ? 'viewer' : claims.role;
  if (claims.tenants !== null) payload[claims.tenantsClaim ?? 'svc_tenants'] = claims.tenants === undefined ? ['*'] : claims.tenants;
  const jwt = new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).setIssuedAt(now);
  const sub = claims.sub === undefined ? 'tester' : claims.sub;
  if (sub !== null) jwt.setSubject(sub);
  if (claims.iss != null) jwt.setIssuer(claims.iss);
  if (claims.aud != null) jwt.setAudience(claims.aud);
  const expIn = claims.expIn === undefined ? 300 : claims.expIn;
  if (expIn !== null) jwt.setExpirationTime(now + expIn);
  if (claims.nbfIn != null) jwt.setNotBefore(now + claims.nbfIn);
  return jwt.sign(key.privateKey);
}

/** A token with header `alg: none` and no signature part content (`<header>.<payload>.`), plus a variant with a junk signature. */
export function unsignedToken(payload: JWTPayload): { empty: string; junk: string } {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}`;
  return { empty: `${head}.`, junk: `${head}.${Buffer.from('not a signature').toString('base64url')}` };
}

/** One API key and the record of it. */
export interface TestKey {
  readonly id: string;
  readonly key: string;
  readonly record: Record<string, unknown>;
}

/** A new API key (through the same code as `svc-apikey`). */
export function makeTestKey(id: string, role: string, tenants: readonly string[] = ['*'], expiresAt: string | null = null): TestKey {
  const { key, record } = makeKeyRecord({ id, role, tenants, expiresAt });
  return { id, key, record };
}

/** Writes a keys file holding `keys` (JSON), replacing `path` in place. */
export function writeKeysFile(path: string, keys: readonly TestKey[]): void {
  writeFileSync(path, JSON.stringify({ keys: keys.map((k) => k.record) }, null, 2));
}

/** The `authorization` value of a key or token. */
export const bearer = (credential: string): string => `Bearer ${credential}`;
