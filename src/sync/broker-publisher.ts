/**
 * The writer's side of broker sync: every change of the façade's one change stream (create,
 * update, delete, rollback: changes of origin `api`, and `watch` for files edited by hand in
 * the writer's rules dir; tenant changes in multi-tenancy mode; dataset changes) becomes its wire
 * event (`RulePut`, `RuleDeleted`, `TenantConfigChanged`, `DataPut`, `DataDeleted`:
 * wire-changes.ts) in the ordered outbox, which is sent while the broker is reachable and
 * buffered while it is not. An event larger than the broker accepts (`max_payload`, 1 MB by
 * default, while a dataset may reach `--max-data-bytes`) cannot be sent: it is logged as an
 * error, counted (`unsendable` in `/health`) and dropped, so it does not block the outbox;
 * readers keep the version they have.
 *
 * Bootstrap design (docs/operations.md, "How a reader converges"): after every (re)connect and
 * every `republishIntervalMs`, the writer makes the stream show its full state. It reads the
 * latest event of every subject, then publishes a `RuleDeleted` for every rule the stream
 * still shows as live but that the writer no longer holds, and a `RulePut` for every rule it
 * holds (the same for datasets: `DataDeleted`, `DataPut`) unless the stream's latest event for it already has that exact content and is younger
 * than half the stream's max age (at most a day). So the latest event of every subject matches
 * the writer's state and never expires; a reader that replays the latest event per subject
 * rebuilds the writer's full state whatever the age of the rules, and an idle writer adds
 * almost nothing to the stream. The state published is the façade's one `snapshot()`.
 */
import { randomBytes } from 'node:crypto';
import type { Change } from '../store/change.js';
import type { TenantRecord } from '../store/tenant-record.js';
import type { Origin } from '../store/types.js';
import type { BrokerLink, BrokerSession } from './broker-link.js';
import { errorText } from './broker-link.js';
import type { SyncClock, TimerHandle } from './clock.js';
import {
  STREAM_NAME,
  dataPutOf,
  decodeEnvelope,
  deletedOf,
  eventContent,
  encodeEnvelope,
  eventSubject,
  resourceKind,
  rulePutOf,
  shadowPutOf,
  type NamedSyncEvent,
  type SyncEvent,
} from './events.js';
import { readLatestPerSubject } from './latest-per-subject.js';
import { PublishQueue, UnsendableMessage } from './publish-queue.js';
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
  /** `--max-data-bytes`: a broker whose `max_payload` is smaller gets one warning per connection. */
  readonly maxDataBytes?: number;
}

/** Room left for the message headers (`Nats-Msg-Id`) when checking a message against `max_payload`. */
const HEADER_ROOM = 256;

/** Publisher state for `/health`. */
export interface PublisherStatus {
  readonly pending: number;
  readonly published: number;
  readonly dropped: number;
  /** Events larger than the broker accepts, not sent. */
  readonly unsendable: number;
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
  private unsendable = 0;
  private warnedPayload = false;
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
        const max = session.nc.info?.max_payload;
        if (max !== undefined && m.data.length + HEADER_ROOM > max) {
          throw new UnsendableMessage(`the event is ${m.data.length} bytes; the broker accepts at most ${max} (max_payload)`);
        }
        try {
          await session.js.publish(m.subject, m.data, { msgID: m.msgId, timeout: link.requestTimeoutMs });
        } catch (err) {
          if (/max_payload/i.test(errorText(err))) throw new UnsendableMessage(errorText(err));
          throw err;
        }
      },
      onSent: () => {
        this.published++;
        this.lastPublishedAt = options.clock.now();
      },
      onSendError: (err, m, attempt) => {
        const log = attempt === 1 ? logger.warn : logger.debug;
        log.call(logger, { subject: m.subject, err: errorText(err), attempt }, 'sync publish failed; retrying in order');
      },
      onUnsendable: (err, m) => {
        this.unsendable++;
        logger.error(
          { subject: m.subject, bytes: m.data.length, err: err.message },
          'sync event too large for the broker; not published (readers keep the version they have): raise max_payload of nats-server or lower --max-data-bytes',
        );
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
    link.onUp((session) => {
      this.warnSmallPayload(session);
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
      unsendable: this.unsendable,
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

  /** One warning (per process, not per reconnect) when a dataset of the allowed size would not fit in a message. */
  private warnSmallPayload(session: BrokerSession): void {
    const max = session.nc.info?.max_payload;
    const dataMax = this.options.maxDataBytes;
    if (this.warnedPayload || max === undefined || dataMax === undefined || !this.options.target.syncsData || dataMax + HEADER_ROOM * 2 <= max) return;
    this.warnedPayload = true;
    this.options.logger.warn(
      { max_payload: max, max_data_bytes: dataMax },
      'the broker accepts smaller messages than --max-data-bytes allows: larger datasets will not be synchronized (raise max_payload of nats-server or lower --max-data-bytes)',
    );
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
    // The latest event of every ruleset and dataset subject (tenants are folded apart, below).
    const latest = new Map<string, { event: NamedSyncEvent; json: string | null; atMs: number }>();
    await readLatestPerSubject({
      js: session.js,
      prefix,
      clock,
      handle: (msg) => {
        try {
          const { event } = decodeEnvelope(msg.data);
          if (event.type === 'TenantConfigChanged') return;
          latest.set(keyOf(event), { event, json: contentOf(event), atMs: msg.info.timestampNanos / 1e6 });
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
    const held: NamedSyncEvent[] = [];
    for (const entry of target.snapshot()) {
      if (entry.kind === 'tenant.put') tenants.push(entry.record);
      else if (entry.kind === 'data.put') held.push(dataPutOf(entry.record));
      else if (entry.kind === 'shadow.put') held.push(shadowPutOf(entry.record));
      else held.push(rulePutOf(entry.record));
    }
    // Tenants first, so that a reader knows a tenant before its rules and datasets.
    if (tenantStream) {
      const tenantEvents = tenantFullState(tenants, tenantStream.entries, now, refreshMs);
      for (const event of tenantEvents) this.enqueue(event);
      if (tenantEvents.length > 0) logger.info({ reason, tenants: tenants.length, published: tenantEvents.length }, 'published the tenant state');
    }
    const heldKeys = new Set(held.map(keyOf));
    const tombstones = { ruleset: 0, data: 0, shadow: 0 };
    for (const [k, entry] of latest) {
      if (entry.json === null || heldKeys.has(k)) continue;
      const { event } = entry;
      const kind = resourceKind(event);
      this.enqueue(deletedOf(kind, event.tenant_id, event.name));
      tombstones[kind]++;
    }
    const published = { ruleset: 0, data: 0, shadow: 0 };
    const counts = { ruleset: 0, data: 0, shadow: 0 };
    for (const put of held) {
      const kind = resourceKind(put);
      counts[kind]++;
      const seen = latest.get(keyOf(put));
      // The stream already shows exactly this content, recently enough: nothing to do.
      if (seen && seen.json === contentOf(put) && now - seen.atMs < refreshMs) continue;
      this.enqueue(put);
      published[kind]++;
    }
    this.lastFullStateAt = now;
    const changed = published.ruleset + published.data + published.shadow + tombstones.ruleset + tombstones.data + tombstones.shadow > 0;
    const log = changed ? logger.info : logger.debug;
    log.call(
      logger,
      {
        reason,
        rules: counts.ruleset,
        published: published.ruleset,
        tombstones: tombstones.ruleset,
        ...(target.syncsData ? { datasets: counts.data, data_published: published.data, data_tombstones: tombstones.data } : {}),
        ...(counts.shadow + tombstones.shadow > 0 ? { shadows: counts.shadow, shadows_published: published.shadow, shadow_tombstones: tombstones.shadow } : {}),
      },
      'published the full rule state',
    );
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

/** Key of a ruleset or dataset event: its collection, tenant and name. */
function keyOf(event: NamedSyncEvent): string {
  return `${resourceKind(event)}\u0000${event.tenant_id}\u0000${event.name}`;
}

/** The content a put carries (null for a deletion), to compare with what the stream shows. */
const contentOf = eventContent;

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
