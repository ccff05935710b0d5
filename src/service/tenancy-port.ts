/**
 * What the `RuleService` façade needs from multi-tenancy (implemented by `TenantRegistry`),
 * as one small interface. Absent when `--multi-tenancy-enabled` is off: the façade then checks
 * one field and serves everything in tenant `default`, exactly as without tenancy.
 */
import type { ExecuteOptions } from '../ruleset/execute.js';
import type { ApplyOutcome, ChangeListener, IncomingChange, TenantChangeEvent } from '../store/change.js';
import type { TenantRecord } from '../store/tenant-record.js';

/** Tenant checks of the façade. Every method is O(1); `admit` and `executeOptions` allocate nothing. */
export interface TenancyPort {
  /**
   * Throws TENANT_NOT_FOUND unless the tenant exists and is enabled; then takes `cost` tokens
   * from its rate limit (0: no charge) or throws RATE_LIMITED.
   */
  admit(tenant: string, cost: number): void;
  /**
   * The execute options for a tenant: `base` itself, or (when the tenant sets
   * `execution_timeout_ms`) a cached frozen copy with that timeout. A ruleset's own
   * `timeout_ms` still wins inside the engine (ruleset > tenant > server).
   */
  executeOptions(tenant: string, base: ExecuteOptions): ExecuteOptions;
  /**
   * Called under the store's write lock before a ruleset is created: throws TENANT_NOT_FOUND
   * when the tenant no longer exists (deleted while the request was on its way), BAD_REQUEST
   * when a tenant holding `held` rulesets may not create one more (`max_rulesets`).
   */
  assertCanCreate(tenant: string, held: number): void;
}

/** An incoming change of the tenants collection. */
export type IncomingTenantChange = Extract<IncomingChange, { kind: 'tenant.put' | 'tenant.delete' }>;

/**
 * The tenants collection as the façade synchronizes it (implemented in tenancy.ts): absent
 * without multi-tenancy, and then the façade's snapshot and change stream hold no tenant.
 */
export interface TenantSyncPort {
  /** Applies a tenant change from the broker; `persist`: also write `tenants.json`. */
  apply(change: IncomingTenantChange, persist: boolean): Promise<ApplyOutcome>;
  /** The records that make up this instance's tenant state (what a reader must end up with). */
  records(): readonly TenantRecord[];
  /** The tenants' change stream; returns the unsubscribe function. */
  subscribe(listener: ChangeListener<TenantChangeEvent>): () => void;
}
