/**
 * The tenants collection with its persistence: the store's second collection beside the
 * rulesets (DECISIONS.md 8), under the same kinds of capability: synchronous reads, serialized
 * writes that persist before they apply, a change stream, and reconcile-from-disk.
 *
 * - Reads (`get`, `list`) come from the in-memory collection (tenant-collection.ts), which also
 *   emits the `tenant.*` changes of the one change stream (change.ts).
 * - Writes run one at a time. A write persists `tenants.json` first (atomically, tenant-file.ts;
 *   memory-only mode has no file) and then changes memory, so memory never holds what the disk
 *   does not; a write that leaves the records unchanged writes nothing and emits nothing.
 *   A failed file write of an API change is thrown (nothing changes); a synchronized change is
 *   applied in memory even when the file cannot be written (the failure is logged), as the
 *   broker has already committed it.
 * - `reload` makes the collection match the file (the watcher saw it change).
 */
import type { Logger } from '../log.js';
import type { ChangeListener, TenantChangeEvent } from './change.js';
import { DEFAULT_TENANT, type Origin } from './record.js';
import type { TenantCollection } from './tenant-collection.js';
import type { TenantFile } from './tenant-file.js';
import { DEFAULT_TENANT_RECORD, sameRecord, type TenantRecord } from './tenant-record.js';
import type { ChangeSource } from './types.js';

/** Options of a tenant write. */
export interface TenantWriteOptions {
  readonly origin: Origin;
  /** Write `tenants.json` (when there is one). Default true. */
  readonly persist?: boolean;
  /**
   * Called with the current record (undefined when absent) inside the write's turn, before
   * anything is written; throwing refuses the write. A precondition checked here holds however
   * many writes are in flight (an id created twice at once: one wins).
   */
  readonly check?: (previous: TenantRecord | undefined) => void;
}

/** The tenants collection with `tenants.json` (see the module comment). */
export class TenantStore implements ChangeSource<TenantChangeEvent> {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly collection: TenantCollection,
    /** `tenants.json`, or null in memory-only mode. */
    readonly file: TenantFile | null,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /** The record of a tenant (enabled or not), or undefined. */
  get(id: string): TenantRecord | undefined {
    return this.collection.get(id);
  }

  /** Every record, `default` included, sorted by id. */
  list(): TenantRecord[] {
    return this.collection.list();
  }

  /** The records `tenants.json` holds: every tenant except an unchanged `default`. */
  persistable(): TenantRecord[] {
    return this.collection.persistable();
  }

  /** Creates or replaces a record; resolves to whether it changed. */
  put(record: TenantRecord, options: TenantWriteOptions): Promise<boolean> {
    return this.serial(async () => {
      const previous = this.collection.get(record.id);
      options.check?.(previous);
      if (previous !== undefined && sameRecord(previous, record)) return false;
      await this.persist(
        this.persistable()
          .filter((r) => r.id !== record.id)
          .concat(record),
        options,
      );
      return this.collection.set(record, options.origin);
    });
  }

  /**
   * Removes a tenant (`default` is reset to its defaults instead: it always exists); resolves
   * to the removed record, or undefined when there was nothing to remove.
   */
  delete(id: string, options: TenantWriteOptions): Promise<TenantRecord | undefined> {
    return this.serial(async () => {
      const previous = this.collection.get(id);
      options.check?.(previous);
      if (previous === undefined || (id === DEFAULT_TENANT && sameRecord(previous, DEFAULT_TENANT_RECORD))) return undefined;
      await this.persist(
        this.persistable().filter((r) => r.id !== id),
        options,
      );
      return this.collection.remove(id, options.origin);
    });
  }

  /**
   * Re-reads `tenants.json` and makes the collection match it (a missing file: only `default`);
   * resolves to the number of changes. Throws, changing nothing, when the file is broken.
   */
  reload(origin: Origin): Promise<number> {
    const file = this.file;
    if (file === null) return Promise.resolve(0);
    return this.serial(async () => this.collection.replaceAll((await file.read()) ?? [], origin));
  }

  subscribe(listener: ChangeListener<TenantChangeEvent>): () => void {
    return this.collection.subscribe(listener);
  }

  private async persist(records: TenantRecord[], options: TenantWriteOptions): Promise<void> {
    if (this.file === null || options.persist === false) return;
    if (options.origin === 'api') {
      await this.file.write(records);
      return;
    }
    try {
      await this.file.write(records);
    } catch (err) {
      this.logger?.warn({ err: (err as Error)?.message ?? String(err) }, 'cannot write tenants.json; the change is applied in memory');
    }
  }

  /** Runs `fn` after every earlier write. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
