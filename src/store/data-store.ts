/**
 * Reference data (EXTENSIONS.md 3 "Reference data", docs/expressions.md "Reference data"):
 * named JSON documents per tenant, held in memory and, with a rules directory, persisted as
 *
 * ```
 * <dir>/data/<name>.json                  a dataset of the default tenant
 * <dir>/tenants/<id>/data/<name>.json     a dataset of any other tenant
 * ```
 *
 * (layout.ts `tenantDir`; the rule file scan and the watcher ignore these directories). Every
 * file is written with the one atomic writer (atomic-write.ts) before memory changes, and the
 * files are read back at start (`load`). Writes are serialized. A dataset's version is the first
 * 16 hex digits of the SHA-256 of its compact JSON, so it survives a restart and is the same on
 * every instance that holds the same content (docs/decisions.md "Reference data").
 *
 * Reads are synchronous: `snapshot(tenant)` is the per-tenant map that executions read (one
 * frozen map, rebuilt at each change of that tenant, so an execution never sees a half change).
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue } from '../expr/ast.js';
import type { DataSnapshot } from '../expr/data-ref.js';
import { isValidRulesetName } from '../ruleset/model.js';
import { atomicWrite, fsyncDir, isTempFileName } from './atomic-write.js';
import { Emitter, type StoreLogger } from './emitter.js';
import { TENANTS_DIR, tenantDir } from './layout.js';
import { DEFAULT_TENANT } from './record.js';

/** Directory of a tenant's datasets, inside its tenant directory. */
export const DATA_DIR = 'data';

/** One stored dataset. */
export interface DataRecord {
  readonly tenant: string;
  readonly name: string;
  /** The document (deep-frozen). */
  readonly value: JsonValue;
  /** UTF-8 bytes of its compact JSON (what the file holds). */
  readonly bytes: number;
  /** First 16 hex digits of the SHA-256 of its compact JSON. */
  readonly version: string;
}

/** A change of the datasets (emitted after it is applied). */
export type DataChange =
  | { readonly kind: 'data.put'; readonly record: DataRecord; readonly origin: string }
  | { readonly kind: 'data.delete'; readonly tenant: string; readonly name: string; readonly origin: string };

/** Options of the data store. */
export interface DataStoreOptions {
  /** Rules directory; null: memory only. */
  readonly rulesDir: string | null;
  readonly logger?: StoreLogger;
}

/** Throws unless `name` is a valid dataset name (the ruleset name rule, DECISIONS.md 1). */
export function assertValidDataName(name: unknown): asserts name is string {
  if (!isValidRulesetName(name)) throw new Error(`invalid dataset name: ${JSON.stringify(String(name))}`);
}

/** The file of a dataset. */
export function dataPath(rulesDir: string, tenant: string, name: string): string {
  assertValidDataName(name);
  return join(tenantDir(rulesDir, tenant), DATA_DIR, `${name}.json`);
}

/** Builds the record of `value` (compact JSON, size, version); the value is deep-frozen. */
export function dataRecord(tenant: string, name: string, value: JsonValue): DataRecord {
  const text = JSON.stringify(value);
  return Object.freeze({ tenant, name, value: deepFreeze(value), bytes: Buffer.byteLength(text), version: versionOf(text) });
}

function versionOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

const EMPTY: DataSnapshot = new Map();

/** The datasets of every tenant. */
export class DataStore {
  private readonly byTenant = new Map<string, Map<string, DataRecord>>();
  private readonly snapshots = new Map<string, DataSnapshot>();
  private readonly emitter: Emitter<DataChange>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DataStoreOptions) {
    this.emitter = new Emitter<DataChange>((err) => options.logger?.warn({ err: String(err) }, 'data change listener failed'));
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

  /** Every dataset of every tenant (sync snapshot). */
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
  async put(record: DataRecord, origin = 'api', persist = true): Promise<boolean> {
    assertValidDataName(record.name);
    return this.serialized(async () => {
      const dir = this.options.rulesDir;
      if (dir !== null && persist) {
        const target = dataPath(dir, record.tenant, record.name);
        await mkdir(join(tenantDir(dir, record.tenant), DATA_DIR), { recursive: true });
        await atomicWrite(target, JSON.stringify(record.value));
      }
      const created = this.get(record.tenant, record.name) === undefined;
      this.set(record);
      this.emitter.emit({ kind: 'data.put', record, origin });
      return created;
    });
  }

  /** Removes the dataset (file first, then memory); resolves to false when it did not exist. */
  async delete(tenant: string, name: string, origin = 'api', persist = true): Promise<boolean> {
    assertValidDataName(name);
    return this.serialized(async () => {
      if (this.get(tenant, name) === undefined) return false;
      const dir = this.options.rulesDir;
      if (dir !== null && persist) {
        const target = dataPath(dir, tenant, name);
        await rm(target, { force: true });
        await fsyncDir(join(tenantDir(dir, tenant), DATA_DIR)).catch(() => undefined);
      }
      const m = this.byTenant.get(tenant);
      m?.delete(name);
      this.rebuild(tenant);
      this.emitter.emit({ kind: 'data.delete', tenant, name, origin });
      return true;
    });
  }

  /**
   * Reads every dataset file of the rules dir (the default tenant's and each tenant's).
   * A file that is not valid JSON, or not named like a dataset, is skipped and reported.
   */
  async load(): Promise<{ loaded: number; skipped: { path: string; reason: string }[] }> {
    const dir = this.options.rulesDir;
    const skipped: { path: string; reason: string }[] = [];
    let loaded = 0;
    if (dir === null) return { loaded, skipped };
    const tenants = [DEFAULT_TENANT, ...(await names(join(dir, TENANTS_DIR))).filter((t) => isValidRulesetName(t) && t !== DEFAULT_TENANT)];
    for (const tenant of tenants) {
      const dataDir = join(tenantDir(dir, tenant), DATA_DIR);
      for (const file of await names(dataDir)) {
        if (file.startsWith('.') || isTempFileName(file)) continue;
        const path = join(dataDir, file);
        const name = file.endsWith('.json') ? file.slice(0, -'.json'.length) : '';
        if (!isValidRulesetName(name)) {
          skipped.push({ path, reason: 'not a dataset file (<name>.json)' });
          continue;
        }
        try {
          const value = JSON.parse(await readFile(path, 'utf8')) as JsonValue;
          this.set(dataRecord(tenant, name, value));
          loaded++;
        } catch (err) {
          skipped.push({ path, reason: err instanceof Error ? err.message : String(err) });
        }
      }
    }
    return { loaded, skipped };
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
    this.snapshots.set(tenant, new Map([...m.values()].map((r) => [r.name, r.value])));
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Entry names of a directory; none when it does not exist. */
async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
}

function deepFreeze(v: JsonValue): JsonValue {
  if (typeof v === 'object' && v !== null) {
    for (const x of Array.isArray(v) ? v : Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
