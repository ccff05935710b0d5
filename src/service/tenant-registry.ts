/**
 * The tenants known to this instance, in memory, and the per-request tenant checks of the
 * façade (`TenancyPort`): existence and `enabled` (404 TENANT_NOT_FOUND), the token bucket of
 * `qps_limit`/`burst` (429 RATE_LIMITED), `execution_timeout_ms` and `max_rulesets`.
 *
 * The `default` tenant always exists (DEFAULT_TENANT_RECORD until it is changed) and can be
 * neither deleted nor disabled. The records and their change stream are the store's tenants
 * collection (store/tenant-collection.ts); this registry keeps, per tenant, what the hot path
 * needs (record, token bucket, execute options) and follows the collection's changes. Changes
 * are made by `TenantManager` (API), the sync adapters (broker, watcher) and the start-up load.
 */
import type { Logger } from '../log.js';
import type { ExecuteOptions } from '../ruleset/execute.js';
import type { ChangeListener, TenantChangeEvent } from '../store/change.js';
import { TenantCollection } from '../store/tenant-collection.js';
import { DEFAULT_TENANT, type ChangeSource, type Origin } from '../store/types.js';
import { ServiceError } from './errors.js';
import { TokenBucket, bucketCapacity, type MonotonicClock } from './rate-limit.js';
import type { TenancyPort } from './tenancy-port.js';
import { DEFAULT_TENANT_RECORD, type TenantRecord } from './tenant-model.js';

/** A change of the registry (the tenants collection of the change stream), emitted after it is applied. */
export type TenantEvent = TenantChangeEvent;

/** Listener of registry events; must not throw (errors are logged and ignored). */
export type TenantListener = ChangeListener<TenantChangeEvent>;

/** Live state of one tenant. */
interface TenantState {
  readonly record: TenantRecord;
  readonly bucket: TokenBucket | null;
  /** base execute options → the same with this tenant's timeout (built on first use). */
  readonly options: Map<ExecuteOptions, ExecuteOptions>;
}

/** Options of `TenantRegistry`. */
export interface TenantRegistryOptions {
  /** Monotonic clock of the rate limiter (ms); `performance.now` in the server. */
  readonly clock: MonotonicClock;
  readonly logger?: Pick<Logger, 'warn'>;
}

/** The registry (see the module comment). */
export class TenantRegistry implements TenancyPort, ChangeSource<TenantChangeEvent> {
  /** The tenants collection (records and change stream); this registry adds the per-tenant state. */
  readonly collection: TenantCollection;
  private readonly states = new Map<string, TenantState>();

  constructor(private readonly options: TenantRegistryOptions) {
    this.collection = new TenantCollection((err) => options.logger?.warn({ err: (err as Error)?.message ?? String(err) }, 'tenant listener threw; ignored'));
    this.states.set(DEFAULT_TENANT, this.stateOf(DEFAULT_TENANT_RECORD, undefined));
    // NOTE: subscribed first, so the state (rate limit, options) is current before any other
    // listener hears of a change.
    this.collection.subscribe((change) => {
      if (change.kind === 'tenant.put') this.states.set(change.record.id, this.stateOf(change.record, this.states.get(change.record.id)));
      else this.states.delete(change.id);
    });
  }

  // ------------------------------------------------------------ TenancyPort (hot path)

  admit(tenant: string, cost: number): void {
    const st = this.states.get(tenant);
    if (st === undefined) throw new ServiceError('TENANT_NOT_FOUND', `tenant '${clip(tenant)}' not found`);
    if (!st.record.enabled) throw new ServiceError('TENANT_NOT_FOUND', `tenant '${tenant}' is disabled`);
    if (cost > 0 && st.bucket !== null && !st.bucket.take(cost)) throw rateLimited(st.record, st.bucket, cost);
  }

  executeOptions(tenant: string, base: ExecuteOptions): ExecuteOptions {
    const st = this.states.get(tenant);
    if (st === undefined) return base;
    const timeoutMs = st.record.execution_timeout_ms;
    if (timeoutMs === null) return base;
    let options = st.options.get(base);
    if (options === undefined) {
      options = Object.freeze({ ...base, timeoutMs });
      st.options.set(base, options);
    }
    return options;
  }

  assertCanCreate(tenant: string, held: number): void {
    const st = this.states.get(tenant);
    if (st === undefined) throw new ServiceError('TENANT_NOT_FOUND', `tenant '${clip(tenant)}' not found`);
    const max = st.record.max_rulesets;
    if (max !== null && held >= max) {
      throw new ServiceError(
        'BAD_REQUEST',
        `tenant '${tenant}' already holds ${held} rulesets, its max_rulesets limit is ${max}: delete a ruleset or raise the limit`,
        { max_rulesets: max, rulesets: held },
      );
    }
  }

  // ------------------------------------------------------------ the collection

  /** The record of a tenant (enabled or not), or undefined. */
  get(id: string): TenantRecord | undefined {
    return this.collection.get(id);
  }

  /** Every record, `default` included, sorted by id. */
  list(): TenantRecord[] {
    return this.collection.list();
  }

  /** The records to persist: every tenant except an unchanged `default`. */
  persistable(): TenantRecord[] {
    return this.collection.persistable();
  }

  /** Creates or replaces a record. Unchanged records emit nothing; returns whether it changed. */
  set(record: TenantRecord, origin: Origin): boolean {
    return this.collection.set(record, origin);
  }

  /** Removes a tenant (`default` is reset instead); returns the removed record. */
  remove(id: string, origin: Origin): TenantRecord | undefined {
    return this.collection.remove(id, origin);
  }

  /** Makes the registry hold exactly `records` (plus `default`); returns the number of changes. */
  replaceAll(records: readonly TenantRecord[], origin: Origin): number {
    return this.collection.replaceAll(records, origin);
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe(listener: TenantListener): () => void {
    return this.collection.subscribe(listener);
  }

  /**
   * The state of a new or changed record. NOTE: the bucket is kept (with its tokens) when the
   * rate and burst did not change, so editing a tenant's name does not refill its bucket.
   */
  private stateOf(record: TenantRecord, prev: TenantState | undefined): TenantState {
    let bucket: TokenBucket | null = null;
    if (record.qps_limit !== null) {
      const capacity = bucketCapacity(record.qps_limit, record.burst);
      const old = prev?.bucket;
      bucket = old && old.ratePerSec === record.qps_limit && old.capacity === capacity ? old : new TokenBucket(record.qps_limit, capacity, this.options.clock);
    }
    return { record, bucket, options: new Map() };
  }
}

/** The 429 of a tenant over its rate limit. */
function rateLimited(record: TenantRecord, bucket: TokenBucket, cost: number): ServiceError {
  const limit = `${record.qps_limit} requests/s, burst ${bucket.capacity}`;
  if (cost > bucket.capacity) {
    return new ServiceError('RATE_LIMITED', `a batch of ${cost} inputs is larger than tenant '${record.id}' burst (${limit}); split the batch`, {
      retry_after_ms: null,
    });
  }
  return new ServiceError('RATE_LIMITED', `tenant '${record.id}' exceeded its rate limit (${limit})`, { retry_after_ms: bucket.retryAfterMs(cost) });
}

function clip(s: string): string {
  const clean = String(s).replace(/[\u0000-\u001f]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
