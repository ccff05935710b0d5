/**
 * The decision log (EXTENSIONS.md 4 "Decision records", `--decision-log DIR`): one JSON line per
 * recorded execution, appended to `DIR/decisions-YYYY-MM-DD.jsonl` (UTC day of the decision):
 *
 *   {decision_id, timestamp, tenant, ruleset, version, content_hash, input, code, output, path,
 *    duration_us, principal}   (+ `error: {code}` for a failed execution)
 *
 * `push` masks copies of input and output (`config.mask`, ../ruleset/mask.ts), serializes the
 * entry and encodes its line into the batch's buffer (`LinePacker`); the disk is off the
 * execution path: a drain `DRAIN_DELAY_MS` after the first queued line appends the batch, one
 * write per buffer of whole lines. The queue is bounded, in lines and in bytes: when the disk
 * is slow and it is full, a new entry is dropped and counted (`queue_full`), never waited for. A failed write
 * drops its lines and counts them by the error (`enospc`, `eacces`, `enotdir`...); for
 * `retryMs` after a failure, entries are dropped without touching the disk, then the file is
 * tried again. The server keeps answering through all of it (docs/observability.md).
 *
 * `content_hash` is `sha256:` and the hex SHA-256 of the canonical JSON (../signing) of the
 * stored document, computed once per compiled version (its derived values) with its mask paths.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { DerivedSlot, maskCopy, parseMaskPaths, type MaskPath } from '../ruleset/index.js';
import type { CompiledRuleset } from '../ruleset/compile.js';
import type { DecisionEntry, DecisionSink } from '../service/ports.js';
import { canonicalJson } from '../signing/index.js';
import type { Logger } from './logger.js';
import { registerCounterFamily } from './metric-families.js';

/** Default bound of the queue, in records. */
export const DEFAULT_DECISION_QUEUE = 10_000;

/** The drop reason of an entry that found the queue full. */
export const QUEUE_FULL = 'queue_full';

/**
 * How long the first entry of a batch waits for more before the drain (ms). NOTE (speed,
 * bench/NOTES.md "Decision records"): an async file write costs about 10 us of CPU whatever its
 * size up to tens of KB, so one write per event-loop turn (a few records under load) cost about
 * 2 us per record; a batch of a few milliseconds' records costs a fraction of that.
 */
export const DRAIN_DELAY_MS = 5;

/**
 * Bytes of one write: whole lines, and a line longer than this alone. NOTE (svc-cluster: workers
 * share the day's file): each write holds whole lines and stays under node's write chunk (512
 * KiB) unless one line is longer, so one O_APPEND write() never interleaves inside a line.
 */
export const SEGMENT_BYTES = 128 * 1024;

/** Default bound of the queue in bytes of encoded lines (besides `capacity` in lines). */
export const DEFAULT_DECISION_QUEUE_BYTES = 64 * 1024 * 1024;

/** Encoded lines (UTF-8, each ending in a newline) of one daily file: one write. */
export class Segment {
  /** Bytes of `buf` in use. */
  used = 0;
  lines = 0;
  constructor(
    /** The daily file (`decisionFileName`). */
    readonly name: string,
    readonly buf: Buffer,
  ) {}
}

/**
 * The queued lines, encoded as they come into buffers of `size` bytes (a longer line gets a
 * buffer of its own), one daily file per buffer. NOTE (speed, bench/NOTES.md "Decision
 * records"): a record is a few hundred bytes in a reused buffer until its write, instead of the
 * entry and everything it references waiting on the heap and a batch-sized string built and
 * encoded at the drain.
 */
export class LinePacker {
  /** Lines and bytes queued. */
  lines = 0;
  bytes = 0;
  private readonly full: Segment[] = [];
  private open: Segment | null = null;
  /** Buffers of written segments, reused (at most two kept). */
  private readonly spare: Buffer[] = [];

  constructor(private readonly size: number = SEGMENT_BYTES) {}

  /** Queues `line` (without newline) for the daily file `name`. */
  add(name: string, line: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit; the exact length is measured only near the end of a buffer.
    const bound = line.length * 3 + 1;
    let seg = this.open;
    if (seg !== null && (seg.name !== name || (seg.used + bound > seg.buf.length && seg.used + Buffer.byteLength(line) + 1 > seg.buf.length))) {
      this.full.push(seg);
      seg = null;
    }
    if (seg === null) {
      const need = bound > this.size ? Buffer.byteLength(line) + 1 : 0;
      seg = this.open = new Segment(name, need > this.size ? Buffer.allocUnsafe(need) : (this.spare.pop() ?? Buffer.allocUnsafe(this.size)));
    }
    const n = seg.buf.write(line, seg.used) + 1;
    seg.buf[seg.used + n - 1] = 0x0a;
    seg.used += n;
    seg.lines++;
    this.lines++;
    this.bytes += n;
  }

  /** Takes every queued segment, in order (the queue is then empty). */
  take(): Segment[] {
    const out = this.full.splice(0);
    if (this.open !== null) out.push(this.open);
    this.open = null;
    this.lines = 0;
    this.bytes = 0;
    return out;
  }

  /** A written (or dropped) segment's buffer goes back for reuse. */
  recycle(seg: Segment): void {
    if (seg.buf.length === this.size && this.spare.length < 2) this.spare.push(seg.buf);
  }
}

/** Options of `DecisionLog`. */
export interface DecisionLogOptions {
  readonly dir: string;
  /** Most entries waiting to be written (default 10,000); more are dropped. */
  readonly capacity?: number;
  /** Most bytes of encoded lines waiting to be written (default 64 MiB); more are dropped. */
  readonly capacityBytes?: number;
  /** After a failed write, drop without trying the disk for this long (ms, default 1000). */
  readonly retryMs?: number;
  /** Monotonic-enough clock for the retry pause (ms, default Date.now). */
  readonly now?: () => number;
  /** Where failures and recoveries are reported. */
  readonly logger?: Pick<Logger, 'warn' | 'info'>;
  /** Schedules a drain (default: a timer of `DRAIN_DELAY_MS`, not keeping the process alive). */
  readonly schedule?: (fn: () => void) => void;
}

/** What a compiled version gives its records, built once per version. */
interface VersionFacts {
  readonly contentHash: string;
  readonly mask: readonly MaskPath[];
  /** `,"ruleset":..,"version":..,"content_hash":..` of its lines, serialised once. */
  readonly fragment: string;
}

const FACTS = new DerivedSlot<VersionFacts>('decision-log');

/** The content hash and mask paths of a compiled version (cached on it). */
export function versionFacts(compiled: CompiledRuleset): VersionFacts {
  return compiled.derived.get(FACTS, () => {
    const hash = contentHash(compiled.doc);
    return {
      contentHash: hash,
      mask: parseMaskPaths(compiled.doc.config.mask),
      fragment: `,"ruleset":${JSON.stringify(compiled.name)},"version":${JSON.stringify(compiled.version)},"content_hash":${JSON.stringify(hash)}`,
    };
  });
}

/**
 * A per-process decision id prefix: the start time and 8 random hex digits (`m3x1k2ab-9f3c01d2-`);
 * ids are this prefix and a counter (../service/decision-recorder.ts).
 */
export function decisionIdPrefix(now: number = Date.now()): string {
  return `${now.toString(36)}-${randomBytes(4).toString('hex')}-`;
}

/** `sha256:<hex>` of the canonical JSON of a ruleset document. */
export function contentHash(doc: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(doc)).digest('hex')}`;
}

/** The day (`[start, end)` in epoch ms) whose file name `decisionFileName` gave last. */
const lastDay = { start: 0, end: 0, name: '' };

/** The daily file of a decision made at `ms` (epoch milliseconds). NOTE (speed): one date per day, not per line. */
export function decisionFileName(ms: number): string {
  if (ms >= lastDay.start && ms < lastDay.end) return lastDay.name;
  const start = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
  lastDay.start = start;
  lastDay.end = start + DAY_MS;
  lastDay.name = `decisions-${new Date(start).toISOString().slice(0, 10)}.jsonl`;
  return lastDay.name;
}

const DAY_MS = 86_400_000;

/** The last timestamp text and its millisecond (records of one millisecond share it). */
const lastStamp = { ms: Number.NaN, text: '' };

function timestamp(ms: number): string {
  if (ms !== lastStamp.ms) {
    lastStamp.ms = ms;
    lastStamp.text = new Date(ms).toISOString();
  }
  return lastStamp.text;
}

/**
 * The JSON line (without newline) of one entry, with masked copies of its input and output.
 * NOTE (speed, bench/NOTES.md "Decision records"): written as text in the field order of the
 * record; the version's fields are serialised once (`VersionFacts.fragment`), the fields that
 * repeat from record to record (tenant, code, path, principal, a terminal's static output)
 * reuse the last record's text when they are the same, the rest is JSON.stringify per value.
 */
export function decisionLine(e: DecisionEntry): string {
  const facts = versionFacts(e.compiled);
  const mask = facts.mask;
  const input = mask.length === 0 ? e.input : maskCopy(e.input, mask);
  const output = mask.length === 0 || e.output === null ? e.output : maskCopy(e.output, mask);
  let line =
    `{"decision_id":${JSON.stringify(e.id)},"timestamp":"${timestamp(e.at)}","tenant":${jsonText(e.tenant, lastTenant)}${facts.fragment}` +
    `,"input":${JSON.stringify(input) ?? 'null'},"code":${jsonText(e.code, lastCode)},"output":${outputText(output)}` +
    `,"path":${jsonText(e.path, lastPath)},"duration_us":${e.durationUs === null ? 'null' : String(e.durationUs)},"principal":${jsonText(e.principal, lastPrincipal)}`;
  if (e.error !== null) line += `,"error":${JSON.stringify(e.error)}`;
  return `${line}}`;
}

/** The last string of one field and its JSON text (consecutive records mostly repeat them). */
interface LastText {
  value: string | null;
  text: string;
}
const lastTenant: LastText = { value: null, text: 'null' };
const lastCode: LastText = { value: null, text: 'null' };
const lastPath: LastText = { value: null, text: 'null' };
const lastPrincipal: LastText = { value: null, text: 'null' };

/** The JSON text of a string field, reusing the last one when the value repeats. */
function jsonText(value: string | null, last: LastText): string {
  if (value === last.value) return last.text;
  last.value = value;
  last.text = value === null ? 'null' : JSON.stringify(value);
  return last.text;
}

/** The last output object serialized (a terminal's static output is one frozen object), and its text. */
let lastOutput: unknown = undefined;
let lastOutputText = 'null';

function outputText(output: unknown): string {
  if (output === lastOutput && Object.isFrozen(output)) return lastOutputText;
  const text = JSON.stringify(output) ?? 'null';
  lastOutput = output;
  lastOutputText = text;
  return text;
}

/** The decision log writer (see the module comment). */
export class DecisionLog implements DecisionSink {
  /** Records written to a file. */
  written = 0;
  /** Records dropped, by reason. */
  readonly dropped = new Map<string, number>([[QUEUE_FULL, 0]]);

  private readonly packer = new LinePacker();
  private readonly capacity: number;
  private readonly capacityBytes: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly schedule: (fn: () => void) => void;
  private scheduled = false;
  /** The drain running now, if any. */
  private draining: Promise<void> | null = null;
  private file: { readonly name: string; readonly handle: FileHandle } | null = null;
  /** While the disk is failing: until when nothing is tried, and the reason drops count under. */
  private failedUntil = 0;
  private failReason: string | null = null;
  private closed = false;

  constructor(private readonly options: DecisionLogOptions) {
    this.capacity = options.capacity ?? DEFAULT_DECISION_QUEUE;
    this.capacityBytes = options.capacityBytes ?? DEFAULT_DECISION_QUEUE_BYTES;
    this.retryMs = options.retryMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.schedule = options.schedule ?? ((fn) => void setTimeout(fn, DRAIN_DELAY_MS).unref());
  }

  /**
   * Serializes one entry into the queue; drops and counts it when the queue is full or the log
   * is closed (`queue_full`), or when it cannot be serialized (`serialize_error`). Never throws.
   */
  push(entry: DecisionEntry): void {
    const packer = this.packer;
    if (this.closed || packer.lines >= this.capacity || packer.bytes >= this.capacityBytes) {
      this.count(QUEUE_FULL, 1);
      return;
    }
    let line: string;
    try {
      line = decisionLine(entry);
    } catch {
      this.count('serialize_error', 1);
      return;
    }
    packer.add(decisionFileName(entry.at), line);
    if (!this.scheduled && this.draining === null) this.scheduleDrain();
  }

  private scheduleDrain(): void {
    this.scheduled = true;
    this.schedule(this.startDrain);
  }

  /** Entries waiting to be written. */
  get pending(): number {
    return this.packer.lines;
  }

  /** Writes what is queued, then closes the file; later entries are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.draining !== null) await this.draining;
    if (this.packer.lines > 0) await this.drain();
    const file = this.file;
    this.file = null;
    await file?.handle.close().catch(() => undefined);
  }

  /** Resolves once everything queued so far is written or dropped (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.draining !== null || this.packer.lines > 0) {
      if (this.draining !== null) await this.draining;
      else await this.drain();
    }
  }

  private readonly startDrain = (): void => {
    this.scheduled = false;
    if (this.draining === null && this.packer.lines > 0) void this.drain();
  };

  /**
   * Writes the queued lines, one write per segment. Lines queued while it writes wait for the
   * next scheduled drain (not written at once in a batch of the few that arrived meanwhile).
   */
  private drain(): Promise<void> {
    const run = async (): Promise<void> => {
      try {
        for (const seg of this.packer.take()) {
          await this.write(seg);
          this.packer.recycle(seg);
        }
      } finally {
        this.draining = null;
        if (this.packer.lines > 0 && !this.closed && !this.scheduled) this.scheduleDrain();
      }
    };
    this.draining = run();
    return this.draining;
  }

  /** Appends one segment to its daily file, or drops and counts its lines. */
  private async write(seg: Segment): Promise<void> {
    if (this.failReason !== null && this.now() < this.failedUntil) {
      this.count(this.failReason, seg.lines);
      return;
    }
    try {
      const handle = await this.handleFor(seg.name);
      for (let done = 0; done < seg.used;) done += (await handle.write(seg.buf, done, seg.used - done)).bytesWritten;
    } catch (err) {
      await this.failed(err, seg.name, seg.lines);
      return;
    }
    this.written += seg.lines;
    if (this.failReason !== null) {
      this.options.logger?.info({ dir: this.options.dir }, 'decision records are written again');
      this.failReason = null;
    }
  }

  /** The open handle of the day's file, opening it (and the dir) when the day changed. */
  private async handleFor(name: string): Promise<FileHandle> {
    if (this.file !== null && this.file.name === name) return this.file.handle;
    const previous = this.file;
    this.file = null;
    await previous?.handle.close().catch(() => undefined);
    await mkdir(this.options.dir, { recursive: true });
    const handle = await open(join(this.options.dir, name), 'a');
    this.file = { name, handle };
    return handle;
  }

  private async failed(err: unknown, name: string, lines: number): Promise<void> {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    const reason = typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code.toLowerCase() : 'write_error';
    this.count(reason, lines);
    const file = this.file;
    this.file = null;
    await file?.handle.close().catch(() => undefined);
    if (this.failReason === null) {
      const message = err instanceof Error ? err.message : String(err);
      this.options.logger?.warn({ err: message, file: join(this.options.dir, name), reason }, 'decision records dropped: the decision log cannot be written');
    }
    this.failReason = reason;
    this.failedUntil = this.now() + this.retryMs;
  }

  /** Counts `n` records dropped for `reason` (also used by the JetStream publisher, ../sync/decision-stream.ts). */
  count(reason: string, n: number): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + n);
  }
}

/**
 * Registers `svc_decision_records_written_total` and `svc_decision_records_dropped_total{reason}`
 * (docs/observability.md) on a metrics registry, and with a JetStream publisher
 * `svc_decision_records_published_total`.
 */
export function registerDecisionMetrics(registry: Registry, log: DecisionLog, stream?: { readonly published: number }): void {
  registerCounterFamily(registry, 'svc_decision_records_written_total', 'Decision records written to the decision log', function* () {
    yield [{}, log.written];
  });
  if (stream !== undefined) {
    registerCounterFamily(registry, 'svc_decision_records_published_total', 'Decision records published to the JetStream stream svc-decisions', function* () {
      yield [{}, stream.published];
    });
  }
  registerCounterFamily(registry, 'svc_decision_records_dropped_total', 'Decision records dropped (queue full or write failed), by reason', function* () {
    for (const [reason, n] of log.dropped) yield [{ reason }, n];
  });
}
