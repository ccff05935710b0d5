/**
 * Decision records to JetStream (`--decision-log-stream`, EXTENSIONS.md 4 "Decision records"):
 * besides the day files, each record is published to the stream `svc-decisions` (subject
 * `svc-decisions.<tenant>.<ruleset>`), so a fleet's records reach one place. It uses the broker
 * connection of rule sync (./broker-link.ts): the stream is created when missing after every
 * (re)connect.
 *
 * Off the execution path like the files: `push` only queues (bounded, 10,000 records); a drain
 * publishes the queued records, up to 256 at a time, while the broker is reachable. A full queue
 * (broker down or slow) drops the new record (`stream_queue_full`), a failed publish drops its
 * record (`stream_error`); both are counted in `svc_decision_records_dropped_total`.
 */
import { decisionLine } from '../observe/decision-log.js';
import type { DecisionEntry, DecisionSink } from '../service/ports.js';
import type { BrokerLink, BrokerSession } from './broker-link.js';
import { errorText, isNotFound } from './broker-link.js';
import type { Logger } from '../log.js';

/** The stream of decision records. */
export const DECISIONS_STREAM = 'svc-decisions';

/** Records kept in the stream: 7 days. */
const MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/** Publishes in flight at once. */
const CONCURRENCY = 256;

/** The subject of a record: `svc-decisions.<tenant>.<ruleset>`. */
export function decisionSubject(tenant: string, ruleset: string): string {
  return `${DECISIONS_STREAM}.${tenant}.${ruleset}`;
}

/** Options of `DecisionStream`. */
export interface DecisionStreamOptions {
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  /** Most records waiting (default 10,000). */
  readonly capacity?: number;
  /** Where drops are counted (the decision log's counters). */
  readonly countDrop: (reason: string, n: number) => void;
}

/** The JetStream side of the decision log (see the module comment). */
export class DecisionStream implements DecisionSink {
  /** Records published. */
  published = 0;
  private queue: DecisionEntry[] = [];
  private readonly capacity: number;
  private session: BrokerSession | undefined;
  private link: BrokerLink | undefined;
  private draining: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;
  private warned = false;

  constructor(private readonly options: DecisionStreamOptions) {
    this.capacity = options.capacity ?? 10_000;
  }

  /** Queues a record; drops and counts it when the queue is full. Never throws. */
  push(entry: DecisionEntry): void {
    if (this.closed || this.queue.length >= this.capacity) {
      this.options.countDrop('stream_queue_full', 1);
      return;
    }
    this.queue.push(entry);
    if (this.session !== undefined && this.draining === null && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.startDrain);
    }
  }

  /** Publishes over `link` from now on (called once sync has its broker connection). */
  attach(link: BrokerLink): void {
    this.link = link;
    link.onUp(async (session) => {
      try {
        await ensureDecisionStream(session);
      } catch (err) {
        this.options.logger.warn({ stream: DECISIONS_STREAM, err: errorText(err) }, 'decision stream unavailable; records are not published');
        return;
      }
      this.session = session;
      this.startDrain();
    });
    link.onDown(() => {
      this.session = undefined;
    });
  }

  /** Resolves once the records queued so far are published or dropped (tests). */
  async idle(): Promise<void> {
    while (this.draining !== null) await this.draining;
  }

  /** Stops publishing; queued records are dropped (the day files have them). */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
    this.queue = [];
  }

  private readonly startDrain = (): void => {
    this.scheduled = false;
    if (this.draining === null && this.queue.length > 0) this.draining = this.drain().finally(() => (this.draining = null));
  };

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && this.session !== undefined && !this.closed) {
      const batch = this.queue.splice(0, CONCURRENCY);
      const session = this.session;
      const timeout = this.link?.requestTimeoutMs ?? 5000;
      const results = await Promise.allSettled(
        batch.map((e) => session.js.publish(decisionSubject(e.tenant, e.ruleset), Buffer.from(decisionLine(e)), { msgID: e.id, timeout })),
      );
      let failed = 0;
      for (const r of results) {
        if (r.status === 'fulfilled') this.published++;
        else {
          failed++;
          if (!this.warned) {
            this.warned = true;
            this.options.logger.warn(
              { stream: DECISIONS_STREAM, err: errorText(r.reason) },
              'decision records not published to the stream (dropped and counted)',
            );
          }
        }
      }
      if (failed > 0) this.options.countDrop('stream_error', failed);
    }
  }
}

/** Creates the stream `svc-decisions` when it does not exist. */
async function ensureDecisionStream(session: BrokerSession): Promise<void> {
  try {
    await session.jsm.streams.info(DECISIONS_STREAM);
    return;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await session.jsm.streams.add({
      name: DECISIONS_STREAM,
      subjects: [`${DECISIONS_STREAM}.>`],
      retention: 'limits',
      storage: 'file',
      discard: 'old',
      max_age: MAX_AGE_MS * 1_000_000, // nanoseconds
      num_replicas: 1,
    });
  } catch (err) {
    // Another instance may have created it at the same moment.
    await session.jsm.streams.info(DECISIONS_STREAM).catch(() => {
      throw err;
    });
  }
}
