/**
 * The `svc` CLI's engine: the server's own façade over an in-memory store, so that `svc exec`,
 * `eval`, `filter`, `lint` and `test` answer exactly what a server would, without one. No audit
 * lines, no metrics, no log output; signatures are not checked (that is `svc-verify`'s job).
 */
import { performance } from 'node:perf_hooks';
import { AuditLog, silentLogger } from '../observe/index.js';
import { NO_METRICS } from '../service/ports.js';
import { RuleService } from '../service/rule-service.js';
import type { CallContext } from '../service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../signing/policy.js';
import { MemoryStore } from '../store/memory-store.js';
import { VERSION } from '../version.js';

/** The call context of every CLI call. */
export const CLI_CONTEXT: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };

/** A fresh in-memory service (one per command run). */
export function localService(): RuleService {
  const store = new MemoryStore();
  const audit = new AuditLog({ stdout: { write: () => true }, sampleRate: 0 });
  return new RuleService(
    {
      version: VERSION,
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 10_000,
      maxBatchSize: 10_000,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    { store, metrics: NO_METRICS, audit, sampler: audit.sampler, logger: silentLogger(), clock: () => performance.now(), now: Date.now },
  );
}
