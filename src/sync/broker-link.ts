/**
 * The connection to the broker (NATS JetStream) shared by the publisher and the consumer:
 * connects in the background (retrying until it succeeds, so a server starts and serves
 * while the broker is down), makes sure the stream exists after every (re)connect, tracks
 * whether the broker is reachable, and tells its users when it comes up and goes down.
 *
 * Stream `svc-rules` (SPEC.md "Sync events"): subjects `{prefix}.>`, limits retention, 7 days,
 * file storage, at most `maxMsgsPerSubject` messages kept per subject (the latest ones; enough
 * for readers to catch up, and it bounds the stream under the writer's periodic
 * re-publication). An existing stream is left as configured, except that our subjects are
 * added when missing. Only features of nats-server 2.9 are used.
 */
import { sleep, type SyncClock } from './clock.js';
import { STREAM_MAX_AGE_MS, STREAM_NAME, allSubjects } from './events.js';
import { redactUrl, type BrokerAuth } from './broker-auth.js';
import type { JetStreamLike, JetStreamManagerLike, NatsApi, NatsConnectionLike } from './nats-api.js';
import type { Logger } from '../log.js';

/** Options of `BrokerLink`. */
export interface BrokerLinkOptions {
  readonly api: NatsApi;
  readonly url: string;
  /** Client name shown by the server (the instance id). */
  readonly name: string;
  readonly prefix: string;
  readonly clock: SyncClock;
  readonly logger: Logger;
  /** Messages kept per subject. Default 32. */
  readonly maxMsgsPerSubject?: number;
  /** Delay between connection attempts (ms). Default 500. */
  readonly reconnectWaitMs?: number;
  /** JetStream API and publish timeout (ms). Default 5000. */
  readonly requestTimeoutMs?: number;
  /** Credentials and TLS (broker-auth.ts), read at start; none when absent. */
  readonly auth?: BrokerAuth;
}

/** Handles of a live connection. */
export interface BrokerSession {
  readonly nc: NatsConnectionLike;
  readonly js: JetStreamLike;
  readonly jsm: JetStreamManagerLike;
}

/** Called when the broker becomes reachable (first connect and every reconnect). */
export type UpListener = (session: BrokerSession) => void | Promise<void>;

/** The broker connection (see the module comment). */
export class BrokerLink {
  private session: BrokerSession | undefined;
  private up = false;
  private closed = false;
  private readonly abort = new AbortController();
  private readonly upListeners: UpListener[] = [];
  private readonly downListeners: Array<() => void> = [];
  private loop: Promise<void> | undefined;
  private lastErrorText: string | null = null;

  constructor(private readonly options: BrokerLinkOptions) {}

  /** True while connected and the stream is known to exist. */
  get connected(): boolean {
    return this.up;
  }

  /** The last connection or stream error, or null. */
  get lastError(): string | null {
    return this.lastErrorText;
  }

  /** The live session, when connected. */
  get current(): BrokerSession | undefined {
    return this.up ? this.session : undefined;
  }

  /** `--sync-url` as logged: without credentials written into it. */
  get logUrl(): string {
    return redactUrl(this.options.url);
  }

  /** The JetStream request timeout in use. */
  get requestTimeoutMs(): number {
    return this.options.requestTimeoutMs ?? 5000;
  }

  /** Registers a listener for "broker up". */
  onUp(listener: UpListener): void {
    this.upListeners.push(listener);
  }

  /** Registers a listener for "broker down". */
  onDown(listener: () => void): void {
    this.downListeners.push(listener);
  }

  /** Starts connecting in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Closes the connection and stops reconnecting. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    this.setDown();
    const nc = this.session?.nc;
    if (nc && !nc.isClosed()) await nc.close().catch(() => undefined);
    await this.loop;
  }

  /** Creates the stream, or adds our subjects to an existing one. */
  async ensureStream(jsm: JetStreamManagerLike): Promise<void> {
    const subject = allSubjects(this.options.prefix);
    try {
      const info = await jsm.streams.info(STREAM_NAME);
      const subjects = info.config.subjects ?? [];
      if (!subjects.includes(subject)) {
        await jsm.streams.update(STREAM_NAME, { ...info.config, subjects: [...subjects, subject] });
        this.options.logger.info({ stream: STREAM_NAME, subject }, 'added the sync subjects to the existing stream');
      }
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await jsm.streams.add({
        name: STREAM_NAME,
        subjects: [subject],
        retention: 'limits',
        storage: 'file',
        discard: 'old',
        max_age: STREAM_MAX_AGE_MS * 1_000_000, // nanoseconds
        max_msgs_per_subject: this.options.maxMsgsPerSubject ?? 32,
        num_replicas: 1,
      });
      this.options.logger.info({ stream: STREAM_NAME, subject }, 'created the sync stream');
    } catch (err) {
      // Another instance may have created it at the same moment.
      await jsm.streams.info(STREAM_NAME).catch(() => {
        throw err;
      });
    }
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      try {
        const session = await this.connect();
        failures = 0;
        await this.watch(session);
      } catch (err) {
        if (this.closed) break;
        failures++;
        this.lastErrorText = errorText(err);
        const log = failures === 1 ? this.options.logger.warn : this.options.logger.debug;
        log.call(this.options.logger, { url: this.logUrl, err: this.lastErrorText, attempt: failures }, 'broker unreachable; retrying');
      }
      if (!this.closed) await sleep(this.options.clock, this.options.reconnectWaitMs ?? 500, this.abort.signal);
    }
  }

  private async connect(): Promise<BrokerSession> {
    const { api } = this.options;
    const nc = await api.connect({
      servers: this.options.url
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== ''),
      name: this.options.name,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: this.options.reconnectWaitMs ?? 500,
      reconnectJitter: 100,
      timeout: 2000,
      pingInterval: 10_000,
      maxPingOut: 3,
      ...this.options.auth?.connectOptions(api),
    });
    if (this.closed) {
      await nc.close();
      throw new Error('closed');
    }
    try {
      const timeout = this.requestTimeoutMs;
      const jsm = await api.jetstreamManager(nc, { timeout });
      const js = api.jetstream(nc, { timeout });
      const session = { nc, js, jsm };
      this.session = session;
      return session;
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  /** Runs while the connection lives: reacts to disconnects and reconnects. */
  private async watch(session: BrokerSession): Promise<void> {
    const statuses = (async () => {
      for await (const s of session.nc.status()) {
        if (s.type === 'disconnect') this.setDown();
        else if (s.type === 'reconnect') void this.bringUp(session);
      }
    })().catch(() => undefined);
    await this.bringUp(session);
    const closedWith = await session.nc.closed();
    this.setDown();
    await statuses;
    if (!this.closed) throw closedWith instanceof Error ? closedWith : new Error('connection closed');
  }

  /** Ensures the stream, then reports "up" (retried while the connection is open). */
  private async bringUp(session: BrokerSession): Promise<void> {
    while (!this.closed && !session.nc.isClosed()) {
      try {
        await this.ensureStream(session.jsm);
        this.lastErrorText = null;
        if (!this.up) {
          const auth = this.options.auth;
          this.options.logger.info({ url: this.logUrl, stream: STREAM_NAME, auth: auth?.kind ?? 'none', tls: auth?.tls ?? false }, 'broker connected');
        }
        this.up = true;
        for (const l of this.upListeners) {
          try {
            await l(session);
          } catch (err) {
            this.options.logger.warn({ err: errorText(err) }, 'broker up handler failed');
          }
        }
        return;
      } catch (err) {
        this.lastErrorText = errorText(err);
        this.options.logger.warn({ err: this.lastErrorText }, 'cannot set up the sync stream; retrying');
        await sleep(this.options.clock, this.options.reconnectWaitMs ?? 500, this.abort.signal);
      }
    }
  }

  private setDown(): void {
    if (!this.up) return;
    this.up = false;
    this.options.logger.warn({ url: this.logUrl }, 'broker disconnected');
    for (const l of this.downListeners) l();
  }
}

/** True for JetStream "stream not found" / "consumer not found" errors. */
export function isNotFound(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 10059 || code === 10014) return true;
  return /not found/i.test(errorText(err));
}

/** The message of an error. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
