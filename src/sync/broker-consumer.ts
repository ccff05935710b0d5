/**
 * The reader's side of broker sync. Whenever the broker comes up (and again whenever the
 * durable consumer's message loop ends), the reader
 *
 * 1. replays the latest event of every subject (`readLatestPerSubject`) and applies it; then,
 *    when the stream held any rule event, removes local rules the stream does not show as live
 *    (deleted while this reader was away, possibly longer ago than the stream keeps events), and
 *    the same for datasets when it held any dataset event;
 * 2. resumes its durable pull consumer `svc-{instance-id}` (created, when missing, to start
 *    right after what step 1 read), applying each event and acking it after it was applied.
 *
 * Messages of this instance, stale redeliveries and duplicates are skipped (`EventDeduper`).
 * A message that cannot be applied because of a local failure is negatively acknowledged and
 * comes back; one that can never be applied (bad envelope, invalid ruleset) is logged and
 * acked so it does not block the stream (a dataset over `--max-data-bytes` too). See
 * docs/operations.md and docs/data-sync.md.
 */
import type { BrokerLink, BrokerSession } from './broker-link.js';
import { errorText, isNotFound } from './broker-link.js';
import { sleep, type SyncClock } from './clock.js';
import { EventDeduper } from './dedup.js';
import { STREAM_NAME, allSubjects, decodeEnvelope, isPutEvent, resourceKind, type NamedSyncEvent, type ResourceKind, type SyncEvent } from './events.js';
import { readLatestPerSubject } from './latest-per-subject.js';
import { readTenantStream } from './tenant-sync.js';
import type { ConsumerMessagesLike, JsMsgLike } from './nats-api.js';
import type { SyncTarget } from './sync-types.js';
import { incomingChangeOf } from './wire-changes.js';
import type { Logger } from '../log.js';

/** A durable consumer unused for 7 days (the stream's retention) is removed by the server. */
const CONSUMER_INACTIVE_NS = 7 * 24 * 3600 * 1_000_000_000;

/** Options of `BrokerConsumer`. */
export interface BrokerConsumerOptions {
  readonly link: BrokerLink;
  readonly target: SyncTarget;
  readonly instanceId: string;
  readonly prefix: string;
  readonly clock: SyncClock;
  readonly logger: Logger;
  /** Whether applied events are written to the rules dir (a reader with its own dir). */
  readonly persist: boolean;
}

/** Consumer state for `/health`. */
export interface ConsumerStatus {
  readonly consumer: string;
  readonly bootstrapped: boolean;
  readonly applied: number;
  /** `applied` by collection. */
  readonly applied_by_kind: { readonly ruleset: number; readonly data: number; readonly shadow: number; readonly tenant: number };
  readonly skipped: number;
  readonly last_event_at: string | null;
  readonly last_sequence: number;
}

/** What happened to one message. */
type Handled = 'applied' | 'skipped' | 'retry';

/** The reader's consumer (see the module comment). */
export class BrokerConsumer {
  readonly durableName: string;
  private readonly dedup: EventDeduper;
  private running: Promise<void> | undefined;
  private messages: ConsumerMessagesLike | undefined;
  private closed = false;
  private readonly abort = new AbortController();
  private bootstrapped = false;
  private applied = 0;
  private readonly appliedByKind = { ruleset: 0, data: 0, shadow: 0, tenant: 0 };
  private skipped = 0;
  private lastEventAt: number | null = null;
  private lastSequence = 0;

  constructor(private readonly options: BrokerConsumerOptions) {
    this.durableName = `svc-${options.instanceId}`;
    this.dedup = new EventDeduper(options.instanceId);
  }

  /** Starts consuming whenever the broker is up. */
  start(): void {
    this.options.link.onUp((session) => this.ensureRunning(session));
  }

  /** State for `/health`. */
  status(): ConsumerStatus {
    return {
      consumer: this.durableName,
      bootstrapped: this.bootstrapped,
      applied: this.applied,
      applied_by_kind: { ...this.appliedByKind },
      skipped: this.skipped,
      last_event_at: this.lastEventAt === null ? null : new Date(this.lastEventAt).toISOString(),
      last_sequence: this.lastSequence,
    };
  }

  /** Stops consuming. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.messages?.close().catch(() => undefined);
    await this.running;
  }

  /** Runs the loop for `session` unless one runs; a loop that ends picks up a newer session. */
  private ensureRunning(session: BrokerSession): void {
    if (this.running || this.closed) return;
    this.running = this.run(session).finally(() => {
      this.running = undefined;
      const current = this.options.link.current;
      if (current && current !== session) this.ensureRunning(current);
    });
  }

  /** Bootstrap then consume, again and again while this session is up. */
  private async run(session: BrokerSession): Promise<void> {
    const { link, logger, clock } = this.options;
    while (!this.closed && link.current === session) {
      try {
        const startSeq = await this.bootstrap(session);
        await this.consume(session, startSeq);
      } catch (err) {
        if (this.closed) return;
        logger.warn({ err: errorText(err), consumer: this.durableName }, 'sync consumer interrupted; restarting');
      }
      await sleep(clock, 500, this.abort.signal);
    }
  }

  /** Step 1 of the module comment. Resolves to the stream sequence the durable should start at. */
  private async bootstrap(session: BrokerSession): Promise<number> {
    const { target, logger, prefix, clock } = this.options;
    const before = await session.jsm.streams.info(STREAM_NAME);
    const live = new Set<string>();
    const seen = { ruleset: 0, data: 0, shadow: 0 };
    // Multi-tenancy: every tenant shares `{prefix}.tenants`, so the latest event per subject
    // would show only one; apply the folded state of all retained tenant events first.
    if (target.syncsTenants) {
      const tenants = await readTenantStream({ js: session.js, prefix, clock, skipInstance: this.options.instanceId });
      for (const entry of tenants.entries.values()) await target.applyChange(incomingChangeOf(entry.event), 'sync', this.options.persist);
      logger.info({ tenants: tenants.entries.size }, 'sync bootstrap: applied the retained tenant events');
    }
    const read = await readLatestPerSubject({
      js: session.js,
      prefix,
      clock,
      handle: async (msg) => {
        const { event, result } = await this.handle(msg, false);
        // A local failure: start over rather than resume past an event that was not applied.
        if (result === 'retry') throw new Error(`could not apply the event at sequence ${msg.info.streamSequence}`);
        if (event && event.type !== 'TenantConfigChanged') {
          seen[resourceKind(event)]++;
          if (isPutEvent(event)) live.add(keyOf(resourceKind(event), event.tenant_id, event.name));
        }
      },
    });
    let removed = 0;
    let dataRemoved = 0;
    let shadowsRemoved = 0;
    // NOTE: with no rule (dataset) event at all (no writer ever published, or it holds nothing and
    // the tombstones expired) the local rules (datasets) are kept: there is nothing to compare them with.
    const held = target.snapshot();
    let rulesCount = 0;
    let dataCount = 0;
    for (const entry of held) {
      if (entry.kind === 'tenant.put') continue;
      const kind: ResourceKind = entry.kind === 'data.put' ? 'data' : entry.kind === 'shadow.put' ? 'shadow' : 'ruleset';
      const { tenant, name } = entry.record;
      if (kind === 'data') dataCount++;
      else if (kind === 'ruleset') rulesCount++;
      if (seen[kind] === 0 || live.has(keyOf(kind, tenant, name))) continue;
      const change =
        kind === 'data'
          ? ({ kind: 'data.delete', tenant, name } as const)
          : kind === 'shadow'
            ? ({ kind: 'shadow.delete', tenant, name } as const)
            : ({ kind: 'ruleset.delete', tenant, name } as const);
      if ((await target.applyChange(change, 'sync', this.options.persist)) !== 'applied') continue;
      if (kind === 'shadow') {
        shadowsRemoved++;
      } else if (kind === 'data') {
        dataRemoved++;
        dataCount--;
      } else {
        removed++;
        rulesCount--;
      }
    }
    this.bootstrapped = true;
    const data = target.syncsData ? { data_removed: dataRemoved, data_count: dataCount } : {};
    const shadows = shadowsRemoved > 0 ? { shadows_removed: shadowsRemoved } : {};
    logger.info({ replayed: read.count, removed, rules_count: rulesCount, ...data, ...shadows }, 'sync bootstrap done: replayed the latest event per subject');
    return Math.max(read.lastSeq, before.state.last_seq) + 1;
  }

  /** Step 2 of the module comment. Returns when the message loop ends. */
  private async consume(session: BrokerSession, startSeq: number): Promise<void> {
    const { logger, prefix } = this.options;
    const filter = allSubjects(prefix);
    let info = await session.jsm.consumers.info(STREAM_NAME, this.durableName).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (info && info.config['filter_subject'] !== filter) {
      logger.warn({ consumer: this.durableName, filter: info.config['filter_subject'] }, 'durable consumer has another subject filter; recreating it');
      await session.jsm.consumers.delete(STREAM_NAME, this.durableName);
      info = undefined;
    }
    if (!info) {
      info = await session.jsm.consumers.add(STREAM_NAME, {
        durable_name: this.durableName,
        ack_policy: 'explicit',
        deliver_policy: 'by_start_sequence',
        opt_start_seq: startSeq,
        filter_subject: filter,
        ack_wait: 30_000_000_000, // 30 s in ns
        max_deliver: -1,
        max_ack_pending: 1000,
        // A reader that never comes back (e.g. a random instance id) does not leave its consumer
        // behind forever; one that comes back later bootstraps again.
        inactive_threshold: CONSUMER_INACTIVE_NS,
      });
      logger.info({ consumer: this.durableName, start_seq: startSeq }, 'created the durable sync consumer');
    } else {
      logger.info({ consumer: this.durableName, pending: info.num_pending }, 'resuming the durable sync consumer from its last ack');
    }
    const consumer = await session.js.consumers.get(STREAM_NAME, this.durableName);
    const messages = await consumer.consume({ max_messages: 256 });
    this.messages = messages;
    this.watchNotifications(messages);
    try {
      for await (const msg of messages) {
        if (this.closed) break;
        await this.handle(msg, true);
      }
    } finally {
      this.messages = undefined;
      await messages.close().catch(() => undefined);
    }
  }

  /** Ends the message loop when the consumer or stream is gone (it is then rebuilt). */
  private watchNotifications(messages: ConsumerMessagesLike): void {
    const withStatus = messages as ConsumerMessagesLike & { status?: () => AsyncIterable<{ type: string; count?: number }> };
    if (typeof withStatus.status !== 'function') return;
    void (async () => {
      for await (const n of withStatus.status!()) {
        const gone = n.type === 'consumer_deleted' || n.type === 'stream_not_found' || (n.type === 'consumer_not_found' && (n.count ?? 0) >= 2);
        if (gone) {
          this.options.logger.warn({ consumer: this.durableName, notification: n.type }, 'durable sync consumer lost; rebuilding');
          await messages.close().catch(() => undefined);
          return;
        }
      }
    })().catch(() => undefined);
  }

  /**
   * Decodes, filters and applies one message; acks it when `ack` is set (durable consumer).
   * Resolves to the decoded event (undefined for an undecodable message) and what was done.
   */
  private async handle(msg: JsMsgLike, ack: boolean): Promise<{ event: SyncEvent | undefined; result: Handled }> {
    const { logger } = this.options;
    const seq = msg.info.streamSequence;
    let envelope;
    try {
      envelope = decodeEnvelope(msg.data);
    } catch (err) {
      logger.warn({ subject: msg.subject, seq, err: errorText(err) }, 'skipped an invalid sync message');
      if (ack) msg.term();
      return { event: undefined, result: 'skipped' };
    }
    const event = envelope.event;
    this.lastEventAt = this.options.clock.now();
    this.lastSequence = Math.max(this.lastSequence, seq);
    let result: Handled;
    const current = event.type === 'TenantConfigChanged' ? undefined : this.held(event);
    const verdict = this.dedup.check(envelope, seq, current);
    if (verdict !== 'apply') {
      logger.debug({ seq, type: event.type, verdict }, 'sync event skipped');
      result = 'skipped';
    } else {
      result = await this.apply(event, seq);
      if (result !== 'retry') {
        this.dedup.applied(envelope, seq, event.type === 'TenantConfigChanged' ? undefined : this.held(event));
      }
    }
    if (result === 'applied') {
      this.applied++;
      this.appliedByKind[event.type === 'TenantConfigChanged' ? 'tenant' : resourceKind(event)]++;
    }
    if (result === 'skipped') this.skipped++;
    if (ack) {
      if (result === 'retry') msg.nak(1000);
      else msg.ack();
    }
    return { event, result };
  }

  /** The store's record of the event's ruleset or dataset. */
  private held(event: NamedSyncEvent): object | undefined {
    const { target } = this.options;
    const kind = resourceKind(event);
    if (kind === 'shadow') return target.currentShadow(event.tenant_id, event.name);
    return kind === 'data' ? target.currentData(event.tenant_id, event.name) : target.current(event.tenant_id, event.name);
  }

  private async apply(event: SyncEvent, seq: number): Promise<Handled> {
    const { target, logger, persist } = this.options;
    try {
      if (event.type === 'TenantConfigChanged') {
        if (target.syncsTenants) await target.applyChange(incomingChangeOf(event), 'sync', persist);
        else logger.debug({ tenant: event.tenant_id, seq }, 'tenant sync event ignored (multi-tenancy sync is not wired)');
        return 'applied';
      }
      let change;
      try {
        change = incomingChangeOf(event);
      } catch (err) {
        const what =
          event.type === 'DataPut'
            ? 'skipped a DataPut whose data_json is not JSON'
            : event.type === 'ShadowPut'
              ? 'skipped a ShadowPut whose shadow_json is not JSON'
              : 'skipped a RulePut whose ruleset_json is not JSON';
        logger.warn({ tenant: event.tenant_id, name: event.name, seq, err: errorText(err) }, what);
        return 'skipped';
      }
      const outcome = await target.applyChange(change, 'sync', persist);
      if (outcome === 'applied') {
        const version = event.type === 'RulePut' || event.type === 'DataPut' || event.type === 'ShadowPut' ? { version: event.version } : {};
        logger.info({ type: event.type, kind: resourceKind(event), tenant: event.tenant_id, name: event.name, ...version, seq }, 'sync event applied');
      }
      return outcome === 'applied' ? 'applied' : 'skipped';
    } catch (err) {
      logger.warn({ type: event.type, seq, err: errorText(err) }, 'could not apply a sync event; it will be redelivered');
      return 'retry';
    }
  }
}

function keyOf(kind: ResourceKind, tenant: string, name: string): string {
  return `${kind}\u0000${tenant}\u0000${name}`;
}
