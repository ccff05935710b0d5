/**
 * Storage interfaces (architecture guide, point 6). The store keeps, per tenant, every ruleset
 * document together with its compiled form for synchronous reads on the hot path, persists
 * documents when it is a file store, keeps version history, and emits change events that the
 * sync adapters (file watcher, broker) subscribe to.
 *
 * Implementations: `MemoryStore` (no persistence, no history) and `FileStore` (rules dir,
 * atomic writes, history). Both pass the same contract test suite (test/contract).
 */
import type { CompiledRuleset } from '../ruleset/compile.js';
import type { RulesetDoc, SignatureBlock } from '../ruleset/model.js';

/** Tenant id used when multi-tenancy is off. */
export const DEFAULT_TENANT = 'default';

/** One stored ruleset: the document as posted (without `_signature`) and its compiled form. */
export interface RuleRecord {
  readonly tenant: string;
  readonly name: string;
  /** `config.version` of the document (default applied). */
  readonly version: string;
  /** The document as posted, without `_signature`. Treat as immutable. */
  readonly doc: RulesetDoc;
  readonly compiled: CompiledRuleset;
  /**
   * The signature the document was uploaded or loaded with, if any. A persistent store writes
   * it back as `_signature` (current file and history), so a signed rule still verifies when
   * the server restarts with signatures required.
   */
  readonly signature?: SignatureBlock;
}

/** Who caused a change: an API call, a broker sync event, the file watcher, or the start-up load. */
export type Origin = 'api' | 'sync' | 'watch' | 'load';

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

/** A change event, emitted after the change is applied (and persisted, when it is persisted). */
export type StoreEvent =
  | { readonly type: 'put'; readonly record: RuleRecord; readonly previous?: RuleRecord; readonly origin: Origin }
  | { readonly type: 'delete'; readonly tenant: string; readonly name: string; readonly previous: RuleRecord; readonly origin: Origin };

/** Listener of store events. Must not throw; errors are the listener's own business. */
export type StoreListener = (event: StoreEvent) => void;

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

/** The rule store. Reads are synchronous (hot path); writes are serialized and asynchronous. */
export interface RuleStore {
  /** `persistent` with a rules dir, else `memory`. */
  readonly mode: 'persistent' | 'memory';
  /** The rules directory, or null. */
  readonly rulesDir: string | null;

  /** Loads every rule file of the rules dir (all tenants). A broken file is skipped and reported. */
  load(prepare: PrepareFile): Promise<LoadReport>;

  /** The record, or undefined. */
  get(tenant: string, name: string): RuleRecord | undefined;
  /** All records of a tenant, sorted by name. */
  list(tenant: string): RuleRecord[];
  /** Number of records of one tenant, or of all tenants when omitted. */
  count(tenant?: string): number;
  /** Tenants that hold at least one record. */
  tenants(): string[];

  /** Creates or replaces a record. A replaced record is saved to history first (persistent mode). */
  put(record: RuleRecord, options: WriteOptions): Promise<PutOutcome>;
  /** Deletes a record and its history. Resolves to the deleted record, or undefined when absent. */
  delete(tenant: string, name: string, options: WriteOptions): Promise<RuleRecord | undefined>;
  /**
   * Runs `fn` under the store's write lock: no `put` or `delete` runs meanwhile. For a check on
   * the store's content that must hold until a related change is made (a tenant is deleted only
   * while it owns no ruleset). `fn` must not call `put` or `delete` (it would wait for itself).
   */
  exclusive<T>(fn: () => Promise<T> | T): Promise<T>;

  /** Stored versions, newest first (empty in memory mode). */
  versions(tenant: string, name: string): Promise<VersionEntry[]>;
  /** The document of a stored version, or undefined. */
  readVersion(tenant: string, name: string, seq: number): Promise<RulesetDoc | undefined>;

  /**
   * Readiness probe: takes the store's read lock within `timeoutMs` and, when persistent,
   * writes `.health_probe` in the rules dir. Rejects with a message saying what failed.
   */
  probe(timeoutMs: number): Promise<void>;

  /** Subscribes to change events; returns the unsubscribe function. */
  subscribe(listener: StoreListener): () => void;
}
