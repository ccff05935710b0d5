/**
 * The guard (src/auth/guard.ts): credential parsing, key lookup, the principal cache and its
 * invalidation, expiry, permissions and tenants, the failure limiter and the audit callback.
 * Pure: a fake clock, no files, no sockets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_TENANTS, AuthGuard, hashApiKey, newApiKey, parseKeysFile, type AuthFailure, type Principal } from '../../../src/auth/index.js';
import { ServiceError } from '../../../src/service/errors.js';

interface Setup {
  guard: AuthGuard;
  failures: AuthFailure[];
  clock: { now: number };
  keys: Record<string, string>;
}

function setup(records: Array<{ id: string; role: string; tenants?: string[]; expires_at?: string | null }>): Setup {
  const keys: Record<string, string> = {};
  const doc = {
    keys: records.map((r) => {
      keys[r.id] = newApiKey();
      return { id: r.id, hash: hashApiKey(keys[r.id] as string), role: r.role, tenants: r.tenants ?? ['*'], expires_at: r.expires_at ?? null };
    }),
  };
  const failures: AuthFailure[] = [];
  const clock = { now: Date.parse('2026-06-01T00:00:00Z') };
  const guard = new AuthGuard({ onFailure: (f) => failures.push(f), now: () => clock.now });
  guard.setKeys(parseKeysFile(JSON.stringify(doc)));
  return { guard, failures, clock, keys };
}

function principal(result: Principal | Promise<Principal>): Principal {
  assert.ok(!(result instanceof Promise), 'an API key is checked synchronously');
  return result;
}

function refused(fn: () => unknown, code: string, pattern?: RegExp): ServiceError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ServiceError, `expected a ServiceError ${code}`);
  assert.equal(caught.code, code);
  if (pattern) assert.match(caught.message, pattern);
  return caught;
}

test('a valid key gives its principal; the Bearer scheme is case-insensitive', () => {
  const { guard, keys } = setup([{ id: 'deployer', role: 'editor' }]);
  const p = principal(guard.check(`Bearer ${keys['deployer']}`, '10.0.0.1', 'write', 'default'));
  assert.equal(p.id, 'deployer');
  assert.equal(p.source, 'api_key');
  assert.equal(principal(guard.check(`bearer ${keys['deployer']}`, '10.0.0.1', 'read', 'acme')).id, 'deployer');
});

test('missing, malformed and unknown credentials are 401; unknown and expired say the same', () => {
  const { guard, failures, clock, keys } = setup([{ id: 'old', role: 'admin', expires_at: '2026-05-01T00:00:00Z' }]);
  refused(() => guard.check(undefined, 'a', 'read', 'default'), 'UNAUTHENTICATED', /authentication required/);
  clock.now += 1000;
  refused(() => guard.check('Basic dXNlcjpwYXNz', 'a', 'read', 'default'), 'UNAUTHENTICATED');
  clock.now += 1000;
  refused(() => guard.check('Bearer', 'a', 'read', 'default'), 'UNAUTHENTICATED');
  clock.now += 1000;
  const unknown = refused(() => guard.check(`Bearer ${newApiKey()}`, 'a', 'read', 'default'), 'UNAUTHENTICATED');
  clock.now += 1000;
  const expired = refused(() => guard.check(`Bearer ${keys['old']}`, 'a', 'read', 'default'), 'UNAUTHENTICATED');
  assert.deepEqual(unknown.toBody(), expired.toBody(), 'the answer does not tell an unknown key from an expired one');
  assert.deepEqual(
    failures.map((f) => f.reason),
    ['missing', 'malformed', 'malformed', 'unknown_key', 'expired'],
  );
  assert.ok(failures.every((f) => f.source_ip === 'a'));
});

test('a JWT-shaped token without a JWKS is malformed, not an error', () => {
  const { guard, failures } = setup([]);
  refused(() => guard.check('Bearer aaa.bbb.ccc', null, 'execute', 'default'), 'UNAUTHENTICATED');
  assert.deepEqual(failures, [{ source_ip: null, reason: 'malformed' }]);
});

test('permissions follow the role; the 403 names the missing permission', () => {
  const { guard, keys } = setup([
    { id: 'e', role: 'executor' },
    { id: 'v', role: 'viewer' },
    { id: 'ed', role: 'editor' },
    { id: 'a', role: 'admin' },
  ]);
  const allowed: Record<string, string[]> = {
    e: ['execute'],
    v: ['execute', 'read'],
    ed: ['execute', 'read', 'write'],
    a: ['execute', 'read', 'write', 'admin'],
  };
  for (const id of ['e', 'v', 'ed', 'a']) {
    for (const need of ['execute', 'read', 'write', 'admin'] as const) {
      const check = () => guard.check(`Bearer ${keys[id]}`, 'x', need, 'default');
      if (allowed[id]?.includes(need)) assert.equal(principal(check()).id, id);
      else assert.deepEqual(refused(check, 'FORBIDDEN', new RegExp(`"${need}"`)).details, { missing_permission: need });
    }
  }
});

test('tenant lists: listed tenants only; routes about every tenant need "*"', () => {
  const { guard, keys } = setup([
    { id: 'acme-only', role: 'admin', tenants: ['acme', 'beta'] },
    { id: 'all', role: 'admin', tenants: ['*'] },
  ]);
  const key = `Bearer ${keys['acme-only']}`;
  assert.equal(principal(guard.check(key, 'x', 'write', 'beta')).id, 'acme-only');
  assert.deepEqual(refused(() => guard.check(key, 'x', 'read', 'default'), 'FORBIDDEN', /tenant "default"/).details, { missing_tenant: 'default' });
  assert.deepEqual(refused(() => guard.check(key, 'x', 'admin', ALL_TENANTS), 'FORBIDDEN', /all tenants/).details, { missing_tenant: '*' });
  assert.equal(principal(guard.check(`Bearer ${keys['all']}`, 'x', 'admin', ALL_TENANTS)).id, 'all');
});

test('a cached key is refused once it expires, and once the keys change', () => {
  const { guard, clock, keys } = setup([{ id: 'soon', role: 'viewer', expires_at: '2026-06-01T00:01:00Z' }]);
  const key = `Bearer ${keys['soon']}`;
  assert.equal(principal(guard.check(key, 'x', 'read', 'default')).id, 'soon');
  clock.now += 30_000;
  assert.equal(principal(guard.check(key, 'x', 'read', 'default')).id, 'soon', 'still valid (from the cache)');
  clock.now += 31_000;
  refused(() => guard.check(key, 'x', 'read', 'default'), 'UNAUTHENTICATED');

  const other = setup([{ id: 'k', role: 'viewer' }]);
  const otherKey = `Bearer ${other.keys['k']}`;
  assert.equal(principal(other.guard.check(otherKey, 'x', 'read', 'default')).id, 'k');
  other.guard.setKeys([]);
  assert.equal(other.guard.keyCount, 0);
  refused(() => other.guard.check(otherKey, 'x', 'read', 'default'), 'UNAUTHENTICATED');
});

test('more than 20 failures from one address in a minute: 429 for that address until the minute ends', () => {
  const { guard, clock, keys, failures } = setup([{ id: 'good', role: 'admin' }]);
  const start = clock.now;
  for (let i = 0; i < 21; i++) {
    refused(() => guard.check('Bearer nonsense', '10.0.0.9', 'read', 'default'), 'UNAUTHENTICATED');
    clock.now += 100;
  }
  assert.equal(failures.length, 3, 'at most one auth_failed per address per second (2.1 s of failures)');
  const limited = refused(() => guard.check(`Bearer ${keys['good']}`, '10.0.0.9', 'read', 'default'), 'RATE_LIMITED');
  assert.equal(limited.details?.['retry_after_ms'], start + 60_000 - clock.now);
  assert.equal(principal(guard.check(`Bearer ${keys['good']}`, '10.0.0.10', 'read', 'default')).id, 'good', 'other addresses are not limited');
  clock.now = start + 60_000;
  assert.equal(principal(guard.check(`Bearer ${keys['good']}`, '10.0.0.9', 'read', 'default')).id, 'good', 'a new minute');
});

test('requests without any credential are reported but never lead to 429', () => {
  const { guard, clock, keys } = setup([{ id: 'good', role: 'admin' }]);
  for (let i = 0; i < 50; i++) refused(() => guard.check(undefined, '10.0.0.9', 'read', 'default'), 'UNAUTHENTICATED');
  clock.now += 10;
  assert.equal(principal(guard.check(`Bearer ${keys['good']}`, '10.0.0.9', 'read', 'default')).id, 'good');
});
