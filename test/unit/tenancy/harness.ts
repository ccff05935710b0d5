/**
 * In-process harness for the multi-tenancy tests: a real `RuleService` with a real
 * `TenantRegistry` and `TenantManager` (as `setupTenancy` wires them), a real store (memory, or
 * a FileStore in a temp dir), `Metrics` with the tenant label, an audit sink, and the fastify
 * app driven with `inject()`. The clock is a manual one: rate limits and timeouts are driven
 * by the test, never by real time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AuditLog, Metrics, silentLogger } from '../../../src/observe/index.js';
import type { Role } from '../../../src/service/role-guard.js';
import { RuleService } from '../../../src/service/rule-service.js';
import { setupTenancy, type Tenancy } from '../../../src/service/tenancy.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { FileStore, MemoryStore, type RuleStore } from '../../../src/store/index.js';
import { buildHttpApp } from '../../../src/transport/http/app.js';
import { parseJsonLines } from '../../helpers/json-lines.js';

/** Options of `makeTenancyHarness`. */
export interface TenancyHarnessOptions {
  /** A rules dir to use (persistent mode), `true` for a fresh temp dir, absent for memory. */
  rulesDir?: string | true;
  role?: Role;
  /** Off: the app and service are built exactly as without tenancy. Default true. */
  multiTenancy?: boolean;
  executionTimeoutMs?: number;
  maxSteps?: number;
  /** Milliseconds the manual clock moves at every read (default 0: only `advance` moves it). */
  tickPerRead?: number;
}

/** A parsed answer. */
export interface Reply {
  status: number;
  headers: Record<string, unknown>;
  body: any;
}

/** The harness. */
export interface TenancyHarness {
  readonly app: FastifyInstance;
  readonly service: RuleService;
  readonly store: RuleStore;
  readonly tenancy: Tenancy | null;
  readonly metrics: Metrics;
  readonly rulesDir: string | null;
  /** Moves the manual clock. */
  advance(ms: number): void;
  /** Sets how far the clock moves at every read. */
  setTick(ms: number): void;
  auditLines(): Record<string, unknown>[];
  /** A request; `tenant` sets `X-Tenant-ID`. */
  request(method: string, url: string, body?: unknown, tenant?: string): Promise<Reply>;
  close(): Promise<void>;
}

/** Builds the harness. */
export async function makeTenancyHarness(options: TenancyHarnessOptions = {}): Promise<TenancyHarness> {
  let owned: string | null = null;
  let rulesDir: string | null = null;
  if (options.rulesDir === true) rulesDir = owned = mkdtempSync(join(tmpdir(), 'svc-tenancy-'));
  else if (typeof options.rulesDir === 'string') rulesDir = options.rulesDir;
  let now = 1000;
  let tick = options.tickPerRead ?? 0;
  const clock = () => {
    const t = now;
    now += tick;
    return t;
  };
  const multiTenancy = options.multiTenancy ?? true;
  const role = options.role ?? 'standalone';
  const store: RuleStore = rulesDir ? new FileStore({ rulesDir }) : new MemoryStore();
  const sink: string[] = [];
  const audit = new AuditLog({ stdout: { write: (chunk: string) => sink.push(chunk) }, sampleRate: 100 });
  const metrics = new Metrics({ version: 'test', rulesCount: () => store.count(), tenantLabel: multiTenancy });
  const logger = silentLogger();
  const tenancy = multiTenancy ? await setupTenancy({ config: { rulesDir, role, writerAddr: 'http://writer:8080' }, store, audit, logger, clock }) : null;
  const service = new RuleService(
    {
      version: 'test',
      role,
      writerAddr: 'http://writer:8080',
      executionTimeoutMs: options.executionTimeoutMs ?? 5000,
      maxSteps: options.maxSteps ?? 10_000,
      maxBatchSize: 10_000,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    { store, metrics, audit, sampler: audit.sampler, logger, clock, now: Date.now, ...(tenancy ? { tenancy: tenancy.registry } : {}) },
  );
  await store.load(service.prepareFile);
  const app = buildHttpApp(service, {
    bodyLimit: 1024 * 1024,
    requestTimeoutMs: 30_000,
    debugMode: false,
    multiTenancy,
    ...(tenancy ? { tenants: tenancy.manager } : {}),
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.render() }),
  });
  await app.ready();
  return {
    app,
    service,
    store,
    tenancy,
    metrics,
    rulesDir,
    advance: (ms) => (now += ms),
    setTick: (ms) => (tick = ms),
    auditLines: () => parseJsonLines(sink),
    async request(method, url, body, tenant) {
      const headers: Record<string, string> = {};
      if (tenant !== undefined) headers['x-tenant-id'] = tenant;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await app.inject({
        method: method as 'GET',
        url,
        remoteAddress: '198.51.100.7',
        headers,
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      return { status: res.statusCode, headers: res.headers, body: res.body.length > 0 ? JSON.parse(res.body) : undefined };
    },
    async close() {
      await app.close();
      await audit.close();
      if (owned) rmSync(owned, { recursive: true, force: true });
    },
  };
}

/** A one-terminal ruleset answering `code`. */
export function codeRules(name: string, code: string, version = '1.0.0', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    config: { name, version, entry_step: 'check', ...extra },
    steps: {
      check: { type: 'decision', branches: [{ condition: 'x > 1', next_step: 'done' }], default_next: 'done' },
      done: { type: 'terminal', result: { code, message: `${name} of ${code}` } },
    },
  };
}

/** A ruleset that cycles until the timeout or the step limit ends it. */
export function loopRules(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    config: { name, entry_step: 'a', ...extra },
    steps: {
      a: { type: 'decision', branches: [], default_next: 'b' },
      b: { type: 'decision', branches: [{ condition: 'false', next_step: 'end' }], default_next: 'a' },
      end: { type: 'terminal', result: { code: 'NEVER' } },
    },
  };
}
