/**
 * Tenant sync without a broker: what a writer's full-state pass publishes for tenants, and how
 * the manager applies `TenantConfigChanged` events and a reloaded `tenants.json`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../../src/observe/index.js';
import { TenantManager } from '../../../src/service/tenant-manager.js';
import { parseTenantRecord } from '../../../src/service/tenant-model.js';
import { TenantRegistry, type TenantEvent } from '../../../src/service/tenant-registry.js';
import { MemoryStore } from '../../../src/store/index.js';
import { TenantStore } from '../../../src/store/tenant-store.js';
import { TenantFile } from '../../../src/store/tenant-file.js';
import { tenantChangedOf, tenantFullState, type TenantStreamEntry } from '../../../src/sync/tenant-sync.js';

const entry = (id: string, record: object | null, atMs: number): TenantStreamEntry => ({
  event: tenantChangedOf(id, record === null ? null : { id, ...record }),
  json: record === null ? null : JSON.stringify({ id, ...record }),
  atMs,
});

test('full state: unchanged recent records are skipped; changed, missing and old ones are published; gone ones get a tombstone', () => {
  const a = parseTenantRecord({ id: 'a' });
  const b = parseTenantRecord({ id: 'b', qps_limit: 5 });
  const c = parseTenantRecord({ id: 'c' });
  const d = parseTenantRecord({ id: 'd' });
  const stream = new Map<string, TenantStreamEntry>([
    ['a', { event: tenantChangedOf('a', a), json: JSON.stringify(a), atMs: 9_000 }],
    ['b', { event: tenantChangedOf('b', parseTenantRecord({ id: 'b' })), json: JSON.stringify(parseTenantRecord({ id: 'b' })), atMs: 9_000 }],
    ['d', { event: tenantChangedOf('d', d), json: JSON.stringify(d), atMs: 1_000 }],
    ['gone', entry('gone', { name: 'gone' }, 9_000)],
    ['dead', entry('dead', null, 9_000)],
  ]);
  const events = tenantFullState([a, b, c, d], stream, 10_000, 5_000);
  assert.deepEqual(
    events.map((e) => [e.tenant_id, e.tenant === null ? null : (e.tenant as { id: string }).id]),
    [
      ['gone', null],
      ['b', 'b'],
      ['c', 'c'],
      ['d', 'd'],
    ],
  );
  assert.ok(events.every((e) => e.type === 'TenantConfigChanged'));
});

function manager(file: TenantFile | null, role: 'standalone' | 'reader' = 'reader') {
  const registry = new TenantRegistry({ clock: () => 0 });
  const events: TenantEvent[] = [];
  registry.subscribe((e) => events.push(e));
  const m = new TenantManager({
    tenants: new TenantStore(registry.collection, file),
    store: new MemoryStore(),
    audit: { write() {} },
    logger: silentLogger(),
    role,
    writerAddr: null,
  });
  return { registry, m, events };
}

test('applySync: put, unchanged repeat, delete, default reset, invalid rejected; persisted when asked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tenant-sync-'));
  try {
    const { registry, m, events } = manager(new TenantFile(dir));
    const acme = { ...parseTenantRecord({ id: 'acme', qps_limit: 3 }) };
    assert.equal(await m.applySync({ kind: 'tenant.put', id: 'acme', record: acme }, true), 'applied');
    assert.equal(await m.applySync({ kind: 'tenant.put', id: 'acme', record: acme }, true), 'unchanged');
    assert.equal(registry.get('acme')?.qps_limit, 3);
    assert.deepEqual(
      JSON.parse(readFileSync(join(dir, 'tenants.json'), 'utf8')).tenants.map((t: { id: string }) => t.id),
      ['acme'],
    );
    assert.equal(await m.applySync({ kind: 'tenant.put', id: 'acme', record: { ...acme, id: 'other' } }, true), 'rejected');
    assert.equal(await m.applySync({ kind: 'tenant.put', id: 'x', record: { id: 'x', qps_limit: -1 } }, true), 'rejected');
    assert.equal(await m.applySync({ kind: 'tenant.put', id: 'default', record: { id: 'default', max_rulesets: 1 } }, false), 'applied');
    assert.equal(await m.applySync({ kind: 'tenant.delete', id: 'default' }, false), 'applied');
    assert.equal(registry.get('default')?.max_rulesets, null, 'a default tombstone resets it');
    assert.equal(await m.applySync({ kind: 'tenant.delete', id: 'acme' }, true), 'applied');
    assert.equal(await m.applySync({ kind: 'tenant.delete', id: 'acme' }, true), 'unchanged');
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'tenants.json'), 'utf8')).tenants, []);
    assert.ok(events.every((e) => e.origin === 'sync'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('reloadFile: the registry follows tenants.json (origin watch); a broken file throws and changes nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tenant-reload-'));
  try {
    const file = new TenantFile(dir);
    const { registry, m, events } = manager(file);
    await file.write([parseTenantRecord({ id: 'one' }), parseTenantRecord({ id: 'two' })]);
    assert.equal(await m.reloadFile(), 2);
    assert.deepEqual(
      registry.list().map((r) => r.id),
      ['default', 'one', 'two'],
    );
    await file.write([parseTenantRecord({ id: 'two', enabled: false })]);
    assert.equal(await m.reloadFile(), 2);
    assert.equal(registry.get('one'), undefined);
    assert.equal(registry.get('two')?.enabled, false);
    writeFileSync(join(dir, 'tenants.json'), 'not json');
    await assert.rejects(m.reloadFile(), /not valid JSON/);
    assert.equal(registry.get('two')?.enabled, false);
    rmSync(join(dir, 'tenants.json'));
    assert.equal(await m.reloadFile(), 1, 'a removed file leaves only default');
    assert.ok(events.every((e) => e.origin === 'watch'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
