/**
 * A real `RuleService` over a real store for the sync unit tests, with a logger that keeps its
 * lines so tests can look for them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DataService } from '../../../src/service/data-service.js';
import { NO_METRICS } from '../../../src/service/ports.js';
import { RoleGuard } from '../../../src/service/role-guard.js';
import type { Role } from '../../../src/service/role-guard.js';
import { RuleService } from '../../../src/service/rule-service.js';
import { DISABLED_SIGNATURE_POLICY, type SignaturePolicy } from '../../../src/signing/index.js';
import { FileStore, MemoryStore, type RuleStore, type StoreEvent } from '../../../src/store/index.js';
import { DataStore } from '../../../src/store/data-store.js';

/** A log line kept by `MemoryLogger`. */
export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

/** Logger that records every line. */
export class MemoryLogger {
  readonly lines: LogLine[] = [];
  error(obj: object, msg = '') {
    this.lines.push({ ...obj, level: 'error', msg });
  }
  warn(obj: object, msg = '') {
    this.lines.push({ ...obj, level: 'warn', msg });
  }
  info(obj: object, msg = '') {
    this.lines.push({ ...obj, level: 'info', msg });
  }
  debug(obj: object, msg = '') {
    this.lines.push({ ...obj, level: 'debug', msg });
  }
  child() {
    return this;
  }
  /** Lines whose message is `msg`. */
  find(msg: string): LogLine[] {
    return this.lines.filter((l) => l.msg === msg);
  }
}

/** A service, its store, its temp dir (when persistent) and the store events seen. */
export interface Fixture {
  readonly service: RuleService;
  readonly store: RuleStore;
  readonly dir: string | null;
  readonly logger: MemoryLogger;
  readonly events: StoreEvent[];
  /** Reference data (`data: true`): the store and façade, wired into the service's sync methods. */
  readonly dataStore: DataStore | null;
  readonly data: DataService | null;
  cleanup(): void;
}

/**
 * Builds a fixture; `persistent` gives it a fresh rules dir; `signature`: the policy (default:
 * off); `data`: reference data with that `--max-data-bytes` (synchronized like the server does).
 */
export async function makeFixture(
  options: { persistent?: boolean; role?: Role; signature?: SignaturePolicy; data?: { maxDataBytes: number } } = {},
): Promise<Fixture> {
  const dir = options.persistent ? mkdtempSync(join(tmpdir(), 'svc-sync-unit-')) : null;
  const store: RuleStore = dir ? new FileStore({ rulesDir: dir }) : new MemoryStore();
  const logger = new MemoryLogger();
  const own = store.files?.own;
  const dataStore = options.data ? new DataStore({ rulesDir: dir, ...(own ? { own } : {}), maxBytes: options.data.maxDataBytes, logger }) : null;
  const data =
    dataStore && options.data
      ? new DataService({
          store: dataStore,
          guard: new RoleGuard(options.role ?? 'standalone', null),
          audit: { write() {} },
          maxDataBytes: options.data.maxDataBytes,
          logger,
        })
      : null;
  const service = new RuleService(
    {
      version: '0.0.0-test',
      role: options.role ?? 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 10_000,
      maxBatchSize: 100,
      signature: options.signature ?? { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store,
      metrics: NO_METRICS,
      audit: { write() {} },
      sampler: { rate: 0, shouldSample: () => false },
      logger,
      clock: () => performance.now(),
      now: Date.now,
      ...(data ? { data: (tenant: string) => data.snapshot(tenant), dataSync: data } : {}),
    },
  );
  await store.load(service.prepareFile);
  const events: StoreEvent[] = [];
  store.subscribe((e) => events.push(e));
  return { service, store, dir, logger, events, dataStore, data, cleanup: () => dir && rmSync(dir, { recursive: true, force: true }) };
}

/** A valid ruleset document. */
export function ruleset(name: string, version = '1.0.0', code = 'OK'): Record<string, unknown> {
  return {
    config: { name, version, entry_step: 't' },
    steps: { t: { type: 'terminal', result: { code } } },
  };
}

/** The call context of tests. */
export const CTX = { tenant: 'default', sourceIp: '127.0.0.1', transport: 'internal' } as const;
