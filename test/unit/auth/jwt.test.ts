/**
 * JwtVerifier and parseJwks (src/auth/jwt.ts) directly, without a server: the three accepted
 * algorithms, tokens that must be refused (unknown key, `alg: none`, HS256, wrong issuer or
 * audience, expired, not yet valid), the 30 s leeway on both sides, configurable claim names,
 * a role claim that names no role, and JWKS files that must not load.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT, type JSONWebKeySet } from 'jose';
import { JwtVerifier, JwtRefused, JwksError, parseJwks, type JwtOptions } from '../../../src/auth/jwt.js';
import { PERMISSION_BITS } from '../../../src/auth/permissions.js';
import { jwksOf, makeSigningKey, signToken, unsignedToken, type JwtAlg, type SigningKey } from '../../helpers/auth-jwt.js';

const OPTIONS: JwtOptions = { issuer: null, audience: null, roleClaim: 'svc_role', tenantsClaim: 'svc_tenants' };

function verifierFor(keys: readonly SigningKey[], options: Partial<JwtOptions> = {}): JwtVerifier {
  return new JwtVerifier(jwksOf(keys) as JSONWebKeySet, { ...OPTIONS, ...options });
}

/** Asserts `promise` rejects with JwtRefused of `reason`. */
async function refused(promise: Promise<unknown>, reason: 'expired' | 'invalid_token'): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof JwtRefused, `a JwtRefused, got ${String(err)}`);
    assert.equal(err.reason, reason);
    return true;
  });
}

describe('JwtVerifier: algorithms and keys', () => {
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as JwtAlg[]) {
    it(`accepts a ${alg} token signed by a key of the JWKS`, async () => {
      const key = await makeSigningKey(alg);
      const other = await makeSigningKey(alg === 'RS256' ? 'ES256' : 'RS256');
      const p = await verifierFor([other, key]).verify(await signToken(key, { sub: `user-${alg}`, role: 'editor', tenants: ['acme', 'beta'] }));
      assert.equal(p.id, `user-${alg}`);
      assert.equal(p.source, 'jwt');
      assert.equal(p.role, 'editor');
      assert.equal(p.permissions, PERMISSION_BITS.execute | PERMISSION_BITS.read | PERMISSION_BITS.write);
      assert.equal(p.allTenants, false);
      assert.deepEqual([...p.tenants].sort(), ['acme', 'beta']);
    });
  }

  it('refuses a token signed by a key that is not in the JWKS (same kid, same algorithm)', async () => {
    const trusted = await makeSigningKey('ES256', 'k1');
    const impostor = await makeSigningKey('ES256', 'k1');
    const v = verifierFor([trusted]);
    await refused(v.verify(await signToken(impostor)), 'invalid_token');
    // The same claims signed by the trusted key pass: the signature is what was refused.
    assert.equal((await v.verify(await signToken(trusted))).id, 'tester');
  });

  it('refuses a token whose kid is unknown', async () => {
    const trusted = await makeSigningKey('EdDSA', 'known');
    const other = await makeSigningKey('EdDSA', 'unknown');
    await refused(verifierFor([trusted]).verify(await signToken(other)), 'invalid_token');
  });

  it('a token without kid, while the JWKS holds several keys of its type (rotation): the key whose signature checks is used', async () => {
    const old = await makeSigningKey('ES256');
    const current = await makeSigningKey('ES256');
    const stranger = await makeSigningKey('ES256');
    const noKid = (k: SigningKey) => ({ ...k.publicJwk, kid: undefined });
    const v = new JwtVerifier({ keys: [noKid(old), noKid(current)] } as JSONWebKeySet, OPTIONS);
    const sign = (k: SigningKey, expIn = 300) =>
      new SignJWT({ svc_role: 'viewer', svc_tenants: ['*'] })
        .setProtectedHeader({ alg: 'ES256' })
        .setSubject(`by-${k === old ? 'old' : k === current ? 'current' : 'stranger'}`)
        .setExpirationTime(Math.floor(Date.now() / 1000) + expIn)
        .sign(k.privateKey);
    assert.equal((await v.verify(await sign(current))).id, 'by-current');
    assert.equal((await v.verify(await sign(old))).id, 'by-old');
    await refused(v.verify(await sign(stranger)), 'invalid_token');
    await refused(v.verify(await sign(current, -60)), 'expired');
  });

  it('refuses `alg: none` (empty and junk signature)', async () => {
    const key = await makeSigningKey('RS256');
    const now = Math.floor(Date.now() / 1000);
    const { empty, junk } = unsignedToken({ sub: 'mallory', svc_role: 'admin', svc_tenants: ['*'], exp: now + 300 });
    const v = verifierFor([key]);
    await refused(v.verify(empty), 'invalid_token');
    await refused(v.verify(junk), 'invalid_token');
  });

  it('refuses HS256, even when the JWKS holds the matching secret as an `oct` key', async () => {
    const secret = Buffer.alloc(32, 7);
    const key = await makeSigningKey('ES256', 'es');
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ svc_role: 'admin', svc_tenants: ['*'] })
      .setProtectedHeader({ alg: 'HS256', kid: 'hs' })
      .setSubject('mallory')
      .setExpirationTime(now + 300)
      .sign(secret);
    const jwks = { keys: [key.publicJwk, { kty: 'oct', kid: 'hs', alg: 'HS256', k: secret.toString('base64url') }] } as JSONWebKeySet;
    await refused(new JwtVerifier(jwks, OPTIONS).verify(token), 'invalid_token');
    await refused(verifierFor([key]).verify(token), 'invalid_token');
  });

  it('refuses a token without `sub`, and text that is not a JWT', async () => {
    const key = await makeSigningKey('ES256');
    const v = verifierFor([key]);
    await refused(v.verify(await signToken(key, { sub: null })), 'invalid_token');
    await refused(v.verify('a.b.c'), 'invalid_token');
    const good = await signToken(key);
    const [h, p] = good.split('.');
    await refused(v.verify(`${h}.${p}.${Buffer.alloc(64, 1).toString('base64url')}`), 'invalid_token');
  });
});

describe('JwtVerifier: issuer and audience', () => {
  it('enforces the issuer when configured, ignores it when not', async () => {
    const key = await makeSigningKey('ES256');
    const v = verifierFor([key], { issuer: 'https://idp.example' });
    assert.equal((await v.verify(await signToken(key, { iss: 'https://idp.example' }))).id, 'tester');
    await refused(v.verify(await signToken(key, { iss: 'https://evil.example' })), 'invalid_token');
    await refused(v.verify(await signToken(key, { iss: null })), 'invalid_token');
    assert.equal((await verifierFor([key]).verify(await signToken(key, { iss: 'anyone' }))).id, 'tester');
  });

  it('enforces the audience when configured (one of a list is enough), ignores it when not', async () => {
    const key = await makeSigningKey('RS256');
    const v = verifierFor([key], { audience: 'svc' });
    assert.equal((await v.verify(await signToken(key, { aud: 'svc' }))).id, 'tester');
    assert.equal((await v.verify(await signToken(key, { aud: ['other', 'svc'] }))).id, 'tester');
    await refused(v.verify(await signToken(key, { aud: 'other' })), 'invalid_token');
    await refused(v.verify(await signToken(key, { aud: null })), 'invalid_token');
    assert.equal((await verifierFor([key]).verify(await signToken(key, { aud: 'whatever' }))).id, 'tester');
  });
});

describe('JwtVerifier: exp and nbf with 30 s leeway', () => {
  it('accepts exp 20 s ago; refuses exp 40 s ago with reason expired', async () => {
    const key = await makeSigningKey('ES256');
    const v = verifierFor([key]);
    const p = await v.verify(await signToken(key, { expIn: -20 }));
    // The principal expires with the leeway counted: about 10 s from now.
    assert.ok(p.expiresAt > Date.now() && p.expiresAt <= Date.now() + 11_000, `expiresAt ${p.expiresAt}`);
    await refused(v.verify(await signToken(key, { expIn: -40 })), 'expired');
  });

  it('accepts nbf 20 s ahead; refuses nbf 40 s ahead', async () => {
    const key = await makeSigningKey('EdDSA');
    const v = verifierFor([key]);
    assert.equal((await v.verify(await signToken(key, { nbfIn: 20 }))).id, 'tester');
    await refused(v.verify(await signToken(key, { nbfIn: 40 })), 'invalid_token');
  });

  it('a token without exp never expires by itself', async () => {
    const key = await makeSigningKey('ES256');
    const p = await verifierFor([key]).verify(await signToken(key, { expIn: null }));
    assert.equal(p.expiresAt, Number.POSITIVE_INFINITY);
  });
});

describe('JwtVerifier: claims', () => {
  it('reads the role and tenants from configured claim names (not the default ones)', async () => {
    const key = await makeSigningKey('ES256');
    const v = verifierFor([key], { roleClaim: 'https://svc.example/role', tenantsClaim: 'orgs' });
    const token = await signToken(key, {
      roleClaim: 'https://svc.example/role',
      tenantsClaim: 'orgs',
      role: 'admin',
      tenants: 'acme',
      extra: { svc_role: 'executor', svc_tenants: ['*'] },
    });
    const p = await v.verify(token);
    assert.equal(p.role, 'admin');
    assert.equal(p.allTenants, false);
    assert.deepEqual([...p.tenants], ['acme']);
    // With the default names the same token is an executor for every tenant.
    const d = await verifierFor([key]).verify(token);
    assert.equal(d.role, 'executor');
    assert.equal(d.allTenants, true);
  });

  it('a role claim that is not a role gives a principal with no permissions', async () => {
    const key = await makeSigningKey('ES256');
    const v = verifierFor([key]);
    for (const role of ['superuser', 'Admin', 42, ['admin'], null]) {
      const p = await v.verify(await signToken(key, role === null ? { role: null } : { role }));
      assert.equal(p.role, null, JSON.stringify(role));
      assert.equal(p.permissions, 0, JSON.stringify(role));
    }
  });

  it('tenants: "*" means all; non-string entries are dropped; a missing claim is no tenant', async () => {
    const key = await makeSigningKey('ES256');
    const v = verifierFor([key]);
    assert.equal((await v.verify(await signToken(key, { tenants: ['a', '*'] }))).allTenants, true);
    const mixed = await v.verify(await signToken(key, { tenants: ['a', 3, '', null, 'b'] }));
    assert.deepEqual([...mixed.tenants].sort(), ['a', 'b']);
    const none = await v.verify(await signToken(key, { tenants: null }));
    assert.equal(none.allTenants, false);
    assert.equal(none.tenants.size, 0);
  });
});

describe('parseJwks', () => {
  it('accepts a JWKS of public RSA, EC and OKP keys', async () => {
    const keys = await Promise.all((['RS256', 'ES256', 'EdDSA'] as JwtAlg[]).map((a) => makeSigningKey(a)));
    assert.equal(parseJwks(JSON.stringify(jwksOf(keys))).keys.length, 3);
  });

  it('refuses a JWKS holding a private key, naming the entry', async () => {
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as JwtAlg[]) {
      const a = await makeSigningKey(alg);
      const b = await makeSigningKey(alg);
      assert.throws(
        () => parseJwks(JSON.stringify({ keys: [a.publicJwk, b.privateJwk] })),
        (err: unknown) => err instanceof JwksError && /keys\[1\] is a private key/.test(err.message),
        alg,
      );
    }
  });

  it('refuses a JWKS holding a symmetric (oct) secret key', () => {
    assert.throws(
      () => parseJwks(JSON.stringify({ keys: [{ kty: 'oct', kid: 'hs', k: Buffer.alloc(32, 1).toString('base64url') }] })),
      (err: unknown) => err instanceof JwksError && /keys\[0\]/.test(err.message),
    );
  });

  it('refuses a public key that does not import (an RSA key without n, an EC point off the curve)', async () => {
    const rsa = await makeSigningKey('RS256');
    const ec = await makeSigningKey('ES256');
    const { n: _n, ...noModulus } = rsa.publicJwk as Record<string, unknown>;
    const offCurve = { ...(ec.publicJwk as Record<string, unknown>), y: Buffer.alloc(32, 7).toString('base64url') };
    for (const bad of [noModulus, offCurve]) {
      assert.throws(
        () => parseJwks(JSON.stringify({ keys: [ec.publicJwk, bad] })),
        (err: unknown) => err instanceof JwksError && /keys\[1\] is not a usable public key/.test(err.message),
      );
    }
  });

  it('refuses no keys, no "keys", a key without kty, and text that is not JSON', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"keys": []}', /non-empty "keys" array/],
      ['{}', /non-empty "keys" array/],
      ['null', /non-empty "keys" array/],
      ['[]', /non-empty "keys" array/],
      ['{"keys": [{"kid": "x"}]}', /keys\[0\] is not a JWK/],
      ['{"keys": [null]}', /keys\[0\] is not a JWK/],
      ['{"keys": ', /not valid JSON/],
    ];
    for (const [text, message] of cases) {
      assert.throws(
        () => parseJwks(text),
        (err: unknown) => err instanceof JwksError && message.test(err.message),
        text,
      );
    }
  });
});
