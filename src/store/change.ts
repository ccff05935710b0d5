/**
 * The one typed change stream (architecture guide, "Next layout" 3). Every collection of the
 * store emits its changes as `Change` values, after they are applied (and persisted, when they
 * are persisted): rulesets (`RuleStore`), tenants (the tenant registry), datasets (reference
 * data, `DataStore`) and shadow runs (`ShadowStore`, EXTENSIONS.md 4). The sync adapters
 * consume this one stream, apply what they receive through one façade method
 * (`RuleService.applyChange`, with an `IncomingChange`) and rebuild from one façade snapshot
 * (`SnapshotEntry`). A new synchronized resource is one new kind in each of these unions (and
 * one exhaustive case per consumer), not a new path.
 */
import type { DataRecord } from './data-record.js';
import type { ShadowRecord } from './shadow-record.js';
import type { TenantRecord } from './tenant-record.js';
import type { Origin, RuleRecord } from './record.js';

/** A ruleset was created or replaced. */
export interface RulesetPut {
  readonly kind: 'ruleset.put';
  readonly record: RuleRecord;
  readonly previous?: RuleRecord;
  readonly origin: Origin;
}

/** A ruleset was deleted. */
export interface RulesetDelete {
  readonly kind: 'ruleset.delete';
  readonly tenant: string;
  readonly name: string;
  readonly previous: RuleRecord;
  readonly origin: Origin;
}

/** A tenant record was created or replaced. */
export interface TenantPut {
  readonly kind: 'tenant.put';
  readonly record: TenantRecord;
  readonly previous?: TenantRecord;
  readonly origin: Origin;
}

/** A tenant was deleted. */
export interface TenantDelete {
  readonly kind: 'tenant.delete';
  readonly id: string;
  readonly previous: TenantRecord;
  readonly origin: Origin;
}

/** A dataset (reference data) was created or replaced. */
export interface DataPut {
  readonly kind: 'data.put';
  readonly record: DataRecord;
  readonly previous?: DataRecord;
  readonly origin: Origin;
}

/** A dataset was deleted. */
export interface DataDelete {
  readonly kind: 'data.delete';
  readonly tenant: string;
  readonly name: string;
  readonly previous: DataRecord;
  readonly origin: Origin;
}

/** A shadow run (EXTENSIONS.md 4) was started or replaced. */
export interface ShadowPut {
  readonly kind: 'shadow.put';
  readonly record: ShadowRecord;
  readonly previous?: ShadowRecord;
  readonly origin: Origin;
}

/** A shadow run ended (deleted or promoted). */
export interface ShadowDelete {
  readonly kind: 'shadow.delete';
  readonly tenant: string;
  readonly name: string;
  readonly previous: ShadowRecord;
  readonly origin: Origin;
}

/** Any applied change, of any collection. */
export type Change = RulesetPut | RulesetDelete | TenantPut | TenantDelete | DataPut | DataDelete | ShadowPut | ShadowDelete;

/** The changes of the rulesets collection (what a `RuleStore` emits). */
export type RulesetChange = RulesetPut | RulesetDelete;

/** The changes of the tenants collection (what the tenant registry emits). */
export type TenantChangeEvent = TenantPut | TenantDelete;

/** The changes of the datasets collection (what a `DataStore` emits). */
export type DataChange = DataPut | DataDelete;

/** The changes of the shadows collection (what a `ShadowStore` emits). */
export type ShadowChange = ShadowPut | ShadowDelete;

/** Listener of a change stream. Must not throw; errors are the listener's own business. */
export type ChangeListener<C extends Change = Change> = (change: C) => void;

/**
 * A change received by a sync adapter, to apply through the façade (`applyChange`): what the
 * broker carries (a ruleset document to compile, a tenant record to check, a dataset's value to
 * check) or what the file watcher found (a record prepared from a rule file, a data file's value).
 */
export type IncomingChange =
  | { readonly kind: 'ruleset.put'; readonly tenant: string; readonly doc: unknown }
  | { readonly kind: 'ruleset.file'; readonly record: RuleRecord }
  | { readonly kind: 'ruleset.delete'; readonly tenant: string; readonly name: string }
  | { readonly kind: 'tenant.put'; readonly id: string; readonly record: unknown }
  | { readonly kind: 'tenant.delete'; readonly id: string }
  | { readonly kind: 'data.put'; readonly tenant: string; readonly name: string; readonly value: unknown }
  | { readonly kind: 'data.delete'; readonly tenant: string; readonly name: string }
  | { readonly kind: 'shadow.put'; readonly tenant: string; readonly name: string; readonly value: unknown }
  | { readonly kind: 'shadow.delete'; readonly tenant: string; readonly name: string };

/**
 * Outcome of applying an incoming change. 'stale' (the watcher only): the file the change was
 * read from has been changed by this instance since; nothing was applied (./own-files.ts).
 */
export type ApplyOutcome = 'applied' | 'unchanged' | 'rejected' | 'stale';

/** One entry of the façade's snapshot: everything this instance holds, as puts (tenants first, then datasets, then rulesets, then shadows). */
export type SnapshotEntry =
  | { readonly kind: 'tenant.put'; readonly record: TenantRecord }
  | { readonly kind: 'data.put'; readonly record: DataRecord }
  | { readonly kind: 'ruleset.put'; readonly record: RuleRecord }
  | { readonly kind: 'shadow.put'; readonly record: ShadowRecord };
