/** Observability: Prometheus metrics, audit log with sampling, server logger. */
export { COMPILATION_BUCKETS, EXECUTION_BUCKETS, Metrics, RulesetMetrics } from './metrics.js';
export type { MetricsOptions } from './metrics.js';
export { AuditLog, AuditSampler, DEFAULT_SAMPLE_RATE } from './audit.js';
export type { AuditLogOptions, LineSink } from './audit.js';
export { createLogger, resolveLogFormat, silentLogger } from './logger.js';
export type { LogFormatName, LogLevelName, Logger, LoggerOptions } from './logger.js';
export { buildReadyReport, renderBanner, MEMORY_ONLY_WARNING } from './banner.js';
export type { ReadyFacts, ReadyReport } from './banner.js';
