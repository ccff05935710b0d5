/**
 * The tenants collection with tenants.json (src/store/tenant-store.ts): the file is written
 * before memory changes; a refused or failed API write changes nothing; a synchronized change
 * is applied even when the file cannot be written (and says so in the log); an unchanged write
 * writes nothing; concurrent creates of one id: exactly one passes its check.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TenantCollection } from '../../../src/store/tenant-collection.js';
import { TenantFile } from '../../../src/store/tenant-file.js';
import type { TenantRecord } from '../../../src/store/tenant-record.js';
import { parseTenantRecord } from '../../../src/service/tenant-model.js';
import { TenantStore } from '../../../src/store/tenant-store.js';

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tenant-store-'));
  const warnings: string[] = [];
  const collection = new TenantCollection();
  const changes: string[] = [];
  collection.subscribe((c) => changes.push(`${c.kind}:${c.kind === 'tenant.put' ? c.record.id : c.id}:${c.origin}`));
  const store = new TenantStore(collection, new TenantFile(dir), { warn: (_f, msg) => warnings.push(String(msg)) });
  const fileIds = (): string[] => (JSON.parse(readFileSync(join(dir, 'tenants.json'), 'utf8')) as { tenants: TenantRecord[] }).tenants.map((t) => t.id);
  return { dir, store, changes, warnings, fileIds, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('put and delete write tenants.json, then change memory and emit one change each', async () => {
  const f = fixture();
  try {
    assert.equal(await f.store.put(parseTenantRecord({ id: 'acme' }), { origin: 'api' }), true);
    assert.deepEqual(f.fileIds(), ['acme']);
    assert.equal(f.store.get('acme')?.id, 'acme');
    assert.equal(await f.store.put(parseTenantRecord({ id: 'acme' }), { origin: 'api' }), false, 'unchanged');
    assert.equal((await f.store.delete('acme', { origin: 'api' }))?.id, 'acme');
    assert.deepEqual(f.fileIds(), []);
    assert.equal(await f.store.delete('acme', { origin: 'api' }), undefined);
    assert.deepEqual(f.changes, ['tenant.put:acme:api', 'tenant.delete:acme:api']);
  } finally {
    f.cleanup();
  }
});

test('a refusing check writes nothing and changes nothing; concurrent creates of one id: one wins', async () => {
  const f = fixture();
  try {
    const absent = (previous: TenantRecord | undefined): void => {
      if (previous) throw new Error('exists');
    };
    const results = await Promise.allSettled(
      [1, 2, 3].map((n) => f.store.put(parseTenantRecord({ id: 'dup', name: `n${n}` }), { origin: 'api', check: absent })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected', 'rejected']);
    assert.deepEqual(f.changes, ['tenant.put:dup:api']);
    assert.deepEqual(f.fileIds(), ['dup']);
  } finally {
    f.cleanup();
  }
});

test('a failed file write: an API change is thrown and memory is unchanged; a synchronized one is applied and logged', async () => {
  const f = fixture();
  try {
    // NOTE: the rules dir is removed to make the write fail (root ignores directory permissions).
    rmSync(f.dir, { recursive: true, force: true });
    await assert.rejects(f.store.put(parseTenantRecord({ id: 'acme' }), { origin: 'api' }));
    assert.equal(f.store.get('acme'), undefined);
    assert.deepEqual(f.changes, []);
    assert.equal(await f.store.put(parseTenantRecord({ id: 'acme' }), { origin: 'sync' }), true);
    assert.equal(f.store.get('acme')?.id, 'acme');
    assert.deepEqual(f.warnings, ['cannot write tenants.json; the change is applied in memory']);
    assert.equal(existsSync(join(f.dir, 'tenants.json')), false);
  } finally {
    f.cleanup();
  }
});

test('persist: false changes memory only; reload makes memory match the file', async () => {
  const f = fixture();
  try {
    await f.store.put(parseTenantRecord({ id: 'kept' }), { origin: 'api' });
    await f.store.put(parseTenantRecord({ id: 'mem' }), { origin: 'sync', persist: false });
    assert.deepEqual(f.fileIds(), ['kept']);
    assert.equal(await f.store.reload('watch'), 1);
    assert.deepEqual(
      f.store.list().map((r) => r.id),
      ['default', 'kept'],
    );
  } finally {
    f.cleanup();
  }
});
