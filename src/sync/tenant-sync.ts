/**
 * Tenant records over the broker (multi-tenancy, DECISIONS.md 7): every tenant change is a
 * `TenantConfigChanged {type, tenant_id, tenant}` on `{prefix}.tenants` (`tenant` null when the
 * tenant was deleted).
 *
 * All tenants share one subject, so "the latest event per subject" (the rule bootstrap) shows
 * only one of them. Instead both sides read every retained event of `{prefix}.tenants` and
 * fold them by tenant id (`readTenantStream`): a reader applies the folded state at bootstrap,
 * and the writer's full-state pass publishes what the stream does not already show (changed,
 * missing or old records, and tombstones for tenants it no longer holds), like it does for
 * rules. NOTE: the stream keeps a bounded number of messages per subject (BrokerLink); with
 * more tenants than that, a late reader learns the rest at the writer's next full-state pass.
 */
import type { SyncClock } from './clock.js';
import { decodeEnvelope, tenantsSubject, type TenantConfigChangedEvent } from './events.js';
import { readLatestPerSubject } from './latest-per-subject.js';
import type { JetStreamLike } from './nats-api.js';

/** A tenant record as sync sees it (the registry's record; only `id` is read here). */
export type TenantRecordLike = object & { readonly id: string };

/** The latest retained event of one tenant. */
export interface TenantStreamEntry {
  readonly event: TenantConfigChangedEvent;
  /** JSON of `event.tenant` (for comparison), or null for a tombstone. */
  readonly json: string | null;
  /** When the stream stored it (ms since the epoch). */
  readonly atMs: number;
}

/** The `TenantConfigChanged` of a record (or of a deletion). */
export function tenantChangedOf(id: string, record: TenantRecordLike | null): TenantConfigChangedEvent {
  return { type: 'TenantConfigChanged', tenant_id: id, tenant: record === null ? null : (record as unknown as Record<string, unknown>) };
}

/**
 * Reads every retained event of `{prefix}.tenants`, in stream order, folded by tenant id (the
 * latest wins). Messages of `skipInstance` and undecodable ones are left out.
 */
export async function readTenantStream(options: {
  readonly js: JetStreamLike;
  readonly prefix: string;
  readonly clock: SyncClock;
  readonly skipInstance?: string;
}): Promise<{ entries: Map<string, TenantStreamEntry>; lastSeq: number }> {
  const entries = new Map<string, TenantStreamEntry>();
  const read = await readLatestPerSubject({
    js: options.js,
    prefix: options.prefix,
    clock: options.clock,
    filter: tenantsSubject(options.prefix),
    deliverPolicy: 'all',
    handle: (msg) => {
      try {
        const { instance_id, event } = decodeEnvelope(msg.data);
        if (event.type !== 'TenantConfigChanged' || instance_id === options.skipInstance) return;
        entries.set(event.tenant_id, { event, json: event.tenant === null ? null : JSON.stringify(event.tenant), atMs: msg.info.timestampNanos / 1e6 });
      } catch {
        /* not ours to judge here; the consumer logs invalid messages */
      }
    },
  });
  return { entries, lastSeq: read.lastSeq };
}

/**
 * The tenant events of a full-state pass: a put for every held record the stream does not show
 * with the same content younger than `refreshMs`, and a tombstone for every tenant the stream
 * shows as live that is no longer held.
 */
export function tenantFullState(
  held: readonly TenantRecordLike[],
  stream: ReadonlyMap<string, TenantStreamEntry>,
  nowMs: number,
  refreshMs: number,
): TenantConfigChangedEvent[] {
  const out: TenantConfigChangedEvent[] = [];
  const ids = new Set(held.map((r) => r.id));
  for (const [id, entry] of stream) {
    if (entry.json !== null && !ids.has(id)) out.push(tenantChangedOf(id, null));
  }
  for (const record of held) {
    const seen = stream.get(record.id);
    if (seen && seen.json === JSON.stringify(record) && nowMs - seen.atMs < refreshMs) continue;
    out.push(tenantChangedOf(record.id, record));
  }
  return out;
}
