/**
 * Reads the latest message of every sync subject (DeliverPolicy `last_per_subject`) through a
 * short-lived ordered consumer: the reader's bootstrap (it rebuilds its state from this, then
 * resumes its durable consumer) and the writer's tombstone pass (it learns which rules the
 * stream still shows as live). Messages published while reading are delivered too; reading
 * stops when nothing is pending.
 */
import type { SyncClock } from './clock.js';
import { STREAM_NAME, allSubjects } from './events.js';
import type { JetStreamLike, JsMsgLike } from './nats-api.js';

/** Result of `readLatestPerSubject`. */
export interface LatestRead {
  /** Messages handled. */
  readonly count: number;
  /** Highest stream sequence handled, or 0. */
  readonly lastSeq: number;
}

/** Options of `readLatestPerSubject`. */
export interface LatestReadOptions {
  readonly js: JetStreamLike;
  readonly prefix: string;
  readonly clock: SyncClock;
  /** Called for each message, in stream order; awaited before the next one. */
  readonly handle: (msg: JsMsgLike) => void | Promise<void>;
  /** Gives up when no message arrives for this long while some are pending (ms). Default 15 000. */
  readonly stallMs?: number;
  /**
   * Subject filter; default every sync subject (`{prefix}.>`). With `deliverPolicy: 'all'` the
   * same reading gives every retained message of the filter (the tenant bootstrap reads
   * `{prefix}.tenants` so).
   */
  readonly filter?: string;
  /** Default `last_per_subject`. */
  readonly deliverPolicy?: 'last_per_subject' | 'all';
}

/** Reads the latest message per subject (see the module comment). Rejects on a stall or error. */
export async function readLatestPerSubject(options: LatestReadOptions): Promise<LatestRead> {
  const { js, clock } = options;
  const consumer = await js.consumers.get(STREAM_NAME, {
    deliver_policy: options.deliverPolicy ?? 'last_per_subject',
    // NOTE: one subject as a string: the client sends `filter_subject`, which nats-server 2.9
    // understands (the plural `filter_subjects` needs 2.10).
    filter_subjects: options.filter ?? allSubjects(options.prefix),
  });
  let count = 0;
  let lastSeq = 0;
  try {
    const info = await consumer.info(true);
    if (info.num_pending === 0) return { count, lastSeq };
    const messages = await consumer.consume({ max_messages: 512 });
    let stalled = false;
    let complete = false;
    let timer = clock.setTimeout(onStall, options.stallMs ?? 15_000);
    function onStall(): void {
      stalled = true;
      void messages.close();
    }
    try {
      for await (const msg of messages) {
        clock.clearTimeout(timer);
        await options.handle(msg);
        count++;
        lastSeq = Math.max(lastSeq, msg.info.streamSequence);
        if (msg.info.pending === 0) {
          complete = true;
          break;
        }
        timer = clock.setTimeout(onStall, options.stallMs ?? 15_000);
      }
    } finally {
      clock.clearTimeout(timer);
      await messages.close();
    }
    if (!complete) {
      throw new Error(`reading the latest event per subject ${stalled ? 'stalled' : 'ended early'} after ${count} messages`);
    }
    return { count, lastSeq };
  } finally {
    await consumer.delete().catch(() => undefined);
  }
}
