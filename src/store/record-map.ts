/**
 * The in-memory index of both stores: tenant → name → record. Every read is synchronous and
 * `get` is two Map lookups (hot path). Mutations are done by the stores under their write lock.
 */
import { assertValidName, assertValidTenant } from './layout.js';
import type { RuleRecord } from './types.js';

/** Tenant → name → record, with the read operations of `RuleStore`. */
export class RecordMap {
  private byTenant = new Map<string, Map<string, RuleRecord>>();

  /** The record, or undefined. Never throws (unknown or invalid keys simply miss). */
  get(tenant: string, name: string): RuleRecord | undefined {
    return this.byTenant.get(tenant)?.get(name);
  }

  /** Records of a tenant sorted by name (code point order, independent of locale). */
  list(tenant: string): RuleRecord[] {
    const names = this.byTenant.get(tenant);
    if (!names) return [];
    return [...names.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Number of records of one tenant, or of all tenants. */
  count(tenant?: string): number {
    if (tenant !== undefined) return this.byTenant.get(tenant)?.size ?? 0;
    let total = 0;
    for (const names of this.byTenant.values()) total += names.size;
    return total;
  }

  /** Tenants holding at least one record, sorted. */
  tenants(): string[] {
    return [...this.byTenant.keys()].sort();
  }

  /** Stores `record` under its tenant and name; returns the replaced record. */
  set(record: RuleRecord): RuleRecord | undefined {
    let names = this.byTenant.get(record.tenant);
    if (!names) {
      names = new Map();
      this.byTenant.set(record.tenant, names);
    }
    const previous = names.get(record.name);
    names.set(record.name, record);
    return previous;
  }

  /** Removes a record; returns it. Empty tenants disappear from `tenants()`. */
  delete(tenant: string, name: string): RuleRecord | undefined {
    const names = this.byTenant.get(tenant);
    const previous = names?.get(name);
    if (!names || !previous) return undefined;
    names.delete(name);
    if (names.size === 0) this.byTenant.delete(tenant);
    return previous;
  }

  /** Replaces the whole content in one step (used by `load`). */
  replaceAll(records: Iterable<RuleRecord>): void {
    const next = new Map<string, Map<string, RuleRecord>>();
    for (const record of records) {
      let names = next.get(record.tenant);
      if (!names) {
        names = new Map();
        next.set(record.tenant, names);
      }
      names.set(record.name, record);
    }
    this.byTenant = next;
  }
}

/**
 * Throws unless `record` can be stored: valid tenant id and name (DECISIONS.md 1, defence in
 * depth: the service validates first) and `doc.config.name` equal to `name`, so that a stored
 * file always loads back under the same name.
 */
export function assertStorableRecord(record: RuleRecord): void {
  assertValidTenant(record.tenant);
  assertValidName(record.name);
  const docName: unknown = record.doc?.config?.name;
  if (docName !== record.name) {
    throw new Error(`record name ${JSON.stringify(record.name)} differs from config.name ${JSON.stringify(docName)}`);
  }
}
