/**
 * The hot dispatcher of the hot HTTP routes (src/transport/http/hot-dispatch.ts) over real sockets:
 *
 * - parity: two apps over the SAME RuleService, one with the hot dispatcher (default) and one with
 *   `hotDispatch: false`, answer a matrix of requests identically (status, every header but
 *   `date`, the body text with `duration_us` blanked) and write the same audit lines;
 * - the hot dispatcher is really taken: plain execute/eval requests never reach fastify's
 *   `onRequest` hooks on the hot-dispatch app, while every fallback request does;
 * - it is not installed with debug mode (CORS) or the request log;
 * - body read timeout (408 with the catalog body and `Connection: close`) on both paths;
 * - draining: a request on a kept-alive connection after `app.close()` started is 503
 *   NOT_READY, and a request the hot dispatcher took before the drain is answered with
 *   `Connection: close`.
 *
 * Every app listens on 127.0.0.1 port 0; requests go through node:http (`rawRequest`, paths
 * sent exactly as written) or a raw TCP socket.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { AuditLog, Metrics, silentLogger } from '../../src/observe/index.js';
import type { RuleService } from '../../src/service/rule-service.js';
import { setupTenancy, type Tenancy } from '../../src/service/tenancy.js';
import { MemoryStore } from '../../src/store/index.js';
import { buildHttpApp, type HttpAppOptions } from '../../src/transport/http/app.js';
import { ageRules, isCatalogError, rawExchange, rawRequest, testRuleService, type RawReply } from './http-support.js';
import { parseJsonLines } from '../helpers/json-lines.js';

const API = '/api/v1';
/** A small body limit, so that the 413 bodies stay small. */
const BODY_LIMIT = 64 * 1024;
const JSON_UTF8 = 'application/json; charset=utf-8';

// ------------------------------------------------------------------ fixtures

/** A RuleService as test/unit/http/harness.ts builds it, with an in-memory audit sink. */
interface Backend {
  readonly service: RuleService;
  readonly tenancy: Tenancy | null;
  /** Parsed audit lines written so far. */
  auditLines(): Record<string, unknown>[];
  close(): Promise<void>;
}

async function makeBackend(options: { multiTenancy?: boolean } = {}): Promise<Backend> {
  const store = new MemoryStore();
  const sink: string[] = [];
  const audit = new AuditLog({ stdout: { write: (chunk: string) => sink.push(chunk) }, sampleRate: 100 });
  const metrics = new Metrics({ version: '9.9.9-test', rulesCount: () => store.count(), tenantLabel: options.multiTenancy === true });
  const logger = silentLogger();
  // NOTE: a fixed clock for the tenant rate limiters, so that `retry_after_ms` is the same
  // number on both paths; executions are timed with the real clock.
  const tenancy = options.multiTenancy
    ? await setupTenancy({
        config: { rulesDir: null, role: 'standalone', writerAddr: null },
        store,
        audit,
        logger,
        clock: () => 1000,
      })
    : null;
  const service = testRuleService({
    store,
    metrics,
    audit,
    sampler: audit.sampler,
    logger,
    clock: () => performance.now(),
    now: Date.now,
    ...(tenancy ? { tenancy: tenancy.registry } : {}),
  });
  await store.load(service.prepareFile);
  return {
    service,
    tenancy,
    auditLines: () => parseJsonLines(sink),
    close: () => audit.close(),
  };
}

/** A listening app with a counter of the requests that reached fastify's `onRequest` hooks. */
interface Served {
  readonly app: FastifyInstance;
  readonly url: string;
  /** Requests that reached fastify's `onRequest` hooks so far. */
  hits(): number;
  /** Runs `fn` in a `preClose` hook registered after the app's own (the server is draining). */
  onDrain(fn: () => Promise<void>): void;
}

async function serve(t: TestContext, backend: Backend, options: Partial<HttpAppOptions> = {}): Promise<Served> {
  const app = buildHttpApp(backend.service, {
    bodyLimit: BODY_LIMIT,
    requestTimeoutMs: 30_000,
    debugMode: false,
    multiTenancy: false,
    ...(backend.tenancy ? { multiTenancy: true, tenants: backend.tenancy.manager } : {}),
    ...options,
  });
  let hits = 0;
  let drain: (() => Promise<void>) | null = null;
  // Registered after buildHttpApp's hooks: it runs when a request reaches fastify and the
  // app's own hooks let it through.
  app.addHook('onRequest', (_req, _reply, done) => {
    hits++;
    done();
  });
  // Registered after the app's preClose hook (which starts the drain).
  app.addHook('preClose', async () => {
    if (drain !== null) await drain();
  });
  t.after(async () => {
    const closing = app.close();
    // A failed test may leave a request in flight, which would hold the close open.
    app.server.closeAllConnections();
    await closing;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    hits: () => hits,
    onDrain: (fn) => {
      drain = fn;
    },
  };
}

/** A ruleset that fails at run time on an input without `user.age` (strict missing fields). */
function strictRules(name: string): Record<string, unknown> {
  const doc = ageRules(name) as { config: Record<string, unknown> };
  return { ...doc, config: { ...doc.config, field_missing: 'strict' } };
}

/** A ruleset answering `code` for any input. */
function codeRules(name: string, code: string): Record<string, unknown> {
  return {
    config: { name, version: '1.0.0', entry_step: 'check' },
    steps: {
      check: { type: 'decision', branches: [{ condition: 'n > 1', next_step: 'done' }], default_next: 'done' },
      done: { type: 'terminal', result: { code, message: `${name} of ${code}` } },
    },
  };
}

async function createRuleset(url: string, doc: Record<string, unknown>, headers: Record<string, string> = {}): Promise<void> {
  const res = await rawRequest(url, 'POST', `${API}/rulesets`, JSON.stringify(doc), headers);
  assert.equal(res.status, 200, `create ruleset: ${res.text}`);
}

// ------------------------------------------------------------------ the request matrix

interface Case {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: string | Buffer;
  readonly headers?: Record<string, string>;
  readonly chunked?: boolean;
  /** The expected status (on both apps). */
  readonly status: number;
  /** The expected catalog code of an error answer. */
  readonly code?: string;
  /** True when the hot-dispatch app answers it without fastify (no `onRequest` hook runs). */
  readonly fast: boolean;
  /** Answered by fastify's router before any hook runs (a path parameter over 128 characters). */
  readonly router?: boolean;
  /** The JSON body reader rejects the body after reading it whole (400): the connection closes. */
  readonly bodyError?: boolean;
}

const json = (v: unknown): string => JSON.stringify(v);
const execute = (name: string) => `${API}/execute/${name}`;
const EVAL = `${API}/eval`;
const ADULT = json({ input: { user: { age: 30 } } });

/** Nesting `depth` arrays inside `{"input":{"x": ... }}` (2 levels of objects). */
function nested(arrays: number): string {
  return `{"input":{"x":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`;
}

const TOO_LARGE = json({ input: { pad: 'x'.repeat(BODY_LIMIT + 1000) } });

const MATRIX: readonly Case[] = [
  // execute: answers of the route
  { name: 'execute success', method: 'POST', path: execute('age'), body: ADULT, status: 200, fast: true },
  { name: 'execute success (other terminal)', method: 'POST', path: execute('age'), body: json({ input: { user: { age: 3 } } }), status: 200, fast: true },
  {
    name: 'execute with trace: true',
    method: 'POST',
    path: execute('age'),
    body: json({ input: { user: { age: 30 } }, trace: true }),
    status: 200,
    fast: true,
  },
  {
    name: 'execute with trace: false',
    method: 'POST',
    path: execute('age'),
    body: json({ input: { user: { age: 30 } }, trace: false }),
    status: 200,
    fast: true,
  },
  {
    name: 'execute with trace: null',
    method: 'POST',
    path: execute('age'),
    body: json({ input: { user: { age: 30 } }, trace: null }),
    status: 200,
    fast: true,
  },
  {
    name: 'execute with trace not boolean',
    method: 'POST',
    path: execute('age'),
    body: json({ input: {}, trace: 'yes' }),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  { name: 'execute with input missing', method: 'POST', path: execute('age'), body: json({ trace: true }), status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'execute with input not an object', method: 'POST', path: execute('age'), body: json({ input: 5 }), status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'execute with input null', method: 'POST', path: execute('age'), body: json({ input: null }), status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'execute with a JSON array body', method: 'POST', path: execute('age'), body: '[{"input":{}}]', status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'execute with a JSON string body', method: 'POST', path: execute('age'), body: '"input"', status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'execute with a JSON null body', method: 'POST', path: execute('age'), body: 'null', status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'execute of an unknown ruleset', method: 'POST', path: execute('nope'), body: ADULT, status: 404, code: 'NOT_FOUND', fast: true },
  {
    name: 'execute that fails at run time',
    method: 'POST',
    path: execute('strict'),
    body: json({ input: {} }),
    status: 500,
    code: 'INTERNAL_ERROR',
    fast: true,
  },
  {
    name: 'execute with an X-Tenant-Id header (multi-tenancy off)',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'x-tenant-id': 'ghost' },
    status: 200,
    fast: true,
  },
  {
    name: 'execute with an extra top-level key',
    method: 'POST',
    path: execute('age'),
    body: json({ input: { user: { age: 30 } }, other: [1] }),
    status: 200,
    fast: true,
  },
  // ruleset names and paths
  { name: 'name ".x" (leading dot)', method: 'POST', path: execute('.x'), body: ADULT, status: 400, code: 'BAD_REQUEST', fast: false },
  { name: 'name "a..b"', method: 'POST', path: execute('a..b'), body: ADULT, status: 404, code: 'NOT_FOUND', fast: true },
  { name: 'name of 128 characters', method: 'POST', path: execute('a'.repeat(128)), body: ADULT, status: 404, code: 'NOT_FOUND', fast: true },
  { name: 'name of 129 characters', method: 'POST', path: execute('a'.repeat(129)), body: ADULT, status: 400, code: 'BAD_REQUEST', fast: false, router: true },
  { name: 'name with %2e (".x" encoded)', method: 'POST', path: execute('%2ex'), body: ADULT, status: 400, code: 'BAD_REQUEST', fast: false },
  { name: 'name with %65 ("age" encoded)', method: 'POST', path: execute('ag%65'), body: ADULT, status: 200, fast: false },
  { name: 'name with %2e%2e', method: 'POST', path: execute('%2e%2e'), body: ADULT, status: 400, code: 'BAD_REQUEST', fast: false },
  { name: 'execute with a query string', method: 'POST', path: `${execute('age')}?a=1`, body: ADULT, status: 200, fast: false },
  { name: 'execute with an empty query string', method: 'POST', path: `${execute('age')}?`, body: ADULT, status: 200, fast: false },
  { name: 'execute with a trailing slash', method: 'POST', path: `${execute('age')}/`, body: ADULT, status: 404, code: 'NOT_FOUND', fast: false },
  { name: 'execute with an empty name', method: 'POST', path: execute(''), body: ADULT, status: 400, code: 'BAD_REQUEST', fast: false },
  {
    name: 'execute batch route (not a hot route)',
    method: 'POST',
    path: `${execute('age')}/batch`,
    body: json({ inputs: [{ user: { age: 30 } }] }),
    status: 200,
    fast: false,
  },
  // body reading and parsing
  { bodyError: true, name: 'malformed JSON', method: 'POST', path: execute('age'), body: '{"input":', status: 400, code: 'BAD_REQUEST', fast: true },
  {
    bodyError: true,
    name: 'malformed JSON (trailing garbage)',
    method: 'POST',
    path: execute('age'),
    body: '{"input":{}}}',
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  { bodyError: true, name: 'empty body', method: 'POST', path: execute('age'), body: '', status: 400, code: 'BAD_REQUEST', fast: true },
  { bodyError: true, name: 'whitespace body', method: 'POST', path: execute('age'), body: ' \n ', status: 400, code: 'BAD_REQUEST', fast: true },
  {
    name: 'invalid UTF-8 in the body',
    method: 'POST',
    path: execute('age'),
    body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  { name: 'body nested exactly 512 levels', method: 'POST', path: execute('age'), body: nested(510), status: 200, fast: true },
  {
    bodyError: true,
    name: 'body nested deeper than 512 levels',
    method: 'POST',
    path: execute('age'),
    body: nested(600),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  {
    bodyError: true,
    name: 'a __proto__ key',
    method: 'POST',
    path: execute('age'),
    body: '{"input":{"user":{"age":30,"__proto__":{"admin":true}}}}',
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  {
    bodyError: true,
    name: 'an escaped "\\u0063onstructor": {"prototype": {}} key',
    method: 'POST',
    path: execute('age'),
    body: '{"input":{"user":{"age":30},"\\u0063onstructor":{"prototype":{}}}}',
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  {
    name: 'a "constructor" key without prototype',
    method: 'POST',
    path: execute('age'),
    body: '{"input":{"user":{"age":30},"constructor":{"x":1}}}',
    status: 200,
    fast: true,
  },
  {
    name: 'body over the limit with Content-Length',
    method: 'POST',
    path: execute('age'),
    body: TOO_LARGE,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    fast: true,
  },
  {
    name: 'body over the limit, chunked',
    method: 'POST',
    path: execute('age'),
    body: TOO_LARGE,
    chunked: true,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    fast: true,
  },
  { name: 'body within the limit, chunked', method: 'POST', path: execute('age'), body: ADULT, chunked: true, status: 200, fast: true },
  {
    name: 'eval body over the limit',
    method: 'POST',
    path: EVAL,
    body: json({ expression: '1', context: { pad: 'x'.repeat(BODY_LIMIT) } }),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    fast: true,
  },
  // content types
  {
    name: 'content-type application/json; charset=utf-8',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    status: 200,
    fast: true,
  },
  {
    name: 'content-type application/json;charset=utf-8',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'content-type': 'application/json;charset=utf-8' },
    status: 200,
    fast: true,
  },
  {
    name: 'content-type application/json; charset=UTF-8',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    status: 200,
    fast: true,
  },
  {
    name: 'content-type Application/JSON',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'content-type': 'Application/JSON' },
    status: 200,
    fast: false,
  },
  {
    name: 'content-type application/json; charset=latin1',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'content-type': 'application/json; charset=latin1' },
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    fast: false,
    bodyError: true,
  },
  {
    name: 'content-type text/plain',
    method: 'POST',
    path: execute('age'),
    body: ADULT,
    headers: { 'content-type': 'text/plain' },
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    fast: false,
  },
  {
    name: 'content-type text/plain on eval',
    method: 'POST',
    path: EVAL,
    body: '{"expression":"1"}',
    headers: { 'content-type': 'text/plain' },
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    fast: false,
  },
  // eval
  { name: 'eval success', method: 'POST', path: EVAL, body: json({ expression: 'a + 2', context: { a: 1 } }), status: 200, fast: true },
  { name: 'eval success without context', method: 'POST', path: EVAL, body: json({ expression: '"x" + "y"' }), status: 200, fast: true },
  {
    name: 'eval with a syntax error',
    method: 'POST',
    path: EVAL,
    body: json({ expression: '1 +', context: {} }),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  {
    name: 'eval with a run-time error',
    method: 'POST',
    path: EVAL,
    body: json({ expression: 'a.b.c + 1', context: { a: 1 } }),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  {
    name: 'eval with expression not a string',
    method: 'POST',
    path: EVAL,
    body: json({ expression: 5, context: {} }),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  {
    name: 'eval with context not an object',
    method: 'POST',
    path: EVAL,
    body: json({ expression: '1', context: [1] }),
    status: 400,
    code: 'BAD_REQUEST',
    fast: true,
  },
  { bodyError: true, name: 'eval with malformed JSON', method: 'POST', path: EVAL, body: '{"expression":"1",}', status: 400, code: 'BAD_REQUEST', fast: true },
  { bodyError: true, name: 'eval with an empty body', method: 'POST', path: EVAL, body: '', status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'eval with a JSON array body', method: 'POST', path: EVAL, body: '[]', status: 400, code: 'BAD_REQUEST', fast: true },
  { name: 'eval with a query string', method: 'POST', path: `${EVAL}?x=1`, body: json({ expression: '1 + 1' }), status: 200, fast: false },
  // methods
  { name: 'GET on the execute path', method: 'GET', path: execute('age'), status: 405, code: 'METHOD_NOT_ALLOWED', fast: false },
  { name: 'PUT on the execute path', method: 'PUT', path: execute('age'), body: ADULT, status: 405, code: 'METHOD_NOT_ALLOWED', fast: false },
  { name: 'GET on the eval path', method: 'GET', path: EVAL, status: 405, code: 'METHOD_NOT_ALLOWED', fast: false },
];

const DURATION = /"(?:total_)?duration_us":-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** What must be equal on both paths: status, headers but `date`, body with durations blanked. */
function comparable(r: RawReply): { status: number; headers: Record<string, unknown>; text: string } {
  const text = r.text.replace(DURATION, (m) => `${m.slice(0, m.indexOf(':'))}:"<n>"`);
  const headers: Record<string, unknown> = {};
  for (const key of Object.keys(r.headers).sort()) if (key !== 'date') headers[key] = r.headers[key];
  if (headers['content-length'] !== undefined) {
    // The length is the body's; durations of another width change it, so it is compared for
    // the blanked body after checking it against the real one.
    assert.equal(Number(headers['content-length']), Buffer.byteLength(r.text), 'content-length is the length of the body');
    headers['content-length'] = `<${Buffer.byteLength(text)}>`;
  }
  return { status: r.status, headers, text };
}

/** Audit lines without their time-dependent fields. */
const auditShape = (lines: Record<string, unknown>[]) =>
  lines.map((l) => {
    const { timestamp: _t, duration_us: _d, ...rest } = l;
    return rest;
  });

function send(url: string, c: Case, extraHeaders: Record<string, string>): Promise<RawReply> {
  return rawRequest(url, c.method, c.path, c.body, { ...extraHeaders, ...(c.headers ?? {}) }, c.chunked === true);
}

/**
 * Sends `c` to the hot-dispatch app, then to the fastify-only app, and asserts identical answers,
 * identical audit lines, the expected status, and which app ran fastify's hooks.
 */
async function assertSameAnswer(c: Case, fast: Served, slow: Served, backend: Backend, extraHeaders: Record<string, string> = {}): Promise<RawReply> {
  const where = `${c.name} (${c.method} ${c.path.slice(0, 80)}${extraHeaders['connection'] ? `, connection: ${extraHeaders['connection']}` : ''})`;
  const auditBefore = backend.auditLines().length;
  const hitsBefore = [fast.hits(), slow.hits()] as const;
  const a = await send(fast.url, c, extraHeaders);
  const auditMid = backend.auditLines().length;
  const b = await send(slow.url, c, extraHeaders);
  const audit = backend.auditLines();

  assert.deepEqual(comparable(a), comparable(b), `${where}: same answer on both paths`);
  assert.equal(a.status, c.status, `${where}: status; got ${a.status} ${a.text.slice(0, 300)}`);
  if (c.code !== undefined) assert.ok(isCatalogError(a, c.status, c.code), `${where}: catalog error ${c.code}; got ${a.text.slice(0, 300)}`);
  if (a.status >= 400 || c.method === 'POST') assert.match(String(a.headers['content-type']), /^application\/json; charset=utf-8$/, where);
  assert.deepEqual(auditShape(audit.slice(auditBefore, auditMid)), auditShape(audit.slice(auditMid)), `${where}: same audit lines`);
  const hooks = c.router === true ? 0 : 1;
  assert.equal(
    fast.hits() - hitsBefore[0],
    c.fast ? 0 : hooks,
    `${where}: ${c.fast ? 'answered by the hot dispatcher' : 'handed to fastify'} on the hot-dispatch app`,
  );
  assert.equal(slow.hits() - hitsBefore[1], hooks, `${where}: fastify on the hotDispatch: false app`);
  return a;
}

// ------------------------------------------------------------------ tests

test('parity: the hot dispatcher (with and without the HTTP/1.1 fast path) and fastify answer the request matrix identically', async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  // NOTE: node's client sends `Connection: close` unless told otherwise, which the fast path
  // leaves to node; with `Connection: keep-alive` its plain requests take the fast path.
  const withFastPath = await serve(t, backend);
  const withoutFastPath = await serve(t, backend, { httpFastPath: false });
  const slow = await serve(t, backend, { hotDispatch: false });
  await createRuleset(slow.url, ageRules('age'));
  await createRuleset(slow.url, strictRules('strict'));

  for (const [fast, connection] of [
    [withFastPath, undefined],
    [withFastPath, 'keep-alive'],
    [withoutFastPath, undefined],
    [withoutFastPath, 'keep-alive'],
  ] as const) {
    const extra: Record<string, string> = connection ? { connection } : {};
    for (const c of MATRIX) {
      const a = await assertSameAnswer(c, fast, slow, backend, extra);
      if (c.status === 413) assert.equal(a.headers['connection'], 'close', `${c.name}: a 413 closes the connection`);
      if (c.status === 405) assert.equal(a.headers['allow'], 'POST', `${c.name}: allow header`);
      // A body that cannot be parsed closes the connection on both paths (fastify's rule).
      if (c.bodyError === true) assert.equal(a.headers['connection'], 'close', `${c.name}: a body error closes the connection`);
      if (connection === 'keep-alive' && c.status !== 413 && c.bodyError !== true) {
        assert.equal(a.headers['connection'], 'keep-alive', `${c.name}: kept alive`);
        assert.match(String(a.headers['keep-alive']), /^timeout=\d+$/, `${c.name}: keep-alive header`);
      }
    }
  }
});

test('parity: the answers of the hot dispatcher are the ones of the routes (spot checks)', async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const fast = await serve(t, backend);
  await createRuleset(fast.url, ageRules('age'));

  const ok = await rawRequest(fast.url, 'POST', execute('age'), ADULT);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['content-type'], JSON_UTF8);
  assert.deepEqual({ ...ok.body, duration_us: 0 }, { code: 'ADULT', message: 'grown up', output: {}, duration_us: 0 });
  assert.ok(Number.isInteger(ok.body.duration_us) && ok.body.duration_us >= 0);

  const traced = await rawRequest(fast.url, 'POST', execute('age'), json({ input: { user: { age: 30 } }, trace: true }));
  assert.equal(traced.status, 200);
  assert.equal(traced.body.trace.path, 'check -> adult');

  const ev = await rawRequest(fast.url, 'POST', EVAL, json({ expression: 'a + 2', context: { a: 1 } }));
  assert.equal(ev.status, 200);
  assert.equal(ev.text, '{"result":3,"parsed":"(+ a 2)"}');

  const syntax = await rawRequest(fast.url, 'POST', EVAL, json({ expression: '1 +', context: {} }));
  assert.ok(isCatalogError(syntax, 400, 'BAD_REQUEST'));
  assert.match(syntax.body.error, /^parse error: /);
  assert.equal(typeof syntax.body.position, 'number');
});

test('parity: audit lines of a successful execute are the same on both paths', async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const fast = await serve(t, backend);
  const slow = await serve(t, backend, { hotDispatch: false });
  await createRuleset(slow.url, ageRules('age'));

  const lines: Record<string, unknown>[] = [];
  for (const target of [fast, slow]) {
    const before = backend.auditLines().length;
    const res = await rawRequest(target.url, 'POST', execute('age'), ADULT);
    assert.equal(res.status, 200);
    const added = backend.auditLines().slice(before);
    assert.equal(added.length, 1, 'one audit line per execution (sample rate 100)');
    lines.push(added[0]!);
  }
  const [a, b] = lines as [Record<string, unknown>, Record<string, unknown>];
  for (const line of [a, b]) {
    assert.equal(line['event'], 'rule_executed');
    assert.equal(line['rule_name'], 'age');
    assert.equal(line['result'], 'success');
    assert.equal(line['source_ip'], '127.0.0.1');
    assert.equal(typeof line['duration_us'], 'number');
  }
  assert.deepEqual(Object.keys(a), Object.keys(b), 'same fields in the same order');
  assert.deepEqual(auditShape([a]), auditShape([b]));
});

test('parity: multi-tenancy, X-Tenant-Id selects the tenant on both paths', async (t) => {
  const backend = await makeBackend({ multiTenancy: true });
  t.after(() => backend.close());
  const fast = await serve(t, backend);
  const slow = await serve(t, backend, { hotDispatch: false });
  for (const tenant of [{ id: 'alpha' }, { id: 'beta' }, { id: 'sleepy', enabled: false }, { id: 'tight', qps_limit: 0.001, burst: 2 }]) {
    const res = await rawRequest(slow.url, 'POST', `${API}/tenants`, json(tenant));
    assert.equal(res.status, 201, `create tenant: ${res.text}`);
  }
  for (const [tenant, code] of [
    ['alpha', 'A'],
    ['beta', 'B'],
    ['tight', 'T'],
  ] as const) {
    await createRuleset(slow.url, codeRules('shared', code), { 'x-tenant-id': tenant });
  }
  await createRuleset(slow.url, codeRules('shared', 'D'));

  const run = (tenant: string | undefined, status: number, code?: string, extra: Partial<Case> = {}): Case => ({
    name: `execute as ${tenant ?? '(no header)'}`,
    method: 'POST',
    path: execute('shared'),
    body: json({ input: { n: 2 } }),
    headers: tenant === undefined ? {} : { 'x-tenant-id': tenant },
    status,
    ...(code !== undefined ? { code } : {}),
    fast: true,
    ...extra,
  });
  const cases: Case[] = [
    run('alpha', 200),
    run('beta', 200),
    run(undefined, 200),
    run('', 200),
    run('default', 200),
    run('ghost', 404, 'TENANT_NOT_FOUND'),
    run('sleepy', 404, 'TENANT_NOT_FOUND'),
    run('alpha', 404, 'NOT_FOUND', { name: 'execute of an unknown ruleset as alpha', path: execute('nope') }),
    run('ghost', 404, 'TENANT_NOT_FOUND', { name: 'eval as ghost', path: EVAL, body: json({ expression: '1 + 2' }) }),
    run('beta', 200, undefined, { name: 'eval as beta', path: EVAL, body: json({ expression: '1 + 2' }) }),
    run('alpha', 200, undefined, { name: 'execute as alpha with a query string', path: `${execute('shared')}?x=1`, fast: false }),
    run('ghost', 404, 'TENANT_NOT_FOUND', { name: 'execute as ghost with a query string', path: `${execute('shared')}?x=1`, fast: false }),
    // burst 2: one token for each app, then both are refused (the same retry_after_ms, fixed clock)
    run('tight', 200),
    run('tight', 429, 'RATE_LIMITED'),
  ];
  const answers = new Map<string, string>();
  for (const c of cases) {
    const a = await assertSameAnswer(c, fast, slow, backend);
    if (c.status === 200 && c.path === execute('shared')) answers.set(c.headers?.['x-tenant-id'] ?? '(none)', a.body.code);
  }
  assert.deepEqual(
    Object.fromEntries(answers),
    { alpha: 'A', beta: 'B', '(none)': 'D', '': 'D', default: 'D', tight: 'T' },
    'each tenant runs its own ruleset',
  );
  const tenantLines = backend.auditLines().filter((l) => l['event'] === 'rule_executed');
  assert.ok(
    tenantLines.some((l) => l['tenant_id'] === 'alpha'),
    'audit lines name the tenant',
  );
});

test('the hot dispatcher is taken: plain execute/eval requests never reach fastify hooks on the hot-dispatch app', async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const fast = await serve(t, backend);
  const slow = await serve(t, backend, { hotDispatch: false });
  await createRuleset(fast.url, ageRules('age'));
  assert.equal(fast.hits(), 1, 'the ruleset POST went through fastify');

  const plain: Array<[string, string, Record<string, string>]> = [
    [execute('age'), ADULT, {}],
    [execute('age'), ADULT, { 'content-type': JSON_UTF8 }],
    [EVAL, json({ expression: '1 + 1' }), {}],
    [execute('nope'), ADULT, {}],
    [execute('age'), '{"input":', {}],
  ];
  for (const [path, body, headers] of plain) {
    const before = [fast.hits(), slow.hits()] as const;
    const a = await rawRequest(fast.url, 'POST', path, body, headers);
    const b = await rawRequest(slow.url, 'POST', path, body, headers);
    assert.equal(a.status, b.status);
    assert.equal(fast.hits(), before[0], `${path} ${body}: not seen by fastify on the hot-dispatch app`);
    assert.equal(slow.hits(), before[1] + 1, `${path} ${body}: seen by fastify with hotDispatch: false`);
  }

  const fallback: Array<[string, string, string | undefined, Record<string, string>]> = [
    ['POST', `${execute('age')}?a=1`, ADULT, {}],
    ['POST', `${EVAL}?a=1`, json({ expression: '1' }), {}],
    ['POST', execute('age'), ADULT, { 'content-type': 'text/plain' }],
    ['POST', execute('ag%65'), ADULT, {}],
    ['GET', execute('age'), undefined, {}],
    ['GET', EVAL, undefined, {}],
    ['POST', `${API}/rulesets`, json(ageRules('other')), {}],
  ];
  for (const [method, path, body, headers] of fallback) {
    const before = fast.hits();
    await rawRequest(fast.url, method, path, body, headers);
    assert.equal(fast.hits(), before + 1, `${method} ${path} ${JSON.stringify(headers)}: handed to fastify`);
  }
});

test('the hot dispatcher is not installed with debug mode (CORS on every answer)', async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const debug = await serve(t, backend, { debugMode: true, debugRuleset: (ctx, name) => backend.service.debugRuleset(ctx, name) });
  await createRuleset(debug.url, ageRules('age'));

  for (const [path, body] of [
    [execute('age'), ADULT],
    [EVAL, json({ expression: '1 + 1' })],
    [execute('nope'), ADULT],
  ] as const) {
    const before = debug.hits();
    const res = await rawRequest(debug.url, 'POST', path, body);
    assert.equal(res.headers['access-control-allow-origin'], '*', `${path}: CORS header`);
    assert.equal(debug.hits(), before + 1, `${path}: fastify hooks ran`);
  }
  const ok = await rawRequest(debug.url, 'POST', execute('age'), ADULT);
  assert.equal(ok.status, 200);
  assert.equal(ok.body.code, 'ADULT');
});

test('the hot dispatcher is not installed with the request log (every request is logged)', async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const logged: Array<Record<string, unknown>> = [];
  const app = await serve(t, backend, { requestLog: { debug: (obj) => logged.push(obj as Record<string, unknown>) } });
  await createRuleset(app.url, ageRules('age'));
  const before = app.hits();
  assert.equal((await rawRequest(app.url, 'POST', execute('age'), ADULT)).status, 200);
  assert.equal((await rawRequest(app.url, 'POST', EVAL, json({ expression: '1' }))).status, 200);
  assert.equal(app.hits(), before + 2);
  assert.deepEqual(
    logged.slice(-2).map((l) => [l['method'], l['url'], l['status']]),
    [
      ['POST', execute('age'), 200],
      ['POST', EVAL, 200],
    ],
  );
});

// ------------------------------------------------------------------ raw TCP connections

/** One parsed answer on a raw connection. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
}

/** A raw TCP connection that reads answers with a Content-Length one by one. */
class Conn {
  private buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private ended = false;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.notify();
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.ended = true;
        this.notify();
        resolve();
      }),
    );
  }

  static async open(t: TestContext, url: string): Promise<Conn> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    t.after(() => {
      socket.destroy();
    });
    await once(socket, 'connect');
    return new Conn(socket);
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** The next complete answer; rejects when the connection closes first. */
  async answer(): Promise<RawAnswer> {
    for (;;) {
      const got = this.take();
      if (got !== null) return got;
      if (this.ended) throw new Error(`connection closed before a complete answer; got ${JSON.stringify(this.buf.toString('utf8'))}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Whether the connection closed with nothing more received. */
  get isClosed(): boolean {
    return this.ended;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private take(): RawAnswer | null {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? '')?.[1] ?? 0);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buf.length < end + 4 + length) return null;
    const text = this.buf.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buf = this.buf.subarray(end + 4 + length);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status, headers, text, body };
  }
}

const head = (method: string, path: string, length: number, extra = ''): string =>
  `${method} ${path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

test('body read timeout: a stalled body gets 408 REQUEST_TIMEOUT with the catalog body and Connection: close on both paths', { timeout: 60_000 }, async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const fast = await serve(t, backend, { requestTimeoutMs: 300 });
  const slow = await serve(t, backend, { requestTimeoutMs: 300, hotDispatch: false });
  await createRuleset(slow.url, ageRules('age'));

  for (const path of [execute('age'), EVAL]) {
    const answers: RawAnswer[] = [];
    for (const target of [fast, slow]) {
      const hits = target.hits();
      const conn = await Conn.open(t, target.url);
      // headers and part of a 50-byte body, then nothing
      conn.write(`${head('POST', path, 50)}{"input":`);
      const answer = await conn.answer();
      await conn.closed; // the server closes the connection after the answer
      assert.equal(answer.status, 408, `${path}: ${answer.text}`);
      assert.ok(isCatalogError({ status: answer.status, body: answer.body }, 408, 'REQUEST_TIMEOUT'), answer.text);
      assert.match(answer.body.error, /request body not received within/);
      assert.equal(answer.headers['connection'], 'close');
      assert.equal(answer.headers['content-type'], JSON_UTF8);
      assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.text));
      assert.equal(target.hits() - hits, target === fast ? 0 : 1, `${path}: which path answered`);
      answers.push(answer);
    }
    const [a, b] = answers as [RawAnswer, RawAnswer];
    const strip = (x: RawAnswer) => ({ status: x.status, text: x.text, headers: { ...x.headers, date: undefined } });
    assert.deepEqual(strip(a), strip(b), `${path}: same 408 on both paths`);
  }
});

test('errors before a request exists (server options of the hot-dispatch server): the same catalog answers on both paths', { timeout: 60_000 }, async (t) => {
  const backend = await makeBackend();
  t.after(() => backend.close());
  const fast = await serve(t, backend, { requestTimeoutMs: 300 });
  const slow = await serve(t, backend, { requestTimeoutMs: 300, hotDispatch: false });
  const payloads: Array<[string, string, number, string]> = [
    ['malformed HTTP', 'GARBAGE / HTTP/1.1\r\n\r\n', 400, 'BAD_REQUEST'],
    // headers that never end: node's header timeout (`http` options passed to the server)
    ['headers not received in time', `POST ${EVAL} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n`, 408, 'REQUEST_TIMEOUT'],
    ['nothing sent', '', 408, 'REQUEST_TIMEOUT'],
  ];
  for (const [what, payload, status, code] of payloads) {
    const [a, b] = [await rawExchange(fast.url, payload), await rawExchange(slow.url, payload)];
    for (const x of [a, b]) {
      assert.ok(isCatalogError(x, status, code), `${what}: ${x.head} ${JSON.stringify(x.body)}`);
      assert.match(x.head, /\r\nConnection: close\r\n/i, what);
    }
    assert.deepEqual(a, b, `${what}: same answer on both paths`);
  }
  assert.equal(fast.hits() + slow.hits(), 0, 'no request reached fastify');
});

test(
  'draining: a kept-alive connection gets 503 NOT_READY after close() started; a request taken before the drain is answered with Connection: close',
  { timeout: 60_000 },
  async (t) => {
    const backend = await makeBackend();
    t.after(() => backend.close());
    const fast = await serve(t, backend);
    await createRuleset(fast.url, ageRules('age'));
    const body = ADULT;

    // A kept-alive connection: one request answered by the hot dispatcher, the connection stays open.
    const idle = await Conn.open(t, fast.url);
    let hits = fast.hits();
    idle.write(`${head('POST', execute('age'), Buffer.byteLength(body))}${body}`);
    const first = await idle.answer();
    assert.equal(first.status, 200);
    assert.equal(first.body.code, 'ADULT');
    assert.equal(first.headers['connection'], 'keep-alive');
    assert.equal(fast.hits(), hits, 'the hot dispatcher answered the first request');

    // A request in flight: `Expect: 100-continue` makes node answer "100 Continue" just before it
    // hands the request to the handler, so the 100 proves the hot dispatcher holds the request.
    const busy = await Conn.open(t, fast.url);
    hits = fast.hits();
    busy.write(head('POST', execute('age'), Buffer.byteLength(body), 'Expect: 100-continue\r\n'));
    assert.equal((await busy.answer()).status, 100);

    let drained: { late: RawAnswer | 'closed'; inflight: RawAnswer } | undefined;
    fast.onDrain(async () => {
      // The app's own preClose hook ran: the server drains, the connections are still open.
      idle.write(`${head('POST', execute('age'), Buffer.byteLength(body))}${body}`);
      const late = await idle.answer().catch(() => 'closed' as const);
      busy.write(body);
      const inflight = await busy.answer();
      drained = { late, inflight };
    });
    await fast.app.close();
    assert.ok(drained !== undefined, 'the drain hook ran');
    const { late, inflight } = drained;

    assert.notEqual(late, 'closed', 'the kept-alive connection was still open in the drain');
    if (late !== 'closed') {
      assert.ok(isCatalogError({ status: late.status, body: late.body }, 503, 'NOT_READY'), `late request: ${late.status} ${late.text}`);
      assert.equal(late.headers['connection'], 'close');
      assert.equal(late.headers['content-type'], JSON_UTF8);
    }
    await idle.closed;

    assert.equal(inflight.status, 200, inflight.text);
    assert.equal(inflight.body.code, 'ADULT');
    assert.equal(inflight.headers['connection'], 'close', 'an answer sent while draining closes the connection');
    assert.equal(
      fast.hits(),
      hits,
      "the in-flight request was answered by the hot dispatcher; the late one by the app's own closing hook (before the counter)",
    );
    await busy.closed;
  },
);
