/**
 * The `svc` CLI's engine: the server's own façade over an in-memory store, so that `svc exec`,
 * `eval`, `filter`, `lint` and `test` answer exactly what a server would, without one. No audit
 * lines, no metrics, no log output; signatures are not checked (that is `svc-verify`'s job).
 */
import { performance } from 'node:perf_hooks';
import { parseConfig } from '../config/index.js';
import type { BudgetLimits } from '../expr/budget.js';
import type { DataSnapshot } from '../expr/index.js';
import { AuditLog, silentLogger } from '../observe/index.js';
import { NO_METRICS } from '../service/ports.js';
import { RuleService } from '../service/rule-service.js';
import type { CallContext } from '../service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../signing/policy.js';
import { MemoryStore } from '../store/memory-store.js';
import { VERSION } from '../version.js';

/** The call context of every CLI call. */
export const CLI_CONTEXT: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };

/**
 * The server's default execution settings (`svc-server` without flags): the CLI runs rules
 * exactly as a server with its defaults would.
 */
const DEFAULTS = parseConfig([], {});

/** Execution settings of the CLI: the server's defaults. */
export const CLI_EXECUTION: { readonly timeoutMs: number; readonly maxSteps: number; readonly budget: BudgetLimits } = {
  timeoutMs: DEFAULTS.executionTimeoutMs,
  maxSteps: DEFAULTS.maxSteps,
  budget: { maxEvalOps: DEFAULTS.maxEvalOps, maxValueBytes: DEFAULTS.maxValueBytes },
};

/** A fresh in-memory service (one per command run); `data`: the datasets `@name` reads (./workspace.ts). */
export function localService(data?: DataSnapshot): RuleService {
  const store = new MemoryStore();
  const audit = new AuditLog({ stdout: { write: () => true }, sampleRate: 0 });
  return new RuleService(
    {
      version: VERSION,
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: CLI_EXECUTION.timeoutMs,
      maxSteps: CLI_EXECUTION.maxSteps,
      budget: CLI_EXECUTION.budget,
      maxBatchSize: DEFAULTS.maxBatchSize,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store,
      metrics: NO_METRICS,
      audit,
      sampler: audit.sampler,
      logger: silentLogger(),
      clock: () => performance.now(),
      now: Date.now,
      ...(data === undefined ? {} : { data: () => data }),
    },
  );
}
