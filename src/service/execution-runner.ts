/**
 * Runs executions for the `RuleService` façade: the engine call with the execute options, the
 * tenant's timeout, metrics, the sampled `rule_executed` audit line and, with tracing on, the
 * execution span. Arguments are checked by the façade before they get here.
 *
 * This is the service's hot path (bench/NOTES.md): the option objects are built once, an untraced
 * execution allocates nothing here, and with tracing off `run` tests one field to choose the
 * untraced path. Shadow runs (./shadow-registry.ts) add one field test (`shadows.size`) after a
 * successful execution; the candidate runs later, off the caller's latency (`runCandidate`).
 */
import { meter, setDataSnapshot, type BudgetLimits, type DataSnapshot } from '../expr/index.js';
import { execute as executeRuleset } from '../ruleset/index.js';
import type { ExecuteOptions, ExecutionStats } from '../ruleset/execute.js';
import { ExecutionError, type ExecutionResult } from '../ruleset/result.js';
import type { RuleRecord } from '../store/types.js';
import type { CompiledRuleset } from '../ruleset/compile.js';
import { ReusableClock } from './batch-clock.js';
import type { DecisionRecorder } from './decision-recorder.js';
import { ServiceError, toServiceError } from './errors.js';
import { batchItemError, checkInput } from './input-check.js';
import { isPlainObject } from './json-object.js';
import { ShadowRegistry, type ShadowAgreement } from './shadow-registry.js';
import type { ExecutionRecorder, ExecutionSpan, ServiceAudit, ServiceMetrics, ServiceSampler, ServiceTracer } from './ports.js';
import type { TenancyPort } from './tenancy-port.js';
import { callerFields, type BatchItem, type BatchResult, type CallContext } from './types.js';
import type { Logger } from '../log.js';

/** Settings and collaborators of the runner (slices of the façade's). */
export interface ExecutionRunnerDeps {
  /** Default execution timeout (ms, 0 disables); a ruleset's `config.timeout_ms` wins. */
  readonly executionTimeoutMs: number;
  readonly maxSteps: number;
  /** The work budget of one execution (`--max-eval-ops`, `--max-value-bytes`). */
  readonly budget: BudgetLimits;
  /** A batch stops at this many ms (`--request-timeout-secs`; 0: no limit). */
  readonly requestTimeoutMs: number;
  readonly metrics: ServiceMetrics;
  readonly audit: ServiceAudit;
  readonly sampler: ServiceSampler;
  readonly logger: Logger;
  /** Monotonic clock in fractional milliseconds (performance.now). */
  readonly clock: () => number;
  readonly tracer?: ServiceTracer;
  readonly tenancy: TenancyPort | null;
  /** Reference data (EXTENSIONS.md 3): the datasets `@name` reads for a tenant; absent: none. */
  readonly data?: (tenant: string) => DataSnapshot;
  /** Call steps (EXTENSIONS.md 3): the current version of a tenant's ruleset by name. */
  readonly callee?: (tenant: string, name: string) => CompiledRuleset | undefined;
  /** Shadow runs (EXTENSIONS.md 4): `svc_shadow_executions_total`; wall clock of their examples. */
  readonly recordShadow?: (ruleset: string, agreement: ShadowAgreement, tenant: string) => void;
  readonly now?: () => number;
  /** Decision records (`--decision-log`, EXTENSIONS.md 4); absent: off. */
  readonly decisions?: DecisionRecorder;
}

/** What the traced execution path needs, built once when a tracer is given. */
interface TracedExecution {
  readonly tracer: ServiceTracer;
  /** Filled by every traced execution (execute is synchronous: read right after the call). */
  readonly stats: ExecutionStats;
  readonly plain: ExecuteOptions;
  readonly withTrace: ExecuteOptions;
}

/** Executions with metrics, sampled audit and (when on) spans. */
export class ExecutionRunner {
  private readonly execPlain: ExecuteOptions;
  private readonly execTraced: ExecuteOptions;
  /** Traced for the path only (decision records of executions that did not ask for a trace). */
  private readonly execPath: ExecuteOptions;
  /** The execution clock (`deps.clock`); batches reuse one reading per item boundary. */
  private readonly clock: ReusableClock;
  /** Null when tracing is off: `run` then checks this one field and nothing else. */
  private readonly traced: TracedExecution | null;
  /** Null without multi-tenancy: the tenant's timeout is then this one field test. */
  private readonly tenancy: TenancyPort | null;
  /** The live shadows (EXTENSIONS.md 4): `size` 0 keeps the hot path to one field test. */
  readonly shadows: ShadowRegistry;

  /** Null without `--decision-log`: `run` then tests this one field. */
  private readonly decisions: DecisionRecorder | null;

  constructor(private readonly deps: ExecutionRunnerDeps) {
    this.tenancy = deps.tenancy;
    this.decisions = deps.decisions ?? null;
    this.shadows = new ShadowRegistry({
      runCandidate: (tenant, compiled, input) => this.runCandidate(tenant, compiled, input),
      now: deps.now ?? Date.now,
      ...(deps.recordShadow ? { record: deps.recordShadow } : {}),
    });
    const log = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown>) =>
      deps.logger[level]({ ...fields, source: 'ruleset' }, message);
    // NOTE: the option objects are built once; the hot path allocates none.
    this.clock = new ReusableClock(deps.clock);
    this.execPlain = Object.freeze({
      trace: false,
      clock: this.clock.read,
      timeoutMs: deps.executionTimeoutMs,
      maxSteps: deps.maxSteps,
      budget: deps.budget,
      log,
    });
    this.execTraced = Object.freeze({ ...this.execPlain, trace: true });
    this.execPath = Object.freeze({ ...this.execTraced, pathOnly: true });
    if (deps.tracer) {
      const stats: ExecutionStats = { steps: 0 };
      this.traced = Object.freeze({
        tracer: deps.tracer,
        stats,
        plain: Object.freeze({ ...this.execPlain, stats }),
        withTrace: Object.freeze({ ...this.execTraced, stats }),
      });
    } else {
      this.traced = null;
    }
  }

  /** One execution of `rec` on `input` (a JSON object). Throws a ServiceError. */
  run(ctx: CallContext, rec: RuleRecord, input: unknown, trace: boolean): ExecutionResult {
    // Decision records (EXTENSIONS.md 4, ./decision-recorder.ts): one field test when the log is off.
    const decisions = this.decisions;
    if (decisions !== null && decisions.sample()) return this.runRecorded(ctx, rec, input, trace, decisions);
    return this.runOnce(ctx, rec, input, trace);
  }

  /**
   * A recorded execution: it runs traced, for the visited path of its record (the path alone,
   * without step timings, when the request did not ask for the trace); the answer keeps the
   * trace only when the request asked for it.
   */
  private runRecorded(ctx: CallContext, rec: RuleRecord, input: unknown, trace: boolean, decisions: DecisionRecorder): ExecutionResult {
    let result: ExecutionResult;
    try {
      result = this.runOnce(ctx, rec, input, true, !trace);
    } catch (err) {
      decisions.failed(ctx, rec, input, err);
      throw err;
    }
    decisions.succeeded(ctx, rec, input, result);
    return trace ? result : { code: result.code, message: result.message, output: result.output, duration_us: result.duration_us };
  }

  /**
   * One execution, not recorded: metrics, sampled audit and (tracing on) the span. `pathOnly`:
   * with `trace`, the trace's path without step timings.
   */
  private runOnce(ctx: CallContext, rec: RuleRecord, input: unknown, trace: boolean, pathOnly = false): ExecutionResult {
    // Input schema (EXTENSIONS.md 2): the input is validated first, only when the ruleset has one.
    if (rec.compiled.inputSchema !== null) checkInput(rec.compiled.inputSchema, input);
    // Reference data (./data-service.ts): only rulesets that read `@name` (or call others) get the tenant's snapshot.
    if (rec.compiled.datasets.length > 0 || rec.compiled.calls.length > 0) setDataSnapshot(this.deps.data?.(rec.tenant) ?? null);
    if (this.traced !== null) return this.runTraced(ctx, rec, input, trace, this.traced);
    const { metrics } = this.deps;
    metrics.activeInc();
    let result: ExecutionResult;
    try {
      result = executeRuleset(rec.compiled, input, this.optionsFor(rec, trace ? (pathOnly ? this.execPath : this.execTraced) : this.execPlain));
    } catch (err) {
      metrics.activeDec();
      const us = failedAfterUs(err);
      this.recorderOf(rec).record(us / 1e6, false);
      this.auditExecution(ctx, rec.name, us, 'error');
      throw toServiceError(err);
    }
    metrics.activeDec();
    this.recorderOf(rec).record(result.duration_us / 1e6, true, result.code);
    this.auditExecution(ctx, rec.name, result.duration_us, 'success');
    if (this.shadows.size !== 0) this.shadows.offer(rec.tenant, rec.name, input, result.code);
    return result;
  }

  /**
   * A shadow's candidate on one input (./shadow-registry.ts, run from its deferred drain):
   * untraced, with the tenant's options, datasets and callees as a live execution; no metrics,
   * audit or span of the ruleset. Throws on failure.
   */
  runCandidate(tenant: string, compiled: CompiledRuleset, input: unknown): ExecutionResult {
    if (compiled.inputSchema !== null) checkInput(compiled.inputSchema, input);
    if (compiled.datasets.length > 0 || compiled.calls.length > 0) setDataSnapshot(this.deps.data?.(tenant) ?? null);
    const options = this.tenancy === null ? this.execPlain : this.tenancy.executeOptions(tenant, this.execPlain);
    return executeRuleset(compiled, input, compiled.calls.length === 0 ? options : this.withCalls(tenant, options));
  }

  /**
   * Every input of a batch in order (each checked to be a JSON object); an item that fails
   * is `{error, code}` and the others still run. One clock reading per item boundary.
   *
   * NOTE (work budget, EXTENSIONS.md 6): the batch stops at the request timeout, and once its
   * items together have spent `--max-eval-ops` operations (docs/decisions.md "Batch budget"):
   * the items not run then answer TIMEOUT or LIMIT_EXCEEDED. Both are checked between items on
   * values already at hand (the last clock reading, the meter's count): no extra clock read.
   */
  batch(ctx: CallContext, rec: RuleRecord, inputs: readonly unknown[], trace: boolean): BatchResult {
    const clock = this.clock;
    const started = clock.read();
    const deadline = this.deps.requestTimeoutMs > 0 ? started + this.deps.requestTimeoutMs : Infinity;
    const maxOps = this.deps.budget.maxEvalOps;
    let ops = 0;
    const results: BatchItem[] = new Array(inputs.length);
    let success = 0;
    const decisions = this.decisions;
    if (decisions !== null) decisions.beginBatch();
    try {
      for (let i = 0; i < inputs.length; i++) {
        const input = inputs[i];
        if (decisions !== null) decisions.setItem(i);
        if (clock.last >= deadline || ops >= maxOps) {
          stopBatch(results, i, clock.last >= deadline, this.deps.requestTimeoutMs, maxOps);
          break;
        }
        meter.ops = 0;
        try {
          if (!isPlainObject(input)) throw new ServiceError('BAD_REQUEST', `inputs[${i}] must be a JSON object`);
          // NOTE (speed, bench/NOTES.md): this item starts at the previous reading (./batch-clock.ts).
          clock.reuseNext();
          results[i] = this.run(ctx, rec, input, trace);
          success++;
        } catch (err) {
          const e = toServiceError(err);
          // An item's error is answered in the item and never reaches a transport: an
          // unexpected one is logged here, with its stack (a thrown one is logged by the transport).
          const cause = e.unexpected;
          if (cause !== undefined) this.deps.logger.error({ err: cause.message, stack: cause.stack, item: i }, 'unexpected error');
          results[i] = batchItemError(e);
        }
        ops += meter.ops;
      }
    } finally {
      clock.cancel();
      if (decisions !== null) decisions.endBatch();
    }
    const total_duration_us = Math.round((clock.read() - started) * 1000);
    return { results, summary: { total: inputs.length, success, failed: inputs.length - success, total_duration_us } };
  }

  /**
   * `run` with an execution span (tracing on): the same metrics and audit, plus the span
   * (ruleset, result code, step count) and `trace_id`/`span_id` on the audit line.
   */
  private runTraced(ctx: CallContext, rec: RuleRecord, input: unknown, trace: boolean, traced: TracedExecution): ExecutionResult {
    const { metrics } = this.deps;
    const span = traced.tracer.startExecution(ctx.traceContext, rec.name, rec.version, rec.tenant);
    traced.stats.steps = 0;
    metrics.activeInc();
    let result: ExecutionResult;
    try {
      result = executeRuleset(rec.compiled, input, this.optionsFor(rec, trace ? traced.withTrace : traced.plain));
    } catch (err) {
      metrics.activeDec();
      const us = failedAfterUs(err);
      this.recorderOf(rec).record(us / 1e6, false);
      const e = toServiceError(err);
      span.failed(e.code, e.message, traced.stats.steps);
      this.auditExecution(ctx, rec.name, us, 'error', span);
      throw e;
    }
    metrics.activeDec();
    this.recorderOf(rec).record(result.duration_us / 1e6, true, result.code);
    span.succeeded(result.code, traced.stats.steps);
    this.auditExecution(ctx, rec.name, result.duration_us, 'success', span);
    if (this.shadows.size !== 0) this.shadows.offer(rec.tenant, rec.name, input, result.code);
    return result;
  }

  /**
   * The metrics recorder of `rec`, kept on the record after its first execution.
   * NOTE (speed, bench/NOTES.md "Many rulesets"): with traffic spread over thousands of
   * rulesets, looking the handle up by name each time cost cache misses in the metrics' map; the
   * record is in hand. A replaced record starts without it; a deleted one is no longer executed.
   */
  private recorderOf(rec: RuleRecord): ExecutionRecorder {
    const metrics = this.deps.metrics;
    const held = rec.runState as ExecutionRecorder | undefined;
    if (held !== undefined && held.owner === metrics) return held;
    const recorder: ExecutionRecorder =
      metrics.ruleset !== undefined
        ? metrics.ruleset(rec.name, rec.tenant)
        : { owner: metrics, record: (seconds, ok, code) => metrics.recordExecution(rec.name, seconds, ok, code, rec.tenant) };
    rec.runState = recorder;
    return recorder;
  }

  /**
   * Execute options for a record: `base`, or its tenant's copy with `execution_timeout_ms`; for
   * a ruleset with call steps, a copy (kept per tenant and base) that resolves callees in its tenant.
   */
  private optionsFor(rec: RuleRecord, base: ExecuteOptions): ExecuteOptions {
    const options = this.tenancy === null ? base : this.tenancy.executeOptions(rec.tenant, base);
    return rec.compiled.calls.length === 0 ? options : this.withCalls(rec.tenant, options);
  }

  /** Per base options, per tenant: the options with the tenant's callee lookup. */
  private readonly callOptions = new WeakMap<ExecuteOptions, Map<string, ExecuteOptions>>();

  private withCalls(tenant: string, options: ExecuteOptions): ExecuteOptions {
    let byTenant = this.callOptions.get(options);
    if (byTenant === undefined) this.callOptions.set(options, (byTenant = new Map()));
    let out = byTenant.get(tenant);
    if (out === undefined) {
      const callee = this.deps.callee;
      out = Object.freeze({ ...options, calls: (name: string) => callee?.(tenant, name) });
      byTenant.set(tenant, out);
    }
    return out;
  }

  private auditExecution(ctx: CallContext, name: string, durationUs: number, result: 'success' | 'error', span?: ExecutionSpan): void {
    if (!this.deps.sampler.shouldSample()) return;
    const fields: Record<string, unknown> = { rule_name: name, duration_us: durationUs, result, ...callerFields(ctx) };
    // With tracing on, the line names its execution span (docs/observability.md).
    if (span !== undefined) {
      fields['trace_id'] = span.traceId;
      fields['span_id'] = span.spanId;
    }
    if (this.tenancy !== null) fields['tenant_id'] = ctx.tenant;
    this.deps.audit.write('rule_executed', fields);
  }
}

/** Fills the items from `from` on with the answer of a stopped batch (request timeout or work budget). */
function stopBatch(results: BatchItem[], from: number, timedOut: boolean, timeoutMs: number, maxOps: number): void {
  const item: BatchItem = timedOut
    ? { error: `batch stopped at the request timeout of ${timeoutMs} ms (--request-timeout-secs): item not run`, code: 'TIMEOUT' }
    : { error: `batch stopped: its items used the work budget of ${maxOps} operations (--max-eval-ops): item not run`, code: 'LIMIT_EXCEEDED' };
  for (let i = from; i < results.length; i++) results[i] = { ...item };
}

/** Microseconds an execution ran before it failed (0 when unknown). */
function failedAfterUs(err: unknown): number {
  return err instanceof ExecutionError ? err.durationUs : 0;
}
