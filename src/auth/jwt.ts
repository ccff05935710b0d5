/**
 * JWT verification against a local JWKS (EXTENSIONS.md 1) with jose: RS256, ES256 and EdDSA,
 * optional issuer and audience, `exp`/`nbf` with 30 s leeway, never a network fetch. The role
 * and tenants come from configurable claims.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { isAuthRole, makePrincipal, type Principal } from './permissions.js';

/** Accepted signature algorithms. */
export const JWT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

/** Clock leeway for `exp` and `nbf`, in seconds. */
export const JWT_LEEWAY_SECS = 30;

/** How JWTs are checked. */
export interface JwtOptions {
  readonly issuer?: string | null;
  readonly audience?: string | null;
  readonly roleClaim: string;
  readonly tenantsClaim: string;
}

/** A JWKS file that cannot be used; the message says why. */
export class JwksError extends Error {
  override readonly name = 'JwksError';
}

/** Why a token was refused (for the `auth_failed` audit line, never for the answer). */
export class JwtRefused extends Error {
  override readonly name = 'JwtRefused';
  constructor(readonly reason: 'expired' | 'invalid_token') {
    super(reason);
  }
}

/** Parses and checks a JWKS document's text; throws `JwksError`. */
export function parseJwks(text: string): JSONWebKeySet {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new JwksError(`not valid JSON: ${(err as Error).message}`);
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new JwksError('must be an object with a non-empty "keys" array');
  keys.forEach((k, i) => {
    if (k === null || typeof k !== 'object' || typeof (k as { kty?: unknown }).kty !== 'string') throw new JwksError(`keys[${i}] is not a JWK (no "kty")`);
    if ('d' in k) throw new JwksError(`keys[${i}] is a private key; the JWKS file must hold public keys only`);
    // A symmetric (oct) key is a secret: HS256 is not accepted, and the file must not hold one.
    if ('k' in k) throw new JwksError(`keys[${i}] is a secret (symmetric) key; the JWKS file must hold public keys only`);
    // NOTE: a key that does not import (an RSA key without `n`, a bad curve point) would
    // otherwise load and then refuse every token signed with it, silently.
    try {
      createPublicKey({ key: k as JsonWebKey, format: 'jwk' });
    } catch (err) {
      throw new JwksError(`keys[${i}] is not a usable public key: ${(err as Error).message}`);
    }
  });
  return doc as JSONWebKeySet;
}

/** True when `token` has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  const a = token.indexOf('.');
  const b = a < 0 ? -1 : token.indexOf('.', a + 1);
  return a > 0 && b > a + 1 && b < token.length - 1 && token.indexOf('.', b + 1) < 0;
}

/** Verifies JWTs against one JWKS. */
export class JwtVerifier {
  private readonly keys: ReturnType<typeof createLocalJWKSet>;

  constructor(
    jwks: JSONWebKeySet,
    private readonly options: JwtOptions,
  ) {
    this.keys = createLocalJWKSet(jwks);
  }

  /** The principal of a valid token; rejects with `JwtRefused`. */
  async verify(token: string): Promise<Principal> {
    let payload: JWTPayload;
    const verifyOptions = {
      algorithms: [...JWT_ALGORITHMS],
      clockTolerance: JWT_LEEWAY_SECS,
      ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
      ...(this.options.audience ? { audience: this.options.audience } : {}),
    };
    try {
      ({ payload } = await jwtVerify(token, this.keys, verifyOptions).catch(async (err: unknown) => {
        // NOTE: a token without `kid` while the JWKS holds several keys of its type (a key
        // rotation): jose hands over the candidates; the one whose signature checks wins.
        if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
        for await (const key of err) {
          try {
            return await jwtVerify(token, key, verifyOptions);
          } catch (inner) {
            if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
          }
        }
        throw new errors.JWSSignatureVerificationFailed();
      }));
    } catch (err) {
      throw new JwtRefused(err instanceof errors.JWTExpired ? 'expired' : 'invalid_token');
    }
    if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new JwtRefused('invalid_token');
    const roleValue = payload[this.options.roleClaim];
    const role = isAuthRole(roleValue) ? roleValue : null;
    const tenantsValue = payload[this.options.tenantsClaim];
    const tenants =
      typeof tenantsValue === 'string'
        ? [tenantsValue]
        : Array.isArray(tenantsValue)
          ? tenantsValue.filter((t): t is string => typeof t === 'string' && t !== '')
          : [];
    // NOTE: a token without `exp` is valid until the JWKS stops trusting its key.
    const expiresAt = typeof payload.exp === 'number' ? (payload.exp + JWT_LEEWAY_SECS) * 1000 : Number.POSITIVE_INFINITY;
    return makePrincipal(payload.sub, 'jwt', role, tenants, expiresAt);
  }
}
