/**
 * In-process harness for the HTTP route tests: a real `RuleService` over a real store
 * (MemoryStore, or FileStore in a temp dir), real `Metrics`, an `AuditLog` whose stdout is an
 * in-memory sink (so audit lines can be asserted), and the fastify app of `buildHttpApp`.
 *
 * Requests are injected (light-my-request, the engine of fastify's `app.inject()`, a dev
 * dependency pinned to the version fastify uses) into the request listener of the app's server: the very function
 * a listening server calls, so the hot dispatcher answers the plain execute/eval requests here
 * as in production, and everything else reaches fastify. No socket: the client address of
 * each request can be chosen (audit lines, rate limits).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { RequestListener } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { DispatchFunc, InjectOptions, Response as InjectResponse } from 'light-my-request';
import { AuditLog, Metrics, silentLogger } from '../../../src/observe/index.js';
import { NO_METRICS } from '../../../src/service/ports.js';
import type { Role } from '../../../src/service/role-guard.js';
import { RuleService } from '../../../src/service/rule-service.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { FileStore, MemoryStore, type RuleStore, type RwLock } from '../../../src/store/index.js';
import { buildHttpApp } from '../../../src/transport/http/app.js';
import type { HttpAuth } from '../../../src/transport/http/auth.js';
import type { BehaviorFn } from '../../../src/change/index.js';
import { parseJsonLines } from '../../helpers/json-lines.js';

/** Options of `makeHarness`. */
export interface HarnessOptions {
  /** Persistent mode: a FileStore in this dir (created by the caller), or `true` for a fresh temp dir. */
  rulesDir?: string | true;
  role?: Role;
  writerAddr?: string | null;
  maxBatchSize?: number;
  executionTimeoutMs?: number;
  maxSteps?: number;
  sampleRate?: number;
  bodyLimit?: number;
  /** `--max-response-bytes` (default 10 MiB). */
  maxResponseBytes?: number;
  requestTimeoutMs?: number;
  metricsEnabled?: boolean;
  /** The store's lock (tests hold it to fail readiness). */
  lock?: RwLock;
  /** Readiness lock wait (default 2000 ms as in SPEC.md). */
  readyLockTimeoutMs?: number;
  /** Authentication (EXTENSIONS.md 1); absent: off. */
  auth?: HttpAuth;
  /** The behavioural diff behind the diff route's `behavior` (EXTENSIONS.md 4); absent: null. */
  behavior?: BehaviorFn;
}

/** A ready app and everything behind it. */
export interface Harness {
  readonly app: FastifyInstance;
  readonly service: RuleService;
  readonly store: RuleStore;
  readonly audit: AuditLog;
  readonly metrics: Metrics | null;
  /** The rules dir in persistent mode, else null. */
  readonly rulesDir: string | null;
  /** Parsed audit lines written so far. */
  auditLines(): Record<string, unknown>[];
  /** Requests that reached fastify's `onRequest` hooks so far (not the hot dispatcher's). */
  fastifyRequests(): number;
  /** Sends a request; `body` objects are sent as JSON. */
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>, remoteAddress?: string): Promise<Reply>;
  close(): Promise<void>;
}

/** A parsed answer. */
export interface Reply {
  status: number;
  headers: Record<string, unknown>;
  /** Parsed JSON, or undefined for an empty body. */
  body: any;
  text: string;
}

/** fastify's injection engine, resolved where fastify resolves it. */
const require = createRequire(import.meta.url);
const inject = require('light-my-request') as (dispatch: DispatchFunc, options: InjectOptions) => Promise<InjectResponse>;

/** The address every harness request comes from unless told otherwise (RFC 5737 test range). */
export const CLIENT_IP = '198.51.100.23';

/** Builds the harness. */
export async function makeHarness(options: HarnessOptions = {}): Promise<Harness> {
  let ownedDir: string | null = null;
  let rulesDir: string | null = null;
  if (options.rulesDir === true) {
    ownedDir = mkdtempSync(join(tmpdir(), 'svc-http-'));
    rulesDir = ownedDir;
  } else if (typeof options.rulesDir === 'string') {
    rulesDir = options.rulesDir;
  }
  const lock = options.lock ? { lock: options.lock } : {};
  const store: RuleStore = rulesDir ? new FileStore({ rulesDir, ...lock }) : new MemoryStore(lock);
  const sink: string[] = [];
  const audit = new AuditLog({ stdout: { write: (chunk: string) => sink.push(chunk) }, sampleRate: options.sampleRate ?? 100 });
  const metrics = options.metricsEnabled === false ? null : new Metrics({ version: '9.9.9-test', rulesCount: () => store.count() });
  const service = new RuleService(
    {
      version: '9.9.9-test',
      role: options.role ?? 'standalone',
      writerAddr: options.writerAddr ?? null,
      executionTimeoutMs: options.executionTimeoutMs ?? 5000,
      maxSteps: options.maxSteps ?? 10_000,
      maxBatchSize: options.maxBatchSize ?? 10_000,
      signature: { ...DISABLED_SIGNATURE_POLICY },
      ...(options.readyLockTimeoutMs !== undefined ? { readyLockTimeoutMs: options.readyLockTimeoutMs } : {}),
    },
    {
      store,
      metrics: metrics ?? NO_METRICS,
      audit,
      sampler: audit.sampler,
      logger: silentLogger(),
      clock: () => performance.now(),
      now: Date.now,
      ...(options.behavior ? { behavior: options.behavior } : {}),
    },
  );
  await store.load(service.prepareFile);
  const app = buildHttpApp(service, {
    bodyLimit: options.bodyLimit ?? 10 * 1024 * 1024,
    ...(options.maxResponseBytes !== undefined ? { maxResponseBytes: options.maxResponseBytes } : {}),
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    debugMode: false,
    multiTenancy: false,
    ...(options.auth ? { auth: options.auth } : {}),
    ...(metrics ? { metrics: async () => ({ contentType: metrics.contentType, body: await metrics.render() }) } : {}),
  });
  let fastifyRequests = 0;
  app.addHook('onRequest', (_req, _reply, done) => {
    fastifyRequests++;
    done();
  });
  await app.ready();
  // The listener production traffic reaches: the hot dispatcher in front of fastify's handler.
  const listener = app.server.listeners('request')[0] as RequestListener;

  return {
    app,
    service,
    store,
    audit,
    metrics,
    rulesDir,
    auditLines: () => parseJsonLines(sink),
    fastifyRequests: () => fastifyRequests,
    async request(method, url, body, headers = {}, remoteAddress = CLIENT_IP) {
      const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const res = await inject(listener as DispatchFunc, {
        method: method as 'GET',
        url,
        remoteAddress,
        headers: payload !== undefined ? { 'content-type': 'application/json', ...headers } : headers,
        ...(payload !== undefined ? { payload } : {}),
      });
      let parsed: unknown;
      if (res.body.length > 0) {
        try {
          parsed = JSON.parse(res.body);
        } catch {
          parsed = undefined;
        }
      }
      return { status: res.statusCode, headers: res.headers, body: parsed, text: res.body };
    },
    async close() {
      await app.close();
      await audit.close();
      if (ownedDir) rmSync(ownedDir, { recursive: true, force: true });
    },
  };
}

/** A small valid ruleset: age decides ADULT/MINOR; `version` and `code` make contents distinguishable. */
export function ageRules(name = 'age', options: { version?: string; description?: string; adultCode?: string } = {}): Record<string, unknown> {
  return {
    config: {
      name,
      version: options.version ?? '1.0.0',
      entry_step: 'check',
      ...(options.description !== undefined ? { description: options.description } : {}),
    },
    steps: {
      check: {
        type: 'decision',
        name: 'Check age',
        branches: [{ condition: 'user.age >= 18', next_step: 'adult' }],
        default_next: 'minor',
      },
      adult: { type: 'terminal', result: { code: options.adultCode ?? 'ADULT', message: 'grown up', tier: 'full' } },
      minor: { type: 'terminal', result: { code: 'MINOR', message: 'too young' } },
    },
  };
}

/**
 * Asserts a catalog error answer: the status, `{error: <non-empty string>, code}`, and the
 * message matching `message` when given. Returns the body for further checks.
 */
export function assertError(reply: Reply, status: number, code: string, message?: RegExp): Record<string, unknown> {
  const where = `${status} ${code}; got ${reply.status} ${reply.text.slice(0, 300)}`;
  assert.equal(reply.status, status, where);
  assert.equal(typeof reply.body, 'object', where);
  assert.equal(reply.body.code, code, where);
  assert.equal(typeof reply.body.error, 'string', where);
  assert.ok(reply.body.error.length > 0, where);
  if (message) assert.match(reply.body.error, message);
  assert.match(String(reply.headers['content-type']), /^application\/json/);
  return reply.body as Record<string, unknown>;
}
