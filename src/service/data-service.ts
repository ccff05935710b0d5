/**
 * The reference data façade (EXTENSIONS.md 3 "Reference data"): `PUT/GET/DELETE
 * /api/v1/data/:name` and `GET /api/v1/data` for the request's tenant, the `--max-data-bytes`
 * limit, the role guard (a reader answers writes 409 READ_ONLY), tenant admission, and the audit
 * lines `data_put` / `data_deleted`. `snapshot(tenant)` is what executions of rulesets that read
 * `@name` see (./execution-runner.ts).
 *
 * It is also the datasets collection as the façade synchronizes it (`DataSyncPort`): the sync
 * adapters apply `DataPut` / `DataDeleted` from the broker and data files found by the watcher
 * through `applySync`, which checks them like the API does (name, `--max-data-bytes`) and logs
 * and skips what fails (docs/data-sync.md). Applied sync changes are not audited, like rules.
 */
import type { JsonValue } from '../expr/ast.js';
import type { DataSnapshot } from '../expr/data-ref.js';
import type { ApplyOutcome, ChangeListener, DataChange, IncomingChange } from '../store/change.js';
import { dataRecord, type DataRecord, type DataStore } from '../store/data-store.js';
import { isValidRulesetName } from '../ruleset/model.js';
import type { FileToken } from '../store/own-files.js';
import { ServiceError } from './errors.js';
import type { ServiceAudit } from './ports.js';
import type { RoleGuard } from './role-guard.js';
import type { TenancyPort } from './tenancy-port.js';
import { callerFields, type CallContext } from './types.js';
import type { Logger } from '../log.js';

/** An incoming change of the datasets collection. */
export type IncomingDataChange = Extract<IncomingChange, { kind: 'data.put' | 'data.delete' }>;

/**
 * The datasets collection as the façade synchronizes it (implemented by `DataService`): absent
 * without reference data, and then the façade's snapshot and change stream hold no dataset.
 */
export interface DataSyncPort {
  /**
   * Applies a dataset change from the broker (`sync`) or a data file (`watch`); `persist`: also
   * write the file; `expect`: the watcher's token (`StaleRead` when an own change overtook its read).
   */
  applySync(change: IncomingDataChange, origin: 'sync' | 'watch', persist: boolean, expect?: FileToken): Promise<ApplyOutcome>;
  /** Every dataset this instance holds (what a reader must end up with). */
  records(): readonly DataRecord[];
  /** The stored dataset, with no tenant check, or undefined. */
  current(tenant: string, name: string): DataRecord | undefined;
  /** The datasets' change stream; returns the unsubscribe function. */
  subscribe(listener: ChangeListener<DataChange>): () => void;
}

/** One row of `GET /api/v1/data`. */
export interface DataInfo {
  readonly name: string;
  readonly bytes: number;
  readonly version: string;
}

/** The answer of `PUT /api/v1/data/:name`. */
export interface DataPutResult extends DataInfo {
  readonly status: 'created' | 'updated';
}

/** What the HTTP routes call. */
export interface DataServiceApi {
  list(ctx: CallContext): DataInfo[];
  /** The document as compact JSON text. */
  getText(ctx: CallContext, name: string): string;
  put(ctx: CallContext, name: string, body: unknown): Promise<DataPutResult>;
  delete(ctx: CallContext, name: string): Promise<void>;
}

/** Collaborators of the data façade. */
export interface DataServiceDeps {
  readonly store: DataStore;
  readonly guard: RoleGuard;
  readonly audit: ServiceAudit;
  /** `--max-data-bytes`. */
  readonly maxDataBytes: number;
  readonly tenancy?: TenancyPort | null;
  /** Where synchronized datasets that fail their checks are reported. */
  readonly logger?: Logger;
}

/** The data façade. */
export class DataService implements DataServiceApi, DataSyncPort {
  constructor(private readonly deps: DataServiceDeps) {}

  /** The datasets `@name` reads for `tenant` (an empty map when it has none). */
  snapshot(tenant: string): DataSnapshot {
    return this.deps.store.snapshot(tenant);
  }

  list(ctx: CallContext): DataInfo[] {
    this.admit(ctx);
    return this.deps.store.list(ctx.tenant).map(info);
  }

  getText(ctx: CallContext, name: string): string {
    this.admit(ctx);
    return JSON.stringify(this.record(ctx, name).value);
  }

  async put(ctx: CallContext, name: string, body: unknown): Promise<DataPutResult> {
    this.deps.guard.assertWritable();
    this.admit(ctx);
    checkName(name);
    if (body === undefined) throw new ServiceError('BAD_REQUEST', 'the request body must be the dataset: any JSON value');
    const record = dataRecord(ctx.tenant, name, body as JsonValue);
    if (record.bytes > this.deps.maxDataBytes) {
      throw new ServiceError(
        'PAYLOAD_TOO_LARGE',
        `dataset '${name}' is ${record.bytes} bytes of JSON; the limit is ${this.deps.maxDataBytes} (--max-data-bytes)`,
      );
    }
    const created = await this.deps.store.put(record);
    this.auditData(ctx, 'data_put', { data_name: name, version: record.version, bytes: record.bytes, created });
    return { status: created ? 'created' : 'updated', ...info(record) };
  }

  async delete(ctx: CallContext, name: string): Promise<void> {
    this.deps.guard.assertWritable();
    this.admit(ctx);
    checkName(name);
    if (!(await this.deps.store.delete(ctx.tenant, name))) throw notFound(name);
    this.auditData(ctx, 'data_deleted', { data_name: name });
  }

  async applySync(change: IncomingDataChange, origin: 'sync' | 'watch', persist: boolean, expect?: FileToken): Promise<ApplyOutcome> {
    const { store, logger } = this.deps;
    const { tenant, name } = change;
    if (!isValidRulesetName(tenant) || !isValidRulesetName(name)) {
      logger?.warn({ tenant, name, origin }, 'synchronized dataset skipped: invalid tenant id or dataset name');
      return 'rejected';
    }
    if (change.kind === 'data.delete') {
      if (store.get(tenant, name) === undefined) return 'unchanged';
      return (await store.delete(tenant, name, origin, persist, expect)) ? 'applied' : 'unchanged';
    }
    const record = dataRecord(tenant, name, change.value as JsonValue);
    if (record.bytes > this.deps.maxDataBytes) {
      logger?.warn(
        { tenant, name, origin, bytes: record.bytes, limit: this.deps.maxDataBytes, serving_version: store.get(tenant, name)?.version ?? null },
        'synchronized dataset skipped: over --max-data-bytes; the loaded version keeps serving',
      );
      return 'rejected';
    }
    return store.apply(record, origin, persist, expect);
  }

  records(): readonly DataRecord[] {
    return this.deps.store.all();
  }

  current(tenant: string, name: string): DataRecord | undefined {
    return this.deps.store.get(tenant, name);
  }

  subscribe(listener: ChangeListener<DataChange>): () => void {
    return this.deps.store.subscribe(listener);
  }

  private record(ctx: CallContext, name: string): DataRecord {
    checkName(name);
    const rec = this.deps.store.get(ctx.tenant, name);
    if (rec === undefined) throw notFound(name);
    return rec;
  }

  private admit(ctx: CallContext): void {
    if (this.deps.tenancy) this.deps.tenancy.admit(ctx.tenant, 0);
  }

  private auditData(ctx: CallContext, event: string, fields: Record<string, unknown>): void {
    if (this.deps.tenancy) fields['tenant_id'] = ctx.tenant;
    this.deps.audit.write(event, { ...fields, ...callerFields(ctx) });
  }
}

function info(r: DataRecord): DataInfo {
  return { name: r.name, bytes: r.bytes, version: r.version };
}

function checkName(name: string): void {
  if (!isValidRulesetName(name)) {
    throw new ServiceError(
      'BAD_REQUEST',
      `invalid dataset name '${name}': the ruleset name rule: 1 to 128 letters, digits, '_', '-', '.', not starting with '.'; expressions read names that are identifiers`,
    );
  }
}

function notFound(name: string): ServiceError {
  return new ServiceError('NOT_FOUND', `dataset '${name}' not found`);
}
