/**
 * What the sync adapters need from the rest of the server, as small interfaces: a logger and
 * the façade's sync entry points (implemented by `RuleService`). Unit tests pass fakes.
 */
import type { ApplyOutcome, Change, ChangeListener, IncomingChange, SnapshotEntry } from '../store/change.js';
import type { DataRecord } from '../store/data-record.js';
import type { FileToken } from '../store/own-files.js';
import type { ShadowRecord } from '../store/shadow-record.js';
import type { PrepareFile, RuleFiles, RuleRecord } from '../store/types.js';

/** Origin of a change applied by a sync adapter. */
export type SyncOrigin = 'sync' | 'watch';

/** The façade, as seen by the sync adapters. */
export interface SyncTarget {
  /** Decodes, checks (signature policy for local files) and compiles a rule file. */
  readonly prepareFile: PrepareFile;
  /** The store's reconcile-from-disk capability (the watcher); absent without a rules dir. */
  readonly files: RuleFiles | undefined;
  /** True when the store writes to disk. */
  readonly persistent: boolean;
  /** True when tenants are synchronized (multi-tenancy). */
  readonly syncsTenants: boolean;
  /** True when datasets (reference data) are synchronized. */
  readonly syncsData: boolean;
  /** The stored record of `(tenant, name)`, or undefined. */
  current(tenant: string, name: string): RuleRecord | undefined;
  /** The stored shadow run of ruleset `(tenant, name)`, or undefined. */
  currentShadow(tenant: string, name: string): ShadowRecord | undefined;
  /** The stored dataset `(tenant, name)`, or undefined. */
  currentData(tenant: string, name: string): DataRecord | undefined;
  /** Everything this instance holds, as puts (tenants first). */
  snapshot(): SnapshotEntry[];
  /** The one change stream; returns the unsubscribe function. */
  subscribe(listener: ChangeListener<Change>): () => void;
  /**
   * Applies a change received from the broker or found by the watcher; `expect` (the watcher):
   * the token of the file read, 'stale' when this instance changed that file since.
   */
  applyChange(change: IncomingChange, origin: SyncOrigin, persist: boolean, expect?: FileToken): Promise<ApplyOutcome>;
  /** Installs the provider of the `sync` block of `/health`. */
  setSyncStatus(fn: () => Record<string, unknown>): void;
}
