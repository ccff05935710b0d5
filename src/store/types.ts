/**
 * Storage interfaces (architecture guide, point 6), as small capabilities: read, write,
 * history, subscribe, and on the file driver reconcile-from-disk. The store keeps, per tenant,
 * every ruleset document together with its compiled form for synchronous reads on the hot path,
 * persists documents when it is a file store, keeps version history, and emits its changes
 * (`change.ts`) that the sync adapters (file watcher, broker) consume through the façade.
 *
 * Implementations: `MemoryStore` (read, write, subscribe) and `FileStore` (also history and
 * files: rules dir, atomic writes). Both pass the same contract test suite (test/contract).
 */
import type { FileToken, OwnFiles } from './own-files.js';
import type { RulesetDoc } from '../ruleset/model.js';
import type { Change, ChangeListener, RulesetChange } from './change.js';
import type { Origin, RuleRecord } from './record.js';

export { DEFAULT_TENANT, type Origin, type RuleRecord } from './record.js';

/** Options of a write. */
export interface WriteOptions {
  readonly origin: Origin;
  /**
   * Whether a persistent store writes the change to disk (and to history). Default true.
   * The watcher passes false: the file is already on disk.
   */
  readonly persist?: boolean;
  /**
   * Called by `put` under the write lock when the record's name is new in its tenant, with the
   * number of records the tenant holds; throwing refuses the write (nothing is stored). A limit
   * checked here holds however many creates are in flight (tenant `max_rulesets`).
   */
  readonly beforeCreate?: (held: number) => void;
  /**
   * (The watcher) the token taken before the file that this change comes from was read: when
   * an own change of that ruleset's file has landed since, the put or delete throws `StaleRead`
   * under the write lock and changes nothing (./own-files.ts).
   */
  readonly expect?: FileToken;
}

/** Outcome of `put`. */
export interface PutOutcome {
  readonly created: boolean;
  /** The record that was replaced, when it was an update. */
  readonly previous?: RuleRecord;
}

/** A stored version (SPEC.md "Version entry"). */
export interface VersionEntry {
  readonly seq: number;
  readonly version: string;
  /** ISO 8601 UTC. */
  readonly timestamp: string;
}

/** A change event of the rulesets collection (`change.ts`). */
export type StoreEvent = RulesetChange;

/** Listener of store events. Must not throw; errors are the listener's own business. */
export type StoreListener = ChangeListener<RulesetChange>;

/**
 * Turns a rule file found on disk into a record: decode (JSON, YAML, .svc), verify the
 * signature by policy, validate and compile. Throws to reject the file (it is logged and skipped).
 */
export type PrepareFile = (file: { tenant: string; name: string; path: string; bytes: Buffer }) => RuleRecord;

/** What `load` found. */
export interface LoadReport {
  readonly loaded: number;
  /** Files that were skipped, with the reason. */
  readonly skipped: ReadonlyArray<{ path: string; reason: string }>;
}

/** Read capability: synchronous reads (the hot path). */
export interface RuleReader {
  /** The record, or undefined. */
  get(tenant: string, name: string): RuleRecord | undefined;
  /** All records of a tenant, sorted by name. */
  list(tenant: string): RuleRecord[];
  /** Number of records of one tenant, or of all tenants when omitted. */
  count(tenant?: string): number;
  /** Tenants that hold at least one record. */
  tenants(): string[];
}

/** Write capability: writes are serialized and asynchronous. */
export interface RuleWriter {
  /** Creates or replaces a record. A replaced record is saved to history first (when the store keeps history). */
  put(record: RuleRecord, options: WriteOptions): Promise<PutOutcome>;
  /** Deletes a record and its history. Resolves to the deleted record, or undefined when absent. */
  delete(tenant: string, name: string, options: WriteOptions): Promise<RuleRecord | undefined>;
  /**
   * Runs `fn` under the store's write lock: no `put` or `delete` runs meanwhile. For a check on
   * the store's content that must hold until a related change is made (a tenant is deleted only
   * while it owns no ruleset). `fn` must not call `put` or `delete` (it would wait for itself).
   */
  exclusive<T>(fn: () => Promise<T> | T): Promise<T>;
}

/** History capability: present only on stores that keep version history. */
export interface RuleHistory {
  /** Stored versions, newest first. */
  versions(tenant: string, name: string): Promise<VersionEntry[]>;
  /** The document of a stored version, or undefined. */
  readVersion(tenant: string, name: string, seq: number): Promise<RulesetDoc | undefined>;
}

/** Subscribe capability: the collection's change stream (`change.ts`). */
export interface ChangeSource<C extends Change> {
  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe(listener: ChangeListener<C>): () => void;
}

/** What the rules dir holds now for one ruleset (`RuleFiles.current`). */
export type CurrentRuleFile =
  | { readonly kind: 'none'; readonly token: FileToken }
  /** The file this store wrote last, unchanged since (echo suppression): nothing to reload. */
  | { readonly kind: 'own'; readonly path: string; readonly token: FileToken }
  /** Someone else's file (a hand edit, another process): to read, prepare and apply. */
  | { readonly kind: 'file'; readonly path: string; readonly token: FileToken };

/**
 * Reconcile-from-disk capability of the file driver: the directory layout, the file format
 * precedence and the files this store wrote itself are known here only. The file watcher (a
 * sync adapter) asks what is on disk and applies it through the façade.
 */
export interface RuleFiles {
  /** The rules directory (absolute). */
  readonly rulesDir: string;
  /**
   * The rules dir's record of this instance's own file changes (rule files, datasets, shadows):
   * echo suppression and the tokens of stale reads (./own-files.ts).
   */
  readonly own: OwnFiles;
  /**
   * The file that wins the format precedence for `(tenant, name)` now; `own` when it is
   * this store's own unchanged write; `none` when no rule file is left. With the token to
   * apply what was found with (`WriteOptions.expect`), taken before the file was looked at.
   */
  current(tenant: string, name: string): Promise<CurrentRuleFile>;
  /** Every winning rule file of the rules dir (all tenants), with its modification time. */
  scan(): Promise<ReadonlyArray<{ readonly tenant: string; readonly name: string; readonly path: string; readonly mtimeMs: number }>>;
}

/**
 * The rule store: the rulesets collection under the read, write and subscribe capabilities,
 * plus the optional ones a driver has (`history`, `files`). Check a capability by its presence,
 * never by the kind of store.
 */
export interface RuleStore extends RuleReader, RuleWriter, ChangeSource<RulesetChange> {
  /** The rules directory, or null. */
  readonly rulesDir: string | null;
  /** Version history; absent when the store keeps none (memory-only mode). */
  readonly history?: RuleHistory;
  /** Reconcile from disk; absent when the store has no rules dir. */
  readonly files?: RuleFiles;

  /** Loads every rule file of the rules dir (all tenants). A broken file is skipped and reported. */
  load(prepare: PrepareFile): Promise<LoadReport>;

  /**
   * Readiness probe: takes the store's read lock within `timeoutMs` and, when persistent,
   * writes `.health_probe` in the rules dir. Rejects with a message saying what failed.
   */
  probe(timeoutMs: number): Promise<void>;
}
