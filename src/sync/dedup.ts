/**
 * De-duplication on a reader (SPEC.md 8: "an instance skips messages from itself" and "skips
 * duplicates"). A message is skipped when
 *
 * - it was published by this instance (`own`),
 * - its stream sequence is not above the last one applied for the same rule (`stale`): a
 *   redelivery, or an older event replayed after a newer one was already applied (the
 *   bootstrap replays the latest event per subject before the durable consumer resumes),
 * - it carries exactly the content already applied and the store still holds the very record
 *   that was applied then (`duplicate`): the writer's periodic re-publication, skipped without
 *   parsing or compiling.
 *
 * Anything else is applied; the façade then still skips a ruleset whose version label and
 * content equal the local copy (DECISIONS.md 7), e.g. after a restart with a rules dir, and a
 * dataset whose version (content hash) equals the local one.
 *
 * Rulesets and datasets are kept apart (a dataset may have a ruleset's name): the key is the
 * collection, the tenant and the name.
 */
import { eventContent, resourceKind, type ResourceKind, type SyncEnvelope } from './events.js';

/** The store's record of the event's ruleset or dataset (compared by identity only). */
export type HeldRecord = object;

/** What to do with a message. */
export type DedupVerdict = 'apply' | 'own' | 'stale' | 'duplicate';

interface KeyState {
  seq: number;
  /** `ruleset_json` of the last applied put, or null after a delete. */
  content: string | null;
  /** The store's record right after the apply (undefined after a delete). */
  record: HeldRecord | undefined;
}

/** Per-rule memory of what was applied (see the module comment). */
export class EventDeduper {
  private readonly keys = new Map<string, KeyState>();

  constructor(private readonly instanceId: string) {}

  /** Highest stream sequence applied for a rule (or, with `kind` 'data', a dataset), or 0. */
  lastSeq(tenant: string, name: string, kind: ResourceKind = 'ruleset'): number {
    return this.keys.get(keyOf(kind, tenant, name))?.seq ?? 0;
  }

  /**
   * Classifies a message. `current` is the store's record of that rule (or dataset) right now.
   * Tenant events are never `stale` or `duplicate` (they have no rule key).
   */
  check(envelope: SyncEnvelope, seq: number, current: HeldRecord | undefined): DedupVerdict {
    if (envelope.instance_id === this.instanceId) return 'own';
    const event = envelope.event;
    if (event.type === 'TenantConfigChanged') return 'apply';
    const state = this.keys.get(keyOf(resourceKind(event), event.tenant_id, event.name));
    if (!state) return 'apply';
    if (seq <= state.seq) return 'stale';
    const content = contentOf(event);
    if (content !== null && state.content === content && state.record !== undefined && state.record === current) return 'duplicate';
    if (content === null && state.content === null && current === undefined) return 'duplicate';
    return 'apply';
  }

  /** Records that the message at `seq` was handled; `current` is the store's record afterwards. */
  applied(envelope: SyncEnvelope, seq: number, current: HeldRecord | undefined): void {
    const event = envelope.event;
    if (event.type === 'TenantConfigChanged') return;
    const key = keyOf(resourceKind(event), event.tenant_id, event.name);
    const content = contentOf(event);
    const prev = this.keys.get(key);
    this.keys.set(key, { seq: Math.max(seq, prev?.seq ?? 0), content, record: current });
  }
}

function keyOf(kind: ResourceKind, tenant: string, name: string): string {
  return `${kind}\u0000${tenant}\u0000${name}`;
}

/** `ruleset_json` / `data_json` / `shadow_json` of a put; null for a deletion. */
function contentOf(event: SyncEnvelope['event']): string | null {
  return event.type === 'TenantConfigChanged' ? null : eventContent(event);
}
