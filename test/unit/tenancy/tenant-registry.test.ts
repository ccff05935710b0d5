/**
 * The tenant registry: admission (unknown, disabled, rate limit with a fake clock), execute
 * options per tenant, max_rulesets, and change events.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExecuteOptions } from '../../../src/ruleset/execute.js';
import { ServiceError } from '../../../src/service/errors.js';
import { parseTenantRecord } from '../../../src/service/tenant-model.js';
import { TenantRegistry, type TenantEvent } from '../../../src/service/tenant-registry.js';

function setup() {
  let t = 0;
  const clock = { now: () => t, advance: (ms: number) => (t += ms) };
  const registry = new TenantRegistry({ clock: clock.now });
  return { registry, clock };
}

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    assert.ok(err instanceof ServiceError, String(err));
    return err.code;
  }
}

test('default always exists; other tenants only once registered; disabled is not found', () => {
  const { registry } = setup();
  assert.equal(
    codeOf(() => registry.admit('default', 0)),
    undefined,
  );
  assert.equal(
    codeOf(() => registry.admit('acme', 0)),
    'TENANT_NOT_FOUND',
  );
  registry.set(parseTenantRecord({ id: 'acme' }), 'api');
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    undefined,
  );
  registry.set(parseTenantRecord({ id: 'acme', enabled: false }), 'api');
  assert.equal(
    codeOf(() => registry.admit('acme', 0)),
    'TENANT_NOT_FOUND',
  );
  assert.throws(() => registry.admit('acme', 0), /tenant 'acme' is disabled/);
  assert.throws(() => registry.admit('ghost', 0), /tenant 'ghost' not found/);
});

test('rate limit: burst requests pass at once, then 429 until the clock refills the bucket', () => {
  const { registry, clock } = setup();
  registry.set(parseTenantRecord({ id: 'acme', qps_limit: 2, burst: 3 }), 'api');
  for (let i = 0; i < 3; i++)
    assert.equal(
      codeOf(() => registry.admit('acme', 1)),
      undefined,
    );
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    'RATE_LIMITED',
  );
  assert.equal(
    codeOf(() => registry.admit('acme', 0)),
    undefined,
    'a free request (management, reads) is not limited',
  );
  clock.advance(500);
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    undefined,
  );
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    'RATE_LIMITED',
  );
  // Other tenants have their own bucket (or none).
  registry.set(parseTenantRecord({ id: 'other', qps_limit: 1 }), 'api');
  assert.equal(
    codeOf(() => registry.admit('other', 1)),
    undefined,
  );
  for (let i = 0; i < 100; i++) registry.admit('default', 1);
});

test('the 429 says how long to wait; a batch larger than the burst says to split it', () => {
  const { registry } = setup();
  registry.set(parseTenantRecord({ id: 'acme', qps_limit: 4, burst: 2 }), 'api');
  registry.admit('acme', 2);
  try {
    registry.admit('acme', 1);
    assert.fail('should be limited');
  } catch (err) {
    assert.ok(err instanceof ServiceError);
    assert.equal(err.code, 'RATE_LIMITED');
    assert.equal(err.httpStatus, 429);
    assert.equal(err.details?.['retry_after_ms'], 250);
  }
  assert.throws(() => registry.admit('acme', 3), /a batch of 3 inputs is larger than tenant 'acme' burst/);
});

test('burst defaults to qps_limit; changing only the name keeps the bucket level', () => {
  const { registry } = setup();
  registry.set(parseTenantRecord({ id: 'acme', qps_limit: 3 }), 'api');
  for (let i = 0; i < 3; i++) registry.admit('acme', 1);
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    'RATE_LIMITED',
  );
  registry.set(parseTenantRecord({ id: 'acme', name: 'Renamed', qps_limit: 3 }), 'api');
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    'RATE_LIMITED',
    'still empty after a rename',
  );
  registry.set(parseTenantRecord({ id: 'acme', qps_limit: 5 }), 'api');
  assert.equal(
    codeOf(() => registry.admit('acme', 1)),
    undefined,
    'a new limit starts with a full bucket',
  );
});

test('executeOptions: base without a tenant timeout, else one cached frozen copy per base', () => {
  const { registry } = setup();
  const plain: ExecuteOptions = Object.freeze({ clock: () => 0, timeoutMs: 5000, maxSteps: 10 });
  const traced: ExecuteOptions = Object.freeze({ ...plain, trace: true });
  assert.equal(registry.executeOptions('default', plain), plain);
  assert.equal(registry.executeOptions('ghost', plain), plain);
  registry.set(parseTenantRecord({ id: 'acme', execution_timeout_ms: 7 }), 'api');
  const a = registry.executeOptions('acme', plain);
  assert.notEqual(a, plain);
  assert.equal(a.timeoutMs, 7);
  assert.equal(a.maxSteps, 10);
  assert.ok(Object.isFrozen(a));
  assert.equal(registry.executeOptions('acme', plain), a, 'cached: no allocation per request');
  const b = registry.executeOptions('acme', traced);
  assert.equal(b.trace, true);
  assert.equal(b.timeoutMs, 7);
  registry.set(parseTenantRecord({ id: 'acme', execution_timeout_ms: 0 }), 'api');
  assert.equal(registry.executeOptions('acme', plain).timeoutMs, 0, 'a change rebuilds the options');
});

test('max_rulesets: creating beyond the limit is a 400 with a clear message', () => {
  const { registry } = setup();
  registry.set(parseTenantRecord({ id: 'acme', max_rulesets: 2 }), 'api');
  registry.assertCanCreate('acme', 1);
  registry.assertCanCreate('default', 1_000_000);
  assert.throws(
    () => registry.assertCanCreate('acme', 2),
    (err: unknown) => err instanceof ServiceError && err.code === 'BAD_REQUEST' && /max_rulesets limit is 2/.test(err.message),
  );
});

test('events: put (with previous), delete, nothing for an unchanged record; default is reset, not removed', () => {
  const { registry } = setup();
  const events: TenantEvent[] = [];
  registry.subscribe((e) => events.push(e));
  const acme = parseTenantRecord({ id: 'acme' });
  assert.equal(registry.set(acme, 'api'), true);
  assert.equal(registry.set(parseTenantRecord({ id: 'acme' }), 'api'), false);
  registry.set(parseTenantRecord({ id: 'acme', qps_limit: 1 }), 'sync');
  registry.remove('acme', 'watch');
  assert.deepEqual(
    events.map((e) => [
      e.kind,
      e.kind === 'tenant.put' ? e.record.id : e.id,
      e.origin,
      e.kind === 'tenant.put' ? (e.previous ? e.previous.qps_limit : 'none') : 'deleted',
    ]),
    [
      ['tenant.put', 'acme', 'api', 'none'],
      ['tenant.put', 'acme', 'sync', null],
      ['tenant.delete', 'acme', 'watch', 'deleted'],
    ],
  );
  registry.set(parseTenantRecord({ id: 'default', max_rulesets: 1 }), 'api');
  registry.remove('default', 'sync');
  assert.equal(registry.get('default')?.max_rulesets, null);
  assert.deepEqual(
    registry.list().map((r) => r.id),
    ['default'],
  );
});

test('replaceAll makes the registry match a file, keeping default, and counts the changes', () => {
  const { registry } = setup();
  registry.set(parseTenantRecord({ id: 'old' }), 'api');
  registry.set(parseTenantRecord({ id: 'kept' }), 'api');
  const changes = registry.replaceAll([parseTenantRecord({ id: 'kept' }), parseTenantRecord({ id: 'new' })], 'watch');
  assert.equal(changes, 2);
  assert.deepEqual(
    registry.list().map((r) => r.id),
    ['default', 'kept', 'new'],
  );
  assert.deepEqual(
    registry.persistable().map((r) => r.id),
    ['kept', 'new'],
    'an unchanged default is not written',
  );
  assert.equal(registry.replaceAll([parseTenantRecord({ id: 'kept' }), parseTenantRecord({ id: 'new' })], 'watch'), 0);
});
