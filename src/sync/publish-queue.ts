/**
 * The writer's outbox (SPEC.md 8: "If the broker connection is lost, the writer keeps serving
 * writes (events are buffered in a channel)"). Messages are sent one at a time, in the order
 * they were enqueued; a failed send is retried (with backoff) before anything behind it, so
 * readers see the writer's changes in order. While the connection is down nothing is tried;
 * `setConnected(true)` resumes. Each message keeps its message id across retries, so the
 * stream's duplicate window drops a retry whose first attempt was in fact stored.
 *
 * A message that can never be sent (`send` rejects with an `UnsendableMessage`: larger than the
 * broker accepts) is dropped at once (and reported), so it does not hold up the ones behind it.
 *
 * The buffer is bounded: past `maxBuffered` the oldest messages are dropped (and reported).
 * That loses intermediate history only, not convergence: the writer re-publishes its full
 * state after every (re)connect.
 */
import { sleep, type SyncClock } from './clock.js';

/** One message to publish. */
export interface OutgoingMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  /** Stable across retries (JetStream `Nats-Msg-Id`). */
  readonly msgId: string;
}

/** What `send` rejects with for a message that no retry can send; the queue drops it. */
export class UnsendableMessage extends Error {}

/** Options of `PublishQueue`. */
export interface PublishQueueOptions {
  readonly clock: SyncClock;
  /** Sends one message; rejects when it was not (known to be) stored. */
  readonly send: (message: OutgoingMessage) => Promise<void>;
  /** Default 100 000. */
  readonly maxBuffered?: number;
  /** First retry delay (ms), doubled per failure up to `retryMaxMs`. Defaults 100 / 2000. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  readonly onSent?: (message: OutgoingMessage) => void;
  readonly onSendError?: (err: unknown, message: OutgoingMessage, attempt: number) => void;
  readonly onDropped?: (count: number) => void;
  /** A message dropped because it can never be sent. */
  readonly onUnsendable?: (err: UnsendableMessage, message: OutgoingMessage) => void;
}

/** Ordered, retried, bounded outbox (see the module comment). */
export class PublishQueue {
  private readonly items: OutgoingMessage[] = [];
  private head = 0;
  private connected = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private readonly abort = new AbortController();
  private readonly loop: Promise<void>;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: PublishQueueOptions) {
    this.loop = this.run();
  }

  /** Messages waiting to be sent (the one in flight included). */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Appends a message. */
  enqueue(message: OutgoingMessage): void {
    if (this.closed) return;
    this.items.push(message);
    const max = this.options.maxBuffered ?? 100_000;
    if (this.length > max) {
      const drop = this.length - max;
      this.head += drop;
      this.options.onDropped?.(drop);
    }
    this.compact();
    this.signal();
  }

  /** Tells the queue whether the broker is reachable. */
  setConnected(connected: boolean): void {
    this.connected = connected;
    if (connected) this.signal();
  }

  /** Resolves when the queue is empty (now or later). */
  idle(): Promise<void> {
    if (this.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops sending; what is still buffered is dropped. Resolves when the loop ended. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    this.signal();
    await this.loop;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private signal(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.closed) {
      if (this.length === 0 || !this.connected) {
        if (this.length === 0) for (const w of this.idleWaiters.splice(0)) w();
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      const message = this.items[this.head]!;
      try {
        await this.options.send(message);
        attempt = 0;
        // The head may have moved while sending (drops); only remove this very message.
        if (this.items[this.head] === message) this.head++;
        this.compact();
        this.options.onSent?.(message);
      } catch (err) {
        if (err instanceof UnsendableMessage) {
          attempt = 0;
          if (this.items[this.head] === message) this.head++;
          this.compact();
          this.options.onUnsendable?.(err, message);
          continue;
        }
        attempt++;
        this.options.onSendError?.(err, message, attempt);
        const min = this.options.retryMinMs ?? 100;
        const max = this.options.retryMaxMs ?? 2000;
        await sleep(this.options.clock, Math.min(max, min * 2 ** Math.min(attempt - 1, 20)), this.abort.signal);
      }
    }
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
  }
}
