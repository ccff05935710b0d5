/**
 * `MemoryStore`: the rule store of memory-only mode (no `--rules-dir`). Read, write and
 * subscribe only: no `history` capability (SPEC.md "Versioning" 7: the versions list is empty,
 * rollback is unavailable) and no `files`.
 */
import { storeEmitter, type Emitter, type StoreLogger } from './emitter.js';
import { assertValidName, assertValidTenant } from './layout.js';
import { RecordMap, assertStorableRecord } from './record-map.js';
import { RwLock } from './rw-lock.js';
import type { LoadReport, PrepareFile, PutOutcome, RuleRecord, RuleStore, StoreEvent, StoreListener, WriteOptions } from './types.js';

/** Options of `MemoryStore`. */
export interface MemoryStoreOptions {
  readonly logger?: StoreLogger;
  /** The lock to use; tests inject one to hold it. Default: a new lock. */
  readonly lock?: RwLock;
}

/** In-memory `RuleStore`. */
export class MemoryStore implements RuleStore {
  readonly rulesDir = null;

  private readonly records = new RecordMap();
  private readonly emitter: Emitter<StoreEvent>;
  private readonly lock: RwLock;

  constructor(options: MemoryStoreOptions = {}) {
    this.emitter = storeEmitter(options.logger);
    this.lock = options.lock ?? new RwLock('store');
  }

  /** Nothing to load in memory mode. */
  async load(_prepare?: PrepareFile): Promise<LoadReport> {
    return { loaded: 0, skipped: [] };
  }

  get(tenant: string, name: string): RuleRecord | undefined {
    return this.records.get(tenant, name);
  }

  list(tenant: string): RuleRecord[] {
    return this.records.list(tenant);
  }

  count(tenant?: string): number {
    return this.records.count(tenant);
  }

  tenants(): string[] {
    return this.records.tenants();
  }

  async put(record: RuleRecord, options: WriteOptions): Promise<PutOutcome> {
    assertStorableRecord(record);
    return this.lock.withWrite(() => {
      if (options.beforeCreate && !this.records.get(record.tenant, record.name)) options.beforeCreate(this.records.count(record.tenant));
      const previous = this.records.set(record);
      this.emitter.emit({ kind: 'ruleset.put', record, previous, origin: options.origin });
      return previous ? { created: false, previous } : { created: true };
    });
  }

  exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.lock.withWrite(fn);
  }

  async delete(tenant: string, name: string, options: WriteOptions): Promise<RuleRecord | undefined> {
    assertValidTenant(tenant);
    assertValidName(name);
    return this.lock.withWrite(() => {
      const previous = this.records.delete(tenant, name);
      if (previous) this.emitter.emit({ kind: 'ruleset.delete', tenant, name, previous, origin: options.origin });
      return previous;
    });
  }

  /** Takes the read lock within `timeoutMs`; nothing to write in memory mode. */
  async probe(timeoutMs: number): Promise<void> {
    const release = await this.lock.acquireRead(timeoutMs);
    release();
  }

  subscribe(listener: StoreListener): () => void {
    return this.emitter.subscribe(listener);
  }
}
