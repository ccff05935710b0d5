/**
 * What the façade needs from the observability layer, as small interfaces, so the service
 * depends on capabilities and not on prom-client or the audit file writer.
 */
import type { CompiledRuleset } from '../ruleset/compile.js';

/** Execution and evaluation metrics (implemented by observe/metrics.ts). */
export interface ServiceMetrics {
  /** `tenant`: the ruleset's tenant (a `tenant` label in multi-tenancy mode; default `default`). */
  recordExecution(ruleset: string, seconds: number, ok: boolean, code?: string, tenant?: string): void;
  /**
   * The recorder of one ruleset's executions (what `recordExecution` looks up by name each
   * time), for callers that hold it with the ruleset. Absent: they call `recordExecution`.
   */
  ruleset?(ruleset: string, tenant?: string): ExecutionRecorder;
  recordEval(seconds: number, ok: boolean): void;
  observeCompilation(ruleset: string, seconds: number, tenant?: string): void;
  activeInc(): void;
  activeDec(): void;
  /** Drops the series of a deleted ruleset. */
  forgetRuleset(ruleset: string, tenant?: string): void;
  /** One candidate run of a shadow (EXTENSIONS.md 4): `svc_shadow_executions_total{ruleset, agreement}`. */
  recordShadow?(ruleset: string, agreement: 'agree' | 'disagree' | 'error', tenant?: string): void;
}

/** Records the executions of one ruleset (observe/metrics.ts `RulesetMetrics`). */
export interface ExecutionRecorder {
  /** The metrics it records into (a record may meet several in tests): checked before reuse. */
  readonly owner: unknown;
  /** One execution: seconds, outcome and (on success) its terminal code. */
  record(seconds: number, ok: boolean, code?: string): void;
}

/** Audit events (implemented by observe/audit.ts). */
export interface ServiceAudit {
  write(event: string, fields: Record<string, unknown>): void;
}

/** Live execution-audit sampler (rate in percent, 0-100). */
export interface ServiceSampler {
  rate: number;
  shouldSample(): boolean;
}

/** Metrics that do nothing (`--metrics-enabled=false`). */
export const NO_METRICS: ServiceMetrics = {
  recordExecution() {},
  recordEval() {},
  observeCompilation() {},
  activeInc() {},
  activeDec() {},
  forgetRuleset() {},
};

/**
 * Execution spans (implemented by observe/tracing.ts). Absent when tracing is off: the façade
 * then takes its untraced path and never touches this port.
 */
export interface ServiceTracer {
  /**
   * Starts the span of one ruleset execution as a child of `parent` (a transport's opaque
   * `CallContext.traceContext`; a new trace when undefined).
   */
  startExecution(parent: unknown, ruleset: string, version: string, tenant: string): ExecutionSpan;
}

/** The span of one execution; end it once with `succeeded` or `failed`. */
export interface ExecutionSpan {
  /** W3C trace id (32 hex digits), for the audit line. */
  readonly traceId: string;
  /** Span id (16 hex digits), for the audit line. */
  readonly spanId: string;
  /** Ends the span of a successful execution: terminal `code`, visited `steps`. */
  succeeded(code: string, steps: number): void;
  /** Ends the span of a failed execution: catalog `code`, `message`, visited `steps`. */
  failed(code: string, message: string, steps: number): void;
}

/**
 * One recorded decision as the runner hands it to the decision log (EXTENSIONS.md 4 "Decision
 * records"). Built on the execution path, so it holds references only: the writer masks copies
 * of `input` and `output` and serializes off that path, and nobody mutates them meanwhile.
 */
export interface DecisionEntry {
  readonly id: string;
  /** Wall clock of the decision, epoch milliseconds. */
  readonly at: number;
  readonly tenant: string;
  readonly ruleset: string;
  readonly version: string;
  /** The executed version: the writer derives `content_hash` and the masked paths from it (once per version). */
  readonly compiled: CompiledRuleset;
  readonly input: unknown;
  /** The terminal code; null when the execution failed. */
  readonly code: string | null;
  readonly output: unknown;
  /** Visited step ids joined with ` -> `; null when the execution failed. */
  readonly path: string | null;
  /** Engine time in microseconds; null when the execution failed. */
  readonly durationUs: number | null;
  readonly principal: string | null;
  /** A failed execution: its catalog code (the `code` of the error answer). */
  readonly error: { readonly code: string } | null;
}

/**
 * Where decisions go (implemented by observe/decision-log.ts). `push` never throws and never
 * waits: a full buffer drops the entry and counts it.
 */
export interface DecisionSink {
  push(entry: DecisionEntry): void;
}
