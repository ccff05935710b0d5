/**
 * Decision records on the execution path (EXTENSIONS.md 4 "Decision records", `--decision-log`):
 * samples executions, gives each recorded one its id, and hands a `DecisionEntry` to the sink
 * (observe/decision-log.ts), which masks and serializes it into its buffer at once and writes it
 * off this path.
 *
 * Ids: a per-process prefix (start time and random digits, given by the wiring) and a counter
 * in base 36, so an id costs one string concatenation and is unique across a fleet. A batch
 * has one id `B`; its recorded item `i` is `B.i` (docs/changing-rules.md).
 *
 * The transports read `last` right after the façade call returned (executions are synchronous,
 * so no other execution ran in between): the id of that execution, or of that batch when one of
 * its items was recorded, else null.
 */
import type { ExecutionResult } from '../ruleset/result.js';
import type { RuleRecord } from '../store/types.js';
import { toServiceError } from './errors.js';
import type { DecisionSink } from './ports.js';
import type { CallContext } from './types.js';

/** Settings of the recorder. */
export interface DecisionRecorderOptions {
  readonly sink: DecisionSink;
  /** Percent of executions recorded (`--decision-log-sample-rate`, 0-100). */
  readonly sampleRate: number;
  /** Unique per process (see the module comment). */
  readonly idPrefix: string;
  /** Wall clock, epoch milliseconds (Date.now). */
  readonly now: () => number;
  /** [0, 1) (Math.random). */
  readonly random?: () => number;
}

/** Samples, names and hands over decisions. */
export class DecisionRecorder {
  /** The id of the last execution or batch, when recorded; read by the transports. */
  last: string | null = null;
  private counter = 0;
  private readonly rate: number;
  private readonly random: () => number;
  /** Inside a batch: its id, the item running, and whether an item was recorded. */
  private batchId: string | null = null;
  private item = 0;
  private batchRecorded = false;

  constructor(private readonly options: DecisionRecorderOptions) {
    this.rate = options.sampleRate;
    this.random = options.random ?? Math.random;
  }

  /** Whether this execution is recorded (about `rate` percent); an execution not recorded clears `last`. */
  sample(): boolean {
    const rate = this.rate;
    if (rate >= 100 || (rate > 0 && this.random() * 100 < rate)) return true;
    if (this.batchId === null) this.last = null;
    return false;
  }

  /** A new id (see the module comment). */
  nextId(): string {
    return this.options.idPrefix + (this.counter++).toString(36);
  }

  /** Starts a batch: its items are recorded as `<batch id>.<index>`. */
  beginBatch(): void {
    this.batchId = this.nextId();
    this.batchRecorded = false;
    this.last = null;
  }

  /** The batch item about to run. */
  setItem(index: number): void {
    this.item = index;
  }

  /** Ends a batch: `last` is its id when one of its items was recorded. */
  endBatch(): void {
    this.last = this.batchRecorded ? this.batchId : null;
    this.batchId = null;
  }

  /** Records a successful execution (`result.trace` gives the path). */
  succeeded(ctx: CallContext, rec: RuleRecord, input: unknown, result: ExecutionResult): void {
    const id = this.idOfThis();
    this.options.sink.push({
      id,
      at: this.options.now(),
      tenant: rec.tenant,
      ruleset: rec.name,
      version: rec.version,
      compiled: rec.compiled,
      input,
      code: result.code,
      output: result.output,
      path: result.trace?.path ?? null,
      durationUs: result.duration_us,
      principal: ctx.principal ?? null,
      error: null,
    });
  }

  /** Records a failed execution (what the runner threw): its catalog code. */
  failed(ctx: CallContext, rec: RuleRecord, input: unknown, err: unknown): void {
    const id = this.idOfThis();
    this.options.sink.push({
      id,
      at: this.options.now(),
      tenant: rec.tenant,
      ruleset: rec.name,
      version: rec.version,
      compiled: rec.compiled,
      input,
      code: null,
      output: null,
      path: null,
      durationUs: null,
      principal: ctx.principal ?? null,
      error: { code: toServiceError(err).code },
    });
  }

  /** The id of the execution being recorded: its own, or its batch's with the item index. */
  private idOfThis(): string {
    if (this.batchId === null) return (this.last = this.nextId());
    this.batchRecorded = true;
    return `${this.batchId}.${this.item}`;
  }
}
