/**
 * Runs the subscribe-capability contract against every collection of the change stream: the
 * rulesets collection (memory and file stores) and the tenants collection (in memory, through
 * the tenant registry, and through the tenant manager with `tenants.json`).
 */
import { TenantManager } from '../../src/service/tenant-manager.js';
import { parseTenantRecord } from '../../src/service/tenant-model.js';
import { TenantRegistry } from '../../src/service/tenant-registry.js';
import type { RulesetChange, TenantChangeEvent } from '../../src/store/change.js';
import { FileStore } from '../../src/store/file-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { TenantCollection } from '../../src/store/tenant-collection.js';
import { TenantFile } from '../../src/store/tenant-file.js';
import { TenantStore } from '../../src/store/tenant-store.js';
import type { RuleStore } from '../../src/store/types.js';
import { runChangeSourceContract, type ChangeSourceUnderTest } from './change-source-contract.js';
import { makeTempDir, rec } from './store-fixtures.js';

function rulesets(store: RuleStore, cleanup: () => Promise<void>): ChangeSourceUnderTest<RulesetChange> {
  return {
    subscribe: (listener) => store.subscribe(listener),
    put: async (i, origin) => void (await store.put(rec(`r${i}`, { code: `C${i}` }), { origin })),
    remove: async (i, origin) => void (await store.delete('default', `r${i}`, { origin })),
    keyOf: (c) => (c.kind === 'ruleset.put' ? c.record.name : c.name),
    key: (i) => `r${i}`,
    has: (i) => store.get('default', `r${i}`) !== undefined,
    cleanup,
  };
}

function tenants(
  registry: Pick<TenantRegistry, 'get' | 'subscribe'>,
  write: {
    put(i: number, origin: 'api' | 'sync' | 'watch' | 'load'): Promise<void>;
    remove(i: number, origin: 'api' | 'sync' | 'watch' | 'load'): Promise<void>;
  },
  cleanup: () => Promise<void>,
): ChangeSourceUnderTest<TenantChangeEvent> {
  return {
    subscribe: (listener) => registry.subscribe(listener),
    ...write,
    keyOf: (c) => (c.kind === 'tenant.put' ? c.record.id : c.id),
    key: (i) => `t${i}`,
    has: (i) => registry.get(`t${i}`) !== undefined,
    cleanup,
  };
}

runChangeSourceContract('rulesets: MemoryStore', async () => rulesets(new MemoryStore(), async () => undefined));

runChangeSourceContract('rulesets: FileStore', async () => {
  const { dir, cleanup } = await makeTempDir('svc-change-source-');
  return rulesets(new FileStore({ rulesDir: dir }), cleanup);
});

runChangeSourceContract('tenants: TenantCollection (memory)', async () => {
  const collection = new TenantCollection();
  return tenants(
    { get: (id) => collection.get(id), subscribe: (listener) => collection.subscribe(listener) },
    {
      put: async (i, origin) => void collection.set(parseTenantRecord({ id: `t${i}`, name: `tenant ${i}` }), origin),
      remove: async (i, origin) => void collection.remove(`t${i}`, origin),
    },
    async () => undefined,
  );
});

runChangeSourceContract('tenants: TenantRegistry over its collection', async () => {
  const registry = new TenantRegistry({ clock: () => 0 });
  return tenants(
    registry,
    {
      put: async (i, origin) => void registry.set(parseTenantRecord({ id: `t${i}`, name: `tenant ${i}` }), origin),
      remove: async (i, origin) => void registry.remove(`t${i}`, origin),
    },
    async () => undefined,
  );
});

runChangeSourceContract('tenants: TenantStore with tenants.json (file)', async () => {
  const { dir, cleanup } = await makeTempDir('svc-change-source-tenant-store-');
  const registry = new TenantRegistry({ clock: () => 0 });
  const store = new TenantStore(registry.collection, new TenantFile(dir));
  return tenants(
    store,
    {
      put: async (i, origin) => void (await store.put(parseTenantRecord({ id: `t${i}`, name: `tenant ${i}` }), { origin })),
      remove: async (i, origin) => void (await store.delete(`t${i}`, { origin })),
    },
    cleanup,
  );
});

runChangeSourceContract('tenants: TenantManager with tenants.json (file)', async () => {
  const { dir, cleanup } = await makeTempDir('svc-change-source-tenants-');
  const registry = new TenantRegistry({ clock: () => 0 });
  const logger = { error() {}, warn() {}, info() {}, debug() {} };
  const manager = new TenantManager({
    tenants: new TenantStore(registry.collection, new TenantFile(dir)),
    store: new MemoryStore(),
    audit: { write() {} },
    logger,
    role: 'standalone',
    writerAddr: null,
  });
  const ctx = { tenant: 'default', sourceIp: null, transport: 'internal' } as const;
  return tenants(
    registry,
    {
      // API writes go through the manager (tenants.json first, then memory); broker writes
      // through applySync with persist; other origins (load, watcher) replace the registry.
      put: async (i, origin) => {
        const body = { id: `t${i}`, name: `tenant ${i}` };
        if (origin === 'api') void (registry.get(body.id) ? await manager.update(ctx, body.id, body) : await manager.create(ctx, body));
        else if (origin === 'sync') await manager.applySync({ kind: 'tenant.put', id: body.id, record: body }, true);
        else registry.replaceAll([...registry.persistable(), parseTenantRecord(body)], origin);
      },
      remove: async (i, origin) => {
        if (origin === 'api') await manager.delete(ctx, `t${i}`);
        else if (origin === 'sync') await manager.applySync({ kind: 'tenant.delete', id: `t${i}` }, true);
        else
          registry.replaceAll(
            registry.persistable().filter((r) => r.id !== `t${i}`),
            origin,
          );
      },
    },
    cleanup,
  );
});
