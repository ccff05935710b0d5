/**
 * The writer's side of broker sync: every change of the façade's one change stream (create,
 * update, delete, rollback: changes of origin `api`, and `watch` for files edited by hand in
 * the writer's rules dir; tenant changes in multi-tenancy mode) becomes its wire event
 * (`RulePut`, `RuleDeleted`, `TenantConfigChanged`: wire-changes.ts) in the ordered outbox,
 * which is sent while the broker is reachable and buffered while it is not.
 *
 * Bootstrap design (docs/operations.md, "How a reader converges"): after every (re)connect and
 * every `republishIntervalMs`, the writer makes the stream show its full state. It reads the
 * latest event of every subject, then publishes a `RuleDeleted` for every rule the stream
 * still shows as live but that the writer no longer holds, and a `RulePut` for every rule it
 * holds unless the stream's latest event for it already has that exact content and is younger
 * than half the stream's max age (at most a day). So the latest event of every subject matches
 * the writer's state and never expires; a reader that replays the latest event per subject
 * rebuilds the writer's full state whatever the age of the rules, and an idle writer adds
 * almost nothing to the stream. The state published is the façade's one `snapshot()`.
 */
import { randomBytes } from 'node:crypto';
import type { Change } from '../store/change.js';
import type { TenantRecord } from '../store/tenant-record.js';
import type { Origin, RuleRecord } from '../store/types.js';
import type { BrokerLink, BrokerSession } from './broker-link.js';
import { errorText } from './broker-link.js';
import type { SyncClock, TimerHandle } from './clock.js';
import { STREAM_NAME, decodeEnvelope, encodeEnvelope, eventSubject, ruleDeletedOf, rulePutOf, type SyncEvent } from './events.js';
import { readLatestPerSubject } from './latest-per-subject.js';
import { PublishQueue } from './publish-queue.js';
import { readTenantStream, tenantFullState } from './tenant-sync.js';
import type { SyncTarget } from './sync-types.js';
import { wireEventOf } from './wire-changes.js';
import type { Logger } from '../log.js';

/** Options of `BrokerPublisher`. */
export interface BrokerPublisherOptions {
  readonly link: BrokerLink;
  readonly target: SyncTarget;
  readonly instanceId: string;
  readonly prefix: string;
  readonly clock: SyncClock;
  readonly logger: Logger;
  /** Full-state re-publication period (ms); 0 disables the periodic one. */
  readonly republishIntervalMs: number;
  /** Change origins that are published. Default `api` and `watch`. */
  readonly origins?: ReadonlySet<Origin>;
  /** Outbox bound. Default 100 000 messages. */
  readonly maxBuffered?: number;
}

/** Publisher state for `/health`. */
export interface PublisherStatus {
  readonly pending: number;
  readonly published: number;
  readonly dropped: number;
  readonly last_published_at: string | null;
  readonly last_full_state_at: string | null;
}

/** The writer's publisher (see the module comment). */
export class BrokerPublisher {
  private readonly queue: PublishQueue;
  private readonly bootId = randomBytes(4).toString('hex');
  private counter = 0;
  private published = 0;
  private dropped = 0;
  private lastPublishedAt: number | null = null;
  private lastFullStateAt: number | null = null;
  private unsubscribe: (() => void) | undefined;
  private timer: TimerHandle | undefined;
  private resyncing: Promise<void> | undefined;
  private resyncAgain = false;
  private closed = false;
  private readonly origins: ReadonlySet<Origin>;

  constructor(private readonly options: BrokerPublisherOptions) {
    this.origins = options.origins ?? new Set<Origin>(['api', 'watch']);
    const { link, logger } = options;
    this.queue = new PublishQueue({
      clock: options.clock,
      ...(options.maxBuffered !== undefined ? { maxBuffered: options.maxBuffered } : {}),
      send: async (m) => {
        const session = link.current;
        if (!session) throw new Error('broker not connected');
        await session.js.publish(m.subject, m.data, { msgID: m.msgId, timeout: link.requestTimeoutMs });
      },
      onSent: () => {
        this.published++;
        this.lastPublishedAt = options.clock.now();
      },
      onSendError: (err, m, attempt) => {
        const log = attempt === 1 ? logger.warn : logger.debug;
        log.call(logger, { subject: m.subject, err: errorText(err), attempt }, 'sync publish failed; retrying in order');
      },
      onDropped: (count) => {
        this.dropped += count;
        logger.warn(
          { dropped: count, limit: options.maxBuffered ?? 100_000 },
          'sync outbox full; dropped the oldest events (the full state is re-published on reconnect)',
        );
      },
    });
  }

  /** Subscribes to the change stream and to the link; schedules the periodic re-publication. */
  start(): void {
    const { link, target } = this.options;
    this.unsubscribe = target.subscribe((change) => this.onChange(change));
    link.onUp(() => {
      this.queue.setConnected(true);
      void this.resync('connected');
    });
    link.onDown(() => this.queue.setConnected(false));
    this.scheduleRepublish();
  }

  /** State for `/health`. */
  status(): PublisherStatus {
    return {
      pending: this.queue.length,
      published: this.published,
      dropped: this.dropped,
      last_published_at: iso(this.lastPublishedAt),
      last_full_state_at: iso(this.lastFullStateAt),
    };
  }

  /** Resolves when everything enqueued so far was published (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Stops publishing. Events still buffered are dropped (the next start re-publishes the full state). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    await this.queue.close();
    await this.resyncing;
  }

  /** A change (rules; tenants from the API or `tenants.json` edited in a watched dir) becomes its wire event. */
  private onChange(change: Change): void {
    if (!this.origins.has(change.origin)) return;
    this.enqueue(wireEventOf(change));
  }

  private enqueue(event: SyncEvent): void {
    const { instanceId, prefix, clock } = this.options;
    const data = encodeEnvelope({ instance_id: instanceId, event, timestamp_ms: clock.now() });
    this.queue.enqueue({ subject: eventSubject(prefix, event), data, msgId: `${instanceId}.${this.bootId}.${++this.counter}` });
  }

  private scheduleRepublish(): void {
    const every = this.options.republishIntervalMs;
    if (every <= 0 || this.closed) return;
    this.timer = this.options.clock.setTimeout(() => {
      if (this.options.link.current) void this.resync('periodic');
      this.scheduleRepublish();
    }, every);
  }

  /** Publishes the full state (see the module comment); one pass at a time, repeated when asked meanwhile. */
  private async resync(reason: string): Promise<void> {
    if (this.resyncing) {
      this.resyncAgain = true;
      return;
    }
    this.resyncing = (async () => {
      do {
        this.resyncAgain = false;
        const session = this.options.link.current;
        if (!session || this.closed) break;
        try {
          await this.publishFullState(session, reason);
        } catch (err) {
          this.options.logger.warn({ err: errorText(err), reason }, 'full state re-publication failed; retrying in 2 s');
          this.options.clock.setTimeout(() => {
            if (!this.closed && this.options.link.current) void this.resync('retry');
          }, 2000);
        }
      } while (this.resyncAgain && !this.closed);
    })();
    await this.resyncing;
    this.resyncing = undefined;
  }

  private async publishFullState(session: BrokerSession, reason: string): Promise<void> {
    const { target, prefix, clock, logger } = this.options;
    const refreshMs = await this.refreshAgeMs(session);
    const latest = new Map<string, { tenant: string; name: string; json: string | null; atMs: number }>();
    await readLatestPerSubject({
      js: session.js,
      prefix,
      clock,
      handle: (msg) => {
        try {
          const { event } = decodeEnvelope(msg.data);
          if (event.type === 'TenantConfigChanged') return;
          const json = event.type === 'RulePut' ? event.ruleset_json : null;
          latest.set(key(event.tenant_id, event.name), { tenant: event.tenant_id, name: event.name, json, atMs: msg.info.timestampNanos / 1e6 });
        } catch {
          /* not ours to judge here; readers log it */
        }
      },
    });
    // Tenants share one subject: their state is every retained event of it, folded (tenant-sync.ts).
    const tenantStream = target.syncsTenants ? await readTenantStream({ js: session.js, prefix, clock }) : null;
    if (this.closed) return;
    // NOTE: from here on synchronous: the snapshot of the store and the events enqueued by
    // later writes stay in order in the outbox.
    const now = clock.now();
    const tenants: TenantRecord[] = [];
    const records: RuleRecord[] = [];
    for (const entry of target.snapshot()) {
      if (entry.kind === 'tenant.put') tenants.push(entry.record);
      else records.push(entry.record);
    }
    // Tenants first, so that a reader knows a tenant before its rules.
    if (tenantStream) {
      const tenantEvents = tenantFullState(tenants, tenantStream.entries, now, refreshMs);
      for (const event of tenantEvents) this.enqueue(event);
      if (tenantEvents.length > 0) logger.info({ reason, tenants: tenants.length, published: tenantEvents.length }, 'published the tenant state');
    }
    const held = new Set(records.map((r) => key(r.tenant, r.name)));
    let tombstones = 0;
    for (const [k, entry] of latest) {
      if (entry.json === null || held.has(k)) continue;
      this.enqueue(ruleDeletedOf(entry.tenant, entry.name));
      tombstones++;
    }
    let current = 0;
    for (const record of records) {
      const put = rulePutOf(record);
      const seen = latest.get(key(record.tenant, record.name));
      // The stream already shows exactly this content, recently enough: nothing to do.
      if (seen && seen.json === put.ruleset_json && now - seen.atMs < refreshMs) {
        current++;
        continue;
      }
      this.enqueue(put);
    }
    this.lastFullStateAt = now;
    const published = records.length - current;
    const log = published + tombstones > 0 ? logger.info : logger.debug;
    log.call(logger, { reason, rules: records.length, published, tombstones }, 'published the full rule state');
  }

  /**
   * Age after which an unchanged rule is published again: half the stream's max age (capped at
   * a day), so the latest event of a live rule never expires.
   */
  private async refreshAgeMs(session: BrokerSession): Promise<number> {
    const day = 24 * 3600 * 1000;
    try {
      const info = await session.jsm.streams.info(STREAM_NAME);
      const maxAgeMs = (info.config.max_age ?? 0) / 1e6;
      return maxAgeMs > 0 ? Math.min(day, maxAgeMs / 2) : day;
    } catch {
      return 0; // unknown: re-publish everything
    }
  }
}

function key(tenant: string, name: string): string {
  return `${tenant}\u0000${name}`;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
