/**
 * Tenant management (`/api/v1/tenants`, multi-tenancy mode): list, get, create, update and
 * delete tenant records, and apply tenant changes that come from the broker or the watcher.
 *
 * Writes are refused on a reader (409 READ_ONLY) and go through the tenants collection of the
 * store (store/tenant-store.ts): one at a time, `tenants.json` written first, then memory
 * changes and the collection emits its change (audit, broker publication). A write that fails
 * leaves memory unchanged and answers 500.
 *
 * Decisions (docs/tenancy.md): POST creates (409 CONFLICT when the id exists, `default`
 * included); PUT replaces a whole record (omitted fields take their defaults) and is 404
 * TENANT_NOT_FOUND for an unknown id; DELETE of a tenant that still holds rulesets, or of
 * `default`, is 409 CONFLICT.
 */
import type { ApplyOutcome } from '../store/change.js';
import type { RuleStore } from '../store/types.js';
import { DEFAULT_TENANT } from '../store/types.js';
import type { TenantStore } from '../store/tenant-store.js';
import { ServiceError } from './errors.js';
import type { ServiceAudit } from './ports.js';
import { RoleGuard, type Role } from './role-guard.js';
import type { IncomingTenantChange } from './tenancy-port.js';
import { checkTenantRecord, invalidTenantIdMessage, isValidTenantId, parseTenantRecord, type TenantRecord } from './tenant-model.js';
import { callerFields, type CallContext } from './types.js';
import type { Logger } from '../log.js';

/** Collaborators of `TenantManager`. */
export interface TenantManagerDeps {
  /** The tenants collection (records, `tenants.json`, changes). */
  readonly tenants: TenantStore;
  /** The rule store (how many rulesets a tenant holds). */
  readonly store: RuleStore;
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

  constructor(private readonly deps: TenantManagerDeps) {
    this.guard = new RoleGuard(deps.role, deps.writerAddr);
  }

  list(): TenantRecord[] {
    return this.deps.tenants.list();
  }

  get(id: string): TenantRecord {
    assertId(id);
    const record = this.deps.tenants.get(id);
    if (!record) throw notFound(id);
    return record;
  }

  async create(ctx: CallContext, body: unknown): Promise<TenantRecord> {
    this.guard.assertWritable();
    const record = parseTenantRecord(body);
    const check = (previous: TenantRecord | undefined): void => {
      if (previous === undefined) return;
      const why = record.id === DEFAULT_TENANT ? 'always exists' : 'already exists';
      throw new ServiceError('CONFLICT', `tenant '${record.id}' ${why}; use PUT /api/v1/tenants/${record.id} to change it`);
    };
    await this.write(() => this.deps.tenants.put(record, { origin: 'api', check }));
    this.deps.audit.write('tenant_created', { tenant_id: record.id, tenant: record, ...callerFields(ctx) });
    return record;
  }

  async update(ctx: CallContext, id: string, body: unknown): Promise<TenantRecord> {
    this.guard.assertWritable();
    assertId(id);
    const record = parseTenantRecord(body, id);
    let from: TenantRecord | undefined;
    const check = (previous: TenantRecord | undefined): void => {
      if (previous === undefined) throw notFound(id, ' (create it with POST /api/v1/tenants)');
      from = previous;
    };
    await this.write(() => this.deps.tenants.put(record, { origin: 'api', check }));
    this.deps.audit.write('tenant_updated', { tenant_id: id, from, to: record, ...callerFields(ctx) });
    return record;
  }

  async delete(ctx: CallContext, id: string): Promise<void> {
    this.guard.assertWritable();
    assertId(id);
    if (id === DEFAULT_TENANT) throw new ServiceError('CONFLICT', `the '${DEFAULT_TENANT}' tenant cannot be deleted`);
    // NOTE: the check and the removal run under the store's write lock, as does a ruleset
    // create's tenant check (TenancyPort.assertCanCreate): a create in flight either lands first
    // (409 here) or finds the tenant gone (404 there), never leaving a ruleset without a tenant.
    await this.deps.store.exclusive(async () => {
      if (!this.deps.tenants.get(id)) throw notFound(id);
      const held = this.deps.store.list(id).map((r) => r.name);
      if (held.length > 0) {
        const shown = held.slice(0, 10).join(', ') + (held.length > 10 ? ', …' : '');
        throw new ServiceError('CONFLICT', `tenant '${id}' still owns ${held.length} ruleset${held.length === 1 ? '' : 's'} (${shown}); delete them first`, {
          rulesets: held.length,
        });
      }
      const removed = await this.write(() => this.deps.tenants.delete(id, { origin: 'api' }));
      if (removed === undefined) throw notFound(id);
      this.deps.audit.write('tenant_deleted', { tenant_id: id, ...callerFields(ctx) });
    });
  }

  /**
   * Applies a tenant change from the broker. `persist`: also write `tenants.json` (a reader
   * with its own rules dir, so it restarts with its tenants). An invalid record is rejected.
   */
  async applySync(change: IncomingTenantChange, persist: boolean): Promise<TenantApplyOutcome> {
    const id = change.id;
    if (!isValidTenantId(id)) return 'rejected';
    if (change.kind === 'tenant.delete') {
      const removed = await this.deps.tenants.delete(id, { origin: 'sync', persist });
      return removed === undefined ? 'unchanged' : 'applied';
    }
    const out = checkTenantRecord(change.record, id);
    if (!out.ok) {
      this.deps.logger.warn({ tenant: id, problems: out.problems }, 'rejected a synchronized tenant record');
      return 'rejected';
    }
    return (await this.deps.tenants.put(out.record, { origin: 'sync', persist })) ? 'applied' : 'unchanged';
  }

  /**
   * Re-reads `tenants.json` (the watcher saw it change) and makes the collection match it.
   * A missing file means "no tenants but default"; a broken file is reported (throws) and the
   * loaded tenants keep serving. Resolves to the number of changes.
   */
  reloadFile(): Promise<number> {
    return this.deps.tenants.reload('watch');
  }

  /** Runs an API write of the collection; a failed `tenants.json` write is a 500 that says what failed. */
  private async write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      const message = (err as Error)?.message ?? String(err);
      const path = this.deps.tenants.file?.path ?? 'tenants.json';
      this.deps.logger.error({ err: message, path }, 'tenant registry write failed');
      throw new ServiceError('INTERNAL_ERROR', `storage write failed: cannot write ${path}: ${message}`);
    }
  }
}

function assertId(id: string): void {
  if (!isValidTenantId(id)) throw new ServiceError('BAD_REQUEST', invalidTenantIdMessage(id));
}

function notFound(id: string, hint = ''): ServiceError {
  return new ServiceError('TENANT_NOT_FOUND', `tenant '${id}' not found${hint}`);
}
