/**
 * Reference data (EXTENSIONS.md 3 "Reference data", docs/expressions.md "Reference data"):
 * named JSON documents per tenant, held in memory and, with a rules directory, persisted as
 *
 * ```
 * <dir>/data/<name>.json                  a dataset of the default tenant
 * <dir>/tenants/<id>/data/<name>.json     a dataset of any other tenant
 * ```
 *
 * (layout.ts `tenantDir`, ./data-files.ts; the rule file scan ignores these directories, the
 * watcher reports them as data files). Every file is written with the one atomic writer
 * (atomic-write.ts) before memory changes, and the files are read back at start (`load`). Writes
 * are serialized. A dataset's version is the first 16 hex digits of the SHA-256 of its compact
 * JSON, so it survives a restart and is the same on every instance that holds the same content
 * (docs/decisions.md "Reference data").
 *
 * Every applied change is emitted on the one change stream (`data.put` / `data.delete`,
 * ./change.ts), which sync publishes (docs/data-sync.md). For the watcher, each own write and
 * delete is recorded in the rules dir's record of own changes (./own-files.ts, shared with the
 * rule store): a file holding exactly the version this instance last wrote is its own write
 * (echo), and a change from the watcher carries the token of its read, so one that an own change
 * of the file has overtaken is refused under the store's serialization (`StaleRead`) and read
 * again rather than put over the change.
 *
 * Reads are synchronous: `snapshot(tenant)` is the per-tenant map that executions read (one
 * frozen map, rebuilt at each change of that tenant, so an execution never sees a half change).
 */
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JsonValue } from '../expr/ast.js';
import type { DataSnapshot } from '../expr/data-ref.js';
import { isValidRulesetName } from '../ruleset/model.js';
import { atomicWrite, fsyncDir } from './atomic-write.js';
import type { DataChange } from './change.js';
import { dataFilePath, maxDataFileBytes, readDataFile, scanDataFiles } from './data-files.js';
import { dataRecord, type DataRecord } from './data-record.js';
import { Emitter, type StoreLogger } from './emitter.js';
import type { Origin } from './record.js';
import type { FileToken, OwnFiles } from './own-files.js';

export { DATA_DIR } from './data-files.js';
export { dataRecord, type DataRecord } from './data-record.js';
export type { DataChange } from './change.js';

/** Options of the data store. */
export interface DataStoreOptions {
  /** Rules directory; null: memory only. */
  readonly rulesDir: string | null;
  /**
   * The rules dir's record of own changes (the rule store's `files.own`); required with a rules
   * dir, so that the watcher's tokens and this store's writes meet in one record.
   */
  readonly own?: OwnFiles;
  /** `--max-data-bytes`: a file over it is skipped at load. Default: no limit. */
  readonly maxBytes?: number;
  readonly logger?: StoreLogger;
}

/** Throws unless `name` is a valid dataset name (the ruleset name rule, DECISIONS.md 1). */
export function assertValidDataName(name: unknown): asserts name is string {
  if (!isValidRulesetName(name)) throw new Error(`invalid dataset name: ${JSON.stringify(String(name))}`);
}

/** The file of a dataset. */
export function dataPath(rulesDir: string, tenant: string, name: string): string {
  assertValidDataName(name);
  return dataFilePath(rulesDir, tenant, name);
}

const EMPTY: DataSnapshot = new Map();

/** The datasets of every tenant. */
export class DataStore {
  private readonly byTenant = new Map<string, Map<string, DataRecord>>();
  private readonly snapshots = new Map<string, DataSnapshot>();
  private readonly emitter: Emitter<DataChange>;
  private readonly own: OwnFiles | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DataStoreOptions) {
    if (options.rulesDir !== null && options.own === undefined) throw new Error('a data store with a rules dir needs the rule store’s record of own changes');
    this.own = options.own;
    this.emitter = new Emitter<DataChange>((err) => options.logger?.warn({ err: String(err) }, 'data change listener failed'));
  }

  /** The rules dir, or null (memory only). */
  get rulesDir(): string | null {
    return this.options.rulesDir;
  }

  /** The dataset, or undefined. */
  get(tenant: string, name: string): DataRecord | undefined {
    return this.byTenant.get(tenant)?.get(name);
  }

  /** The tenant's datasets sorted by name. */
  list(tenant: string): DataRecord[] {
    const m = this.byTenant.get(tenant);
    return m === undefined ? [] : [...m.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Every dataset of every tenant (sync snapshot), by tenant then name. */
  all(): DataRecord[] {
    return [...this.byTenant.keys()].sort().flatMap((t) => this.list(t));
  }

  /** What `@name` reads for the tenant: its datasets by name (an empty map when none). */
  snapshot(tenant: string): DataSnapshot {
    return this.snapshots.get(tenant) ?? EMPTY;
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe(listener: (change: DataChange) => void): () => void {
    return this.emitter.subscribe(listener);
  }

  /** Stores the record (file first, then memory); resolves to true when it was created. */
  async put(record: DataRecord, origin: Origin = 'api', persist = true): Promise<boolean> {
    assertValidDataName(record.name);
    return this.serialized(async () => {
      const previous = this.get(record.tenant, record.name);
      await this.write(record, persist);
      this.set(record);
      this.emitter.emit(previous ? { kind: 'data.put', record, previous, origin } : { kind: 'data.put', record, origin });
      return previous === undefined;
    });
  }

  /**
   * Stores the record unless the store holds that very content (same version) when its turn
   * comes (sync and the watcher: a change that arrives twice is applied once). `expect` (the
   * watcher): the token taken before the file was read; `StaleRead` when an own change of the
   * file has landed since (./own-files.ts).
   */
  async apply(record: DataRecord, origin: Origin, persist: boolean, expect?: FileToken): Promise<'applied' | 'unchanged'> {
    assertValidDataName(record.name);
    return this.serialized(async () => {
      this.own?.check(expect);
      const previous = this.get(record.tenant, record.name);
      if (previous?.version === record.version) return 'unchanged';
      await this.write(record, persist);
      this.set(record);
      this.emitter.emit(previous ? { kind: 'data.put', record, previous, origin } : { kind: 'data.put', record, origin });
      return 'applied';
    });
  }

  /**
   * Removes the dataset (file first, then memory); resolves to false when it did not exist.
   * `expect`: the watcher's token (see `apply`).
   */
  async delete(tenant: string, name: string, origin: Origin = 'api', persist = true, expect?: FileToken): Promise<boolean> {
    assertValidDataName(name);
    return this.serialized(async () => {
      this.own?.check(expect);
      const previous = this.get(tenant, name);
      if (previous === undefined) return false;
      const dir = this.options.rulesDir;
      if (dir !== null && persist) {
        const target = dataPath(dir, tenant, name);
        try {
          await rm(target, { force: true });
        } catch (err) {
          this.own?.failed(target);
          throw err;
        }
        this.own?.changed(target, undefined);
        await fsyncDir(dirname(target)).catch(() => undefined);
      }
      const m = this.byTenant.get(tenant);
      m?.delete(name);
      this.rebuild(tenant);
      this.emitter.emit({ kind: 'data.delete', tenant, name, previous, origin });
      return true;
    });
  }

  /**
   * Reads every dataset file of the rules dir (the default tenant's and each tenant's).
   * A file that is not valid JSON, not named like a dataset, or over `maxBytes` is skipped and
   * reported.
   */
  async load(): Promise<{ loaded: number; skipped: { path: string; reason: string }[] }> {
    const dir = this.options.rulesDir;
    let loaded = 0;
    if (dir === null) return { loaded, skipped: [] };
    const { files, skipped } = await scanDataFiles(dir);
    for (const file of files) {
      try {
        const value = await readDataFile(file.path, maxDataFileBytes(this.options.maxBytes));
        if (value === undefined) continue;
        const record = dataRecord(file.tenant, file.name, value);
        const reason = this.oversized(record);
        if (reason !== undefined) throw new Error(reason);
        this.set(record);
        loaded++;
      } catch (err) {
        skipped.push({ path: file.path, reason: err instanceof Error ? err.message : String(err) });
      }
    }
    skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { loaded, skipped };
  }

  /** Why a record is over `maxBytes`, or undefined when it is not. */
  oversized(record: DataRecord): string | undefined {
    const max = this.options.maxBytes;
    return max !== undefined && record.bytes > max ? `dataset is ${record.bytes} bytes of JSON; the limit is ${max} (--max-data-bytes)` : undefined;
  }

  private async write(record: DataRecord, persist: boolean): Promise<void> {
    const dir = this.options.rulesDir;
    if (dir === null || !persist) return;
    const target = dataPath(dir, record.tenant, record.name);
    try {
      await mkdir(dirname(target), { recursive: true });
      await atomicWrite(target, JSON.stringify(record.value));
    } catch (err) {
      this.own?.failed(target);
      throw err;
    }
    // NOTE: a watcher that reads the new file before this line is stale by its token (taken
    // before the read, overtaken here) and reads again, finding the file its own.
    this.own?.changed(target, record.version);
  }

  private set(record: DataRecord): void {
    let m = this.byTenant.get(record.tenant);
    if (m === undefined) this.byTenant.set(record.tenant, (m = new Map()));
    m.set(record.name, record);
    this.rebuild(record.tenant);
  }

  private rebuild(tenant: string): void {
    const m = this.byTenant.get(tenant);
    if (m === undefined || m.size === 0) {
      this.byTenant.delete(tenant);
      this.snapshots.delete(tenant);
      return;
    }
    this.snapshots.set(tenant, new Map([...m.values()].map((r) => [r.name, r.value as JsonValue])));
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
