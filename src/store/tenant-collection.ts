/**
 * The tenants collection (DECISIONS.md 8), the store's second collection beside the rulesets:
 * the tenant records in memory, read synchronously, changed through the tenant store
 * (tenant-store.ts: serialized writes, `tenants.json` first) by the API, the broker, the watcher
 * and the start-up load, and emitted as `tenant.*` changes of the one change stream (change.ts).
 *
 * The `default` tenant always exists (DEFAULT_TENANT_RECORD until it is changed) and cannot be
 * removed: removing it resets it. An unchanged record emits nothing.
 */
import type { ChangeListener, TenantChangeEvent } from './change.js';
import { Emitter } from './emitter.js';
import { DEFAULT_TENANT, type Origin } from './record.js';
import { DEFAULT_TENANT_RECORD, sameRecord, type TenantRecord } from './tenant-record.js';
import type { ChangeSource } from './types.js';

/** The tenants collection in memory (see the module comment). */
export class TenantCollection implements ChangeSource<TenantChangeEvent> {
  private readonly records = new Map<string, TenantRecord>([[DEFAULT_TENANT, DEFAULT_TENANT_RECORD]]);
  private readonly emitter: Emitter<TenantChangeEvent>;

  /** `onListenerError`: called when a listener throws (the error is then ignored). */
  constructor(onListenerError?: (err: unknown) => void) {
    this.emitter = new Emitter<TenantChangeEvent>(onListenerError);
  }

  /** The record of a tenant (enabled or not), or undefined. */
  get(id: string): TenantRecord | undefined {
    return this.records.get(id);
  }

  /** Every record, `default` included, sorted by id. */
  list(): TenantRecord[] {
    return [...this.records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The records to persist: every tenant except an unchanged `default`. */
  persistable(): TenantRecord[] {
    return this.list().filter((r) => r.id !== DEFAULT_TENANT || !sameRecord(r, DEFAULT_TENANT_RECORD));
  }

  /** Creates or replaces a record. Unchanged records emit nothing; returns whether it changed. */
  set(record: TenantRecord, origin: Origin): boolean {
    const previous = this.records.get(record.id);
    if (previous && sameRecord(previous, record)) return false;
    this.records.set(record.id, record);
    this.emitter.emit(previous ? { kind: 'tenant.put', record, previous, origin } : { kind: 'tenant.put', record, origin });
    return true;
  }

  /**
   * Removes a tenant; returns the removed record. Removing `default` resets it to
   * DEFAULT_TENANT_RECORD instead (it always exists).
   */
  remove(id: string, origin: Origin): TenantRecord | undefined {
    const previous = this.records.get(id);
    if (id === DEFAULT_TENANT) {
      this.set(DEFAULT_TENANT_RECORD, origin);
      return previous;
    }
    if (!previous) return undefined;
    this.records.delete(id);
    this.emitter.emit({ kind: 'tenant.delete', id, previous, origin });
    return previous;
  }

  /**
   * Makes the collection hold exactly `records` (plus `default`), emitting one change per
   * difference; returns the number of changes. Used by the start-up load and the watcher.
   */
  replaceAll(records: readonly TenantRecord[], origin: Origin): number {
    const next = new Map(records.map((r) => [r.id, r]));
    if (!next.has(DEFAULT_TENANT)) next.set(DEFAULT_TENANT, DEFAULT_TENANT_RECORD);
    let changes = 0;
    for (const id of [...this.records.keys()]) {
      if (!next.has(id) && this.remove(id, origin)) changes++;
    }
    for (const record of next.values()) if (this.set(record, origin)) changes++;
    return changes;
  }

  subscribe(listener: ChangeListener<TenantChangeEvent>): () => void {
    return this.emitter.subscribe(listener);
  }
}
