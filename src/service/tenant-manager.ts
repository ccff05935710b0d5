/**
 * Tenant management (`/api/v1/tenants`, multi-tenancy mode): list, get, create, update and
 * delete tenant records, and apply tenant changes that come from the broker or the watcher.
 *
 * Writes are refused on a reader (409 READ_ONLY), run one at a time, and follow the rule
 * store's order: `tenants.json` is written first (atomically; memory-only mode has no file),
 * then memory changes and the registry emits its event (audit, broker publication). A write
 * that fails leaves memory unchanged and answers 500.
 *
 * Decisions (docs/tenancy.md): POST creates (409 CONFLICT when the id exists, `default`
 * included); PUT replaces a whole record (omitted fields take their defaults) and is 404
 * TENANT_NOT_FOUND for an unknown id; DELETE of a tenant that still holds rulesets, or of
 * `default`, is 409 CONFLICT.
 */
import type { ApplyOutcome } from '../store/change.js';
import type { RuleStore } from '../store/types.js';
import { DEFAULT_TENANT } from '../store/types.js';
import type { TenantFile } from '../store/tenant-file.js';
import { ServiceError } from './errors.js';
import type { ServiceAudit } from './ports.js';
import { RoleGuard, type Role } from './role-guard.js';
import type { IncomingTenantChange } from './tenancy-port.js';
import { DEFAULT_TENANT_RECORD, checkTenantRecord, invalidTenantIdMessage, isValidTenantId, parseTenantRecord, type TenantRecord } from './tenant-model.js';
import type { TenantRegistry } from './tenant-registry.js';
import type { CallContext } from './types.js';
import type { Logger } from '../log.js';

/** Collaborators of `TenantManager`. */
export interface TenantManagerDeps {
  readonly registry: TenantRegistry;
  /** The rule store (how many rulesets a tenant holds). */
  readonly store: RuleStore;
  /** `tenants.json`, or null in memory-only mode. */
  readonly file: TenantFile | null;
  readonly audit: ServiceAudit;
  readonly logger: Logger;
  readonly role: Role;
  readonly writerAddr: string | null;
}

/** What the HTTP tenant routes call. */
export interface TenantManagerApi {
  list(): TenantRecord[];
  get(id: string): TenantRecord;
  create(ctx: CallContext, body: unknown): Promise<TenantRecord>;
  update(ctx: CallContext, id: string, body: unknown): Promise<TenantRecord>;
  delete(ctx: CallContext, id: string): Promise<void>;
}

/** Outcome of applying a synchronized change. */
export type TenantApplyOutcome = ApplyOutcome;

/** Tenant management (see the module comment). */
export class TenantManager implements TenantManagerApi {
  private readonly guard: RoleGuard;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: TenantManagerDeps) {
    this.guard = new RoleGuard(deps.role, deps.writerAddr);
  }

  list(): TenantRecord[] {
    return this.deps.registry.list();
  }

  get(id: string): TenantRecord {
    assertId(id);
    const record = this.deps.registry.get(id);
    if (!record) throw notFound(id);
    return record;
  }

  async create(ctx: CallContext, body: unknown): Promise<TenantRecord> {
    this.guard.assertWritable();
    const record = parseTenantRecord(body);
    return this.serial(async () => {
      if (this.deps.registry.get(record.id)) {
        const why = record.id === DEFAULT_TENANT ? 'always exists' : 'already exists';
        throw new ServiceError('CONFLICT', `tenant '${record.id}' ${why}; use PUT /api/v1/tenants/${record.id} to change it`);
      }
      await this.persist(this.deps.registry.persistable().concat(record));
      this.deps.registry.set(record, 'api');
      this.deps.audit.write('tenant_created', { tenant_id: record.id, tenant: record, source_ip: ctx.sourceIp });
      return record;
    });
  }

  async update(ctx: CallContext, id: string, body: unknown): Promise<TenantRecord> {
    this.guard.assertWritable();
    assertId(id);
    const record = parseTenantRecord(body, id);
    return this.serial(async () => {
      const previous = this.deps.registry.get(id);
      if (!previous) throw notFound(id, ' (create it with POST /api/v1/tenants)');
      await this.persist(this.deps.registry.persistable().filter((r) => r.id !== id).concat(record));
      this.deps.registry.set(record, 'api');
      this.deps.audit.write('tenant_updated', { tenant_id: id, from: previous, to: record, source_ip: ctx.sourceIp });
      return record;
    });
  }

  async delete(ctx: CallContext, id: string): Promise<void> {
    this.guard.assertWritable();
    assertId(id);
    if (id === DEFAULT_TENANT) throw new ServiceError('CONFLICT', `the '${DEFAULT_TENANT}' tenant cannot be deleted`);
    // NOTE: the check and the removal run under the store's write lock, as does a ruleset
    // create's tenant check (TenancyPort.assertCanCreate): a create in flight either lands first
    // (409 here) or finds the tenant gone (404 there), never leaving a ruleset without a tenant.
    await this.serial(() => this.deps.store.exclusive(async () => {
      if (!this.deps.registry.get(id)) throw notFound(id);
      const held = this.deps.store.list(id).map((r) => r.name);
      if (held.length > 0) {
        const shown = held.slice(0, 10).join(', ') + (held.length > 10 ? ', …' : '');
        throw new ServiceError(
          'CONFLICT',
          `tenant '${id}' still owns ${held.length} ruleset${held.length === 1 ? '' : 's'} (${shown}); delete them first`,
          { rulesets: held.length },
        );
      }
      await this.persist(this.deps.registry.persistable().filter((r) => r.id !== id));
      this.deps.registry.remove(id, 'api');
      this.deps.audit.write('tenant_deleted', { tenant_id: id, source_ip: ctx.sourceIp });
    }));
  }

  /**
   * Applies a tenant change from the broker. `persist`: also write `tenants.json` (a reader
   * with its own rules dir, so it restarts with its tenants). An invalid record is rejected.
   */
  async applySync(change: IncomingTenantChange, persist: boolean): Promise<TenantApplyOutcome> {
    const id = change.id;
    if (!isValidTenantId(id)) return 'rejected';
    let record: TenantRecord | null = null;
    if (change.kind === 'tenant.put') {
      const out = checkTenantRecord(change.record, id);
      if (!out.ok) {
        this.deps.logger.warn({ tenant: id, problems: out.problems }, 'rejected a synchronized tenant record');
        return 'rejected';
      }
      record = out.record;
    }
    return this.serial(async () => {
      const registry = this.deps.registry;
      let changed: boolean;
      if (record !== null) changed = registry.set(record, 'sync');
      else if (id === DEFAULT_TENANT) changed = registry.set(DEFAULT_TENANT_RECORD, 'sync');
      else changed = registry.remove(id, 'sync') !== undefined;
      if (changed && persist && this.deps.file) await this.writeQuietly(registry.persistable());
      return changed ? 'applied' : 'unchanged';
    });
  }

  /**
   * Re-reads `tenants.json` (the watcher saw it change) and makes the registry match it.
   * A missing file means "no tenants but default"; a broken file is reported (throws) and the
   * loaded tenants keep serving. Resolves to the number of changes.
   */
  async reloadFile(): Promise<number> {
    const file = this.deps.file;
    if (!file) return 0;
    return this.serial(async () => {
      const records = await file.read();
      return this.deps.registry.replaceAll(records ?? [], 'watch');
    });
  }

  /** Writes `tenants.json` for an API change; a failure is a 500 that says what failed. */
  private async persist(records: TenantRecord[]): Promise<void> {
    if (!this.deps.file) return;
    try {
      await this.deps.file.write(records);
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      this.deps.logger.error({ err: message, path: this.deps.file.path }, 'tenant registry write failed');
      throw new ServiceError('INTERNAL_ERROR', `storage write failed: cannot write ${this.deps.file.path}: ${message}`);
    }
  }

  /** Writes `tenants.json` for a synchronized change; failures are logged (memory already changed). */
  private async writeQuietly(records: TenantRecord[]): Promise<void> {
    try {
      await this.deps.file?.write(records);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error)?.message ?? String(err) }, 'cannot write tenants.json; the change is applied in memory');
    }
  }

  /** Runs `fn` after every earlier write (one tenant write at a time). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

function assertId(id: string): void {
  if (!isValidTenantId(id)) throw new ServiceError('BAD_REQUEST', invalidTenantIdMessage(id));
}

function notFound(id: string, hint = ''): ServiceError {
  return new ServiceError('TENANT_NOT_FOUND', `tenant '${id}' not found${hint}`);
}
