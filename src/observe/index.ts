/** Observability: Prometheus metrics, audit log with sampling, server logger. */
export { COMPILATION_BUCKETS, EXECUTION_BUCKETS, Metrics, RulesetMetrics } from './metrics.js';
export type { MetricsOptions } from './metrics.js';
export { AuditLog, AuditSampler, DEFAULT_SAMPLE_RATE } from './audit.js';
export type { AuditLogOptions, LineSink } from './audit.js';
export { createLogger, silentLogger } from './logger.js';
export type { LogLevelName, Logger, LoggerOptions } from './logger.js';
