/**
 * The one authentication and authorization check that HTTP, gRPC and the Unix socket share
 * (EXTENSIONS.md 1). A transport hands over the `Authorization` value, the caller's address,
 * the permission its route or method needs (the route table's column) and the tenant of the
 * request; it gets the principal back, or a catalog error: 401 UNAUTHENTICATED, 403
 * FORBIDDEN, 429 RATE_LIMITED.
 *
 * NOTE (speed, EXTENSIONS.md 1 "cost on the hot path"): a verified credential's principal is
 * cached by its `Authorization` value, so a repeated key costs one Map lookup: no hashing and no
 * signature check per request. The cache is emptied whenever the keys or the JWKS change.
 */
import { ServiceError } from '../service/errors.js';
import { findHash, looksLikeApiKey, sha256 } from './api-key.js';
import { JwtRefused, looksLikeJwt, type JwtVerifier } from './jwt.js';
import type { KeyEntry } from './keys-file.js';
import { FailureLimiter } from './failures.js';
import { PERMISSION_BITS, type Permission, type Principal } from './permissions.js';

/** The tenant value of a route that is not about one tenant: the credential needs `*`. */
export const ALL_TENANTS = '*';

/** Why authentication failed (the `reason` of `auth_failed`). */
export type FailureReason = 'missing' | 'malformed' | 'unknown_key' | 'expired' | 'invalid_token';

/** One failed authentication, as the audit line reports it. */
export interface AuthFailure {
  readonly source_ip: string | null;
  readonly reason: FailureReason;
}

/** Options of the guard. */
export interface AuthGuardOptions {
  /** Called for a failed authentication, at most once per address per second (audit `auth_failed`). */
  readonly onFailure?: (failure: AuthFailure) => void;
  /** Epoch milliseconds; default `Date.now`. */
  readonly now?: () => number;
  /** Failures per address per minute before 429 (default 20). */
  readonly maxFailures?: number;
}

/** Cached principals at most; a full cache is emptied (it refills from the next requests). */
const CACHE_MAX = 10_000;

/** Address key of callers without one (the Unix socket). */
const NO_ADDRESS = 'local';

const MISSING = 'authentication required: send "Authorization: Bearer <API key or JWT>"';
const INVALID = 'the credential is invalid or expired';

/** Checks credentials and permissions; see the file comment. */
export class AuthGuard {
  private keyDigests: Buffer[] = [];
  private keyPrincipals: Principal[] = [];
  private jwt: JwtVerifier | null = null;
  private readonly cache = new Map<string, Principal>();
  private readonly limiter: FailureLimiter;
  private readonly now: () => number;

  constructor(private readonly options: AuthGuardOptions = {}) {
    this.now = options.now ?? Date.now;
    this.limiter = new FailureLimiter(options.maxFailures);
  }

  /** Replaces the API keys (a reload); cached principals are dropped. */
  setKeys(entries: readonly KeyEntry[]): void {
    this.keyDigests = entries.map((e) => e.digest);
    this.keyPrincipals = entries.map((e) => e.principal);
    this.cache.clear();
  }

  /** Replaces the JWT verifier (a JWKS reload), or removes it; cached principals are dropped. */
  setJwt(verifier: JwtVerifier | null): void {
    this.jwt = verifier;
    this.cache.clear();
  }

  /** Number of API keys in force. */
  get keyCount(): number {
    return this.keyDigests.length;
  }

  /**
   * Checks a request: `authorization` is the header (or metadata) value, `address` the
   * caller's IP (null on the Unix socket), `need` the route's permission and `tenant` the
   * request's tenant (`ALL_TENANTS` for routes about no single tenant). Returns the principal
   * (a promise only when a JWT is seen for the first time); throws or rejects with a
   * ServiceError.
   */
  check(authorization: string | undefined, address: string | null, need: Permission, tenant: string): Principal | Promise<Principal> {
    const addr = address ?? NO_ADDRESS;
    // NOTE (speed): the usual request, no failure recorded anywhere and a cached credential that
    // never expires, reads no clock and makes one Map lookup: the cache is keyed by the whole
    // header value (no slicing, no case folding, no hashing of the key).
    if (this.limiter.active) {
      const blocked = this.limiter.blockedFor(addr, this.now());
      if (blocked > 0) throw rateLimited(blocked);
    }
    if (authorization === undefined || authorization === '') throw this.fail(addr, address, 'missing', this.now());
    const cached = this.cache.get(authorization);
    if (cached !== undefined) {
      if (cached.expiresAt === Number.POSITIVE_INFINITY || cached.expiresAt > this.now()) return authorize(cached, need, tenant);
      this.cache.delete(authorization);
      throw this.fail(addr, address, 'expired', this.now());
    }
    const now = this.now();
    // "Bearer" is case-insensitive (RFC 6750 / 9110); one space, then the token.
    if (authorization.length < 8 || authorization.charCodeAt(6) !== 32 || authorization.slice(0, 6).toLowerCase() !== 'bearer') {
      throw this.fail(addr, address, 'malformed', now);
    }
    const token = authorization.slice(7).trim();
    if (looksLikeApiKey(token)) {
      const i = findHash(sha256(token), this.keyDigests);
      if (i < 0) throw this.fail(addr, address, 'unknown_key', now);
      const principal = this.keyPrincipals[i] as Principal;
      if (principal.expiresAt <= now) throw this.fail(addr, address, 'expired', now);
      this.remember(authorization, principal);
      return authorize(principal, need, tenant);
    }
    const jwt = this.jwt;
    if (jwt === null || !looksLikeJwt(token)) throw this.fail(addr, address, 'malformed', now);
    return jwt.verify(token).then(
      (principal) => {
        // NOTE: only cached while the verifier is still the one in force (no reload meanwhile).
        if (this.jwt === jwt) this.remember(authorization, principal);
        return authorize(principal, need, tenant);
      },
      (err: unknown) => {
        throw this.fail(addr, address, err instanceof JwtRefused ? err.reason : 'invalid_token', this.now());
      },
    );
  }

  /** Caches a verified principal under the header value it came in. */
  private remember(authorization: string, principal: Principal): void {
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(authorization, principal);
  }

  /** Counts the failure, reports it (rate-limited) and returns the 401 to throw. */
  private fail(addr: string, address: string | null, reason: FailureReason, now: number): ServiceError {
    // NOTE: a request without any credential is not a guess: it is reported but does not count
    // toward the 429 of its address (a client that forgot its key is not locked out).
    if (this.limiter.fail(addr, now, reason !== 'missing')) this.options.onFailure?.({ source_ip: address, reason });
    return new ServiceError('UNAUTHENTICATED', reason === 'missing' ? MISSING : INVALID);
  }
}

/** The principal when it has the permission and the tenant; else 403 saying which is missing. */
export function authorize(principal: Principal, need: Permission, tenant: string): Principal {
  if ((principal.permissions & PERMISSION_BITS[need]) === 0) {
    throw new ServiceError('FORBIDDEN', `this credential does not have the "${need}" permission`, { missing_permission: need });
  }
  if (!principal.allTenants && (tenant === ALL_TENANTS || !principal.tenants.has(tenant))) {
    const message = tenant === ALL_TENANTS ? 'this route needs a credential for all tenants ("*")' : `this credential may not act for tenant "${tenant}"`;
    throw new ServiceError('FORBIDDEN', message, { missing_tenant: tenant });
  }
  return principal;
}

function rateLimited(ms: number): ServiceError {
  return new ServiceError('RATE_LIMITED', `too many failed authentication attempts from this address; retry in ${Math.ceil(ms / 1000)} s`, {
    retry_after_ms: Math.ceil(ms),
  });
}
