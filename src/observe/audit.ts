/**
 * Audit events (SPEC.md "Audit events"): one JSON line per event,
 * `{"timestamp":"<ISO 8601 UTC>","level":"INFO","event":"<event>",...fields}`, always written
 * to stdout and, with an audit dir, appended to `<dir>/audit-YYYY-MM-DD.jsonl` (UTC date of
 * the event; a new file when the day changes). A failing audit file never stops the server:
 * the failure is logged once per day file, stdout keeps every line, and the file is retried
 * after `retryMs`.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from './logger.js';

/** Default execution audit sampling percent (SPEC.md). */
export const DEFAULT_SAMPLE_RATE = 10;

/**
 * The live execution-audit sampler: `rate` is a percent 0-100 and may change at any time
 * (PUT /config/audit-sample-rate). 100 samples every execution, 0 none.
 */
export class AuditSampler {
  private current = DEFAULT_SAMPLE_RATE;

  /** `random` returns a number in [0, 1) (default `Math.random`). */
  constructor(
    rate: number = DEFAULT_SAMPLE_RATE,
    private readonly random: () => number = Math.random,
  ) {
    this.rate = rate;
  }

  /** The current rate in percent. */
  get rate(): number {
    return this.current;
  }

  /** Sets the rate; throws `RangeError` unless it is a number from 0 to 100. */
  set rate(value: number) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
      throw new RangeError(`audit sample rate must be a number from 0 to 100, got ${String(value)}`);
    }
    this.current = value;
  }

  /** True for about `rate` percent of calls. */
  shouldSample(): boolean {
    const rate = this.current;
    if (rate >= 100) return true;
    if (rate <= 0) return false;
    return this.random() * 100 < rate;
  }
}

/** Something lines can be written to (process.stdout, a test sink). */
export interface LineSink {
  write(chunk: string): unknown;
  /** Writes buffered lines now (a batching sink, ./buffered-sink.ts); called by `close()`. */
  flush?(): void;
}

/** Options of `AuditLog`. */
export interface AuditLogOptions {
  /** Directory of the daily files; null or absent: stdout only. Created when missing. */
  readonly dir?: string | null;
  /** Default `process.stdout`. */
  readonly stdout?: LineSink;
  /** Clock in epoch milliseconds; default `Date.now`. */
  readonly now?: () => number;
  /** Where a failing audit file is reported; default nowhere. */
  readonly logger?: Pick<Logger, 'error'>;
  /** Initial sample rate (default 10) and the sampler's random source. */
  readonly sampleRate?: number;
  readonly random?: () => number;
  /** After a file failure, wait this long before reopening the same day's file (default 60 s). */
  readonly retryMs?: number;
}

/** The audit log: write events, sample executions, close at shutdown. */
export class AuditLog {
  /** Execution sampling with a live rate. */
  readonly sampler: AuditSampler;

  private readonly dir: string | null;
  private readonly stdout: LineSink;
  private readonly now: () => number;
  private readonly logger: Pick<Logger, 'error'> | undefined;
  private readonly retryMs: number;
  private stream: WriteStream | null = null;
  /** UTC day (`YYYY-MM-DD`) of `stream`. */
  private day: string | null = null;
  private failedDay: string | null = null;
  private failedUntil = 0;
  private loggedDay: string | null = null;
  private closed = false;
  private readonly closing = new Set<Promise<void>>();
  /** The last timestamp formatted, and its epoch milliseconds. */
  private lastMs = Number.NaN;
  private lastIso = '';

  constructor(options: AuditLogOptions = {}) {
    this.dir = options.dir ?? null;
    this.stdout = options.stdout ?? process.stdout;
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.retryMs = options.retryMs ?? 60_000;
    this.sampler = new AuditSampler(options.sampleRate ?? DEFAULT_SAMPLE_RATE, options.random ?? Math.random);
  }

  /** The daily file name for an ISO timestamp: `audit-YYYY-MM-DD.jsonl`. */
  static fileName(isoTimestamp: string): string {
    return `audit-${isoTimestamp.slice(0, 10)}.jsonl`;
  }

  /** Writes one event line to stdout and, with a dir, to the day's file. Never throws. */
  write(event: string, fields: Record<string, unknown>): void {
    // NOTE (speed, audit line throughput): lines of the same millisecond share one formatted timestamp.
    const ms = this.now();
    if (ms !== this.lastMs) {
      this.lastIso = new Date(ms).toISOString();
      this.lastMs = ms;
    }
    const timestamp = this.lastIso;
    const line = `${serialize(timestamp, event, fields)}\n`;
    try {
      this.stdout.write(line);
    } catch {
      // NOTE: stdout is best effort; the file (when configured) still gets the line.
    }
    if (this.dir !== null && !this.closed) this.writeFile(timestamp.slice(0, 10), line);
  }

  /** Ends the open file (flushing buffered lines); later writes go to stdout only. */
  async close(): Promise<void> {
    this.closed = true;
    this.stdout.flush?.();
    this.retire();
    await Promise.all([...this.closing]);
  }

  private writeFile(day: string, line: string): void {
    if (this.day !== day) {
      this.retire();
      if (this.failedDay === day && this.now() < this.failedUntil) return;
      this.open(day);
    }
    this.stream?.write(line);
  }

  private open(day: string): void {
    const dir = this.dir as string;
    let stream: WriteStream;
    try {
      mkdirSync(dir, { recursive: true });
      stream = createWriteStream(join(dir, `audit-${day}.jsonl`), { flags: 'a' });
    } catch (err) {
      this.fail(day, err);
      return;
    }
    stream.on('error', (err) => {
      if (this.stream === stream) {
        this.stream = null;
        this.day = null;
      }
      stream.destroy();
      this.fail(day, err);
    });
    this.stream = stream;
    this.day = day;
  }

  /** Ends the current stream in the background; `close()` awaits it. */
  private retire(): void {
    const stream = this.stream;
    this.stream = null;
    this.day = null;
    if (stream === null || stream.closed) return;
    const done = new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      stream.end();
    });
    this.closing.add(done);
    void done.then(() => this.closing.delete(done));
  }

  private fail(day: string, err: unknown): void {
    this.failedDay = day;
    this.failedUntil = this.now() + this.retryMs;
    if (this.loggedDay === day) return;
    this.loggedDay = day;
    const message = err instanceof Error ? err.message : String(err);
    this.logger?.error({ err: message, dir: this.dir }, 'audit file write failed; audit lines still go to stdout');
  }
}

/** The JSON line of one event; the three standard keys come first and cannot be overridden. */
function serialize(timestamp: string, event: string, fields: Record<string, unknown>): string {
  // NOTE (speed, audit line throughput): without standard keys among the fields, the line is the standard
  // keys' text followed by the fields' own JSON: the same text as stringifying the merged
  // record, without building it. An ISO timestamp needs no escaping.
  if (!('timestamp' in fields) && !('level' in fields) && !('event' in fields)) {
    let rest: string | undefined;
    try {
      rest = JSON.stringify(fields);
    } catch {
      rest = undefined;
    }
    // NOTE: integer-like keys come first in any object, also in the merged record: when the
    // fields have one (always their first key then), the merged record is built instead.
    const first = rest === undefined ? 0 : rest.charCodeAt(2);
    if (rest !== undefined && rest.length > 1 && !(first >= 48 && first <= 57)) {
      const head = `{"timestamp":"${timestamp}","level":"INFO","event":${JSON.stringify(event)}`;
      return rest.length === 2 ? `${head}}` : `${head},${rest.slice(1)}`;
    }
  }
  const record: Record<string, unknown> = { timestamp, level: 'INFO', event, ...fields };
  record.timestamp = timestamp;
  record.level = 'INFO';
  record.event = event;
  try {
    return JSON.stringify(record);
  } catch {
    // NOTE: slow path only for values JSON cannot write (bigint); circular data still fails.
  }
  try {
    return JSON.stringify(record, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return JSON.stringify({ timestamp, level: 'INFO', event, fields_error: reason });
  }
}
