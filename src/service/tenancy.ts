/**
 * Multi-tenancy wiring (`--multi-tenancy-enabled`, docs/tenancy.md): loads the tenant registry
 * from `<rules-dir>/tenants.json` (memory-only mode: just `default`), and builds what the rest
 * of the server is given: the registry (the façade's `TenancyPort`), the manager (the HTTP
 * tenant routes), the tenants collection for the façade's sync methods (`TenantSyncPort`) and
 * the watcher hook for `tenants.json`.
 */
import type { Config } from '../config/index.js';
import type { RuleStore } from '../store/types.js';
import { TenantFile } from '../store/tenant-file.js';
import { TenantStore } from '../store/tenant-store.js';
import type { ServiceAudit } from './ports.js';
import type { TenantSyncPort } from './tenancy-port.js';
import { TenantManager } from './tenant-manager.js';
import { TenantRegistry } from './tenant-registry.js';
import type { Logger } from '../log.js';

/** What `setupTenancy` needs. */
export interface TenancyOptions {
  readonly config: Pick<Config, 'rulesDir' | 'role' | 'writerAddr'>;
  readonly store: RuleStore;
  readonly audit: ServiceAudit;
  readonly logger: Logger;
  /** Monotonic clock in ms for the rate limiters (`performance.now`). */
  readonly clock: () => number;
}

/** Multi-tenancy, ready to wire. */
export interface Tenancy {
  readonly registry: TenantRegistry;
  readonly manager: TenantManager;
  /** The tenants collection for the façade (`RuleServiceDeps.tenantSync`): broker apply, snapshot, changes. */
  readonly sync: TenantSyncPort;
  /** Hooks for `startSync` (`SyncHooks`). */
  readonly hooks: {
    /** The watcher saw `tenants.json` change: reload it. */
    readonly onTenantsFileChanged: () => Promise<void>;
  };
  /** Logs tenants that hold loaded rulesets but are not registered (call after the store loaded). */
  reportUnregistered(): void;
}

/**
 * Loads the registry and builds the parts. Rejects when `tenants.json` exists but is not valid:
 * starting without the tenants would answer 404 to all of them, and the next tenant write
 * would replace the file.
 */
export async function setupTenancy(options: TenancyOptions): Promise<Tenancy> {
  const { config, store, audit, logger } = options;
  const file = config.rulesDir ? new TenantFile(config.rulesDir) : null;
  const registry = new TenantRegistry({ clock: options.clock, logger });
  const tenants = new TenantStore(registry.collection, file, logger);
  await tenants.reload('load');
  logger.info({ tenants: registry.list().length, file: file?.path ?? null }, 'tenant registry loaded');
  const manager = new TenantManager({ tenants, store, audit, logger, role: config.role, writerAddr: config.writerAddr });
  const sync: TenantSyncPort = {
    // `persist` (from the consumer): a reader with its own rules dir (no watcher on a shared dir)
    // keeps what it receives on disk, like the rule consumer does.
    apply: async (change, persist) => {
      const outcome = await manager.applySync(change, persist);
      if (outcome === 'applied') logger.info({ tenant: change.id, deleted: change.kind === 'tenant.delete' }, 'tenant sync event applied');
      return outcome;
    },
    records: () => tenants.persistable(),
    subscribe: (listener) => registry.subscribe(listener),
  };
  return {
    registry,
    manager,
    sync,
    hooks: {
      onTenantsFileChanged: async () => {
        const changes = await manager.reloadFile();
        if (changes > 0) logger.info({ changes }, 'tenants.json reloaded');
      },
    },
    reportUnregistered() {
      for (const tenant of store.tenants()) {
        if (!registry.get(tenant)) {
          logger.warn({ tenant, rulesets: store.count(tenant) }, 'rulesets of an unregistered tenant are loaded but not served until the tenant is created');
        }
      }
    },
  };
}
