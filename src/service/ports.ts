/**
 * What the façade needs from the observability layer, as small interfaces, so the service
 * depends on capabilities and not on prom-client or the audit file writer.
 */

/** Execution and evaluation metrics (implemented by observe/metrics.ts). */
export interface ServiceMetrics {
  recordExecution(ruleset: string, seconds: number, ok: boolean, code?: string): void;
  recordEval(seconds: number, ok: boolean): void;
  observeCompilation(ruleset: string, seconds: number): void;
  activeInc(): void;
  activeDec(): void;
  /** Drops the series of a deleted ruleset. */
  forgetRuleset(ruleset: string): void;
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

/** Structured server log (pino-compatible subset). */
export interface ServiceLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
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
