/**
 * The HTTP/1.1 fast path of the hot routes (src/transport/http/fast-path.ts) over real sockets:
 *
 * - plain kept-alive execute/eval requests are answered without node's request objects (no
 *   'request' event), byte for byte as the hot dispatcher answers them through node (`Date`
 *   and `duration_us` aside), errors included;
 * - pipelined requests are answered in order, and the first request the fast path does not
 *   take goes to node with every byte after it; a request split over two reads goes to node;
 * - requests outside the strict subset (chunked bodies, smuggling attempts, folding, other
 *   versions, `Connection: close`, `Expect`, oversized bodies, missing Host...) are answered
 *   by node exactly as without the fast path;
 * - connection life: the keep-alive timeout, the first request's header timeout, a client's
 *   half-close, shutdown (`app.close()` closes idle fast-path connections at once);
 * - a caller check that is a promise (a JWT seen first) pauses the connection and keeps the
 *   order of the answers.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { AuditLog, Metrics, silentLogger } from '../../src/observe/index.js';
import type { RuleService } from '../../src/service/rule-service.js';
import { MemoryStore } from '../../src/store/index.js';
import { buildHttpApp, type HttpAppOptions } from '../../src/transport/http/app.js';
import { installFastPath, MAX_WAITS } from '../../src/transport/http/fast-path.js';
import type { HotAnswer, HotMatcher, HotRoutes } from '../../src/transport/http/hot-dispatch.js';
import { ageRules, testRuleService } from './http-support.js';

const BODY_LIMIT = 64 * 1024;

// ------------------------------------------------------------------ fixtures

async function makeService(): Promise<{ service: RuleService; close: () => Promise<void> }> {
  const store = new MemoryStore();
  const audit = new AuditLog({ stdout: { write: () => undefined }, sampleRate: 0 });
  const metrics = new Metrics({ version: '9.9.9-test', rulesCount: () => store.count() });
  const service = testRuleService({
    store,
    metrics,
    audit,
    sampler: audit.sampler,
    logger: silentLogger(),
    clock: () => performance.now(),
    now: Date.now,
  });
  await store.load(service.prepareFile);
  await service.putRuleset({ tenant: 'default', sourceIp: null, transport: 'http' }, ageRules('age'));
  return { service, close: () => audit.close() };
}

interface App {
  readonly app: FastifyInstance;
  readonly port: number;
  /** 'request' events of node's HTTP server so far (requests node parsed). */
  requests(): number;
}

async function listen(t: TestContext, service: RuleService, options: Partial<HttpAppOptions> = {}): Promise<App> {
  const app = buildHttpApp(service, { bodyLimit: BODY_LIMIT, requestTimeoutMs: 30_000, debugMode: false, multiTenancy: false, ...options });
  let requests = 0;
  app.server.on('request', () => requests++);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { app, port: (app.server.address() as AddressInfo).port, requests: () => requests };
}

/** One parsed answer off a raw connection. */
interface Answer {
  readonly status: number;
  /** The head as sent, `Date` and the body's `duration_us` blanked. */
  readonly comparable: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A raw connection that collects answers as they come. */
class Conn {
  private data = Buffer.alloc(0);
  closed = false;
  ended = false;
  private wake: (() => void) | null = null;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.data = Buffer.concat([this.data, d]);
      this.wake?.();
    });
    socket.on('end', () => {
      this.ended = true;
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<Conn> {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return new Conn(socket);
  }

  write(text: string): void {
    this.socket.write(text, 'utf8');
  }

  /** The next `n` answers (rejects after `ms`). */
  async answers(n: number, ms = 5000): Promise<Answer[]> {
    const out: Answer[] = [];
    const deadline = Date.now() + ms;
    while (out.length < n) {
      const a = this.take();
      if (a !== null) {
        out.push(a);
        continue;
      }
      if (this.closed || Date.now() > deadline) throw new Error(`got ${out.length} of ${n} answers; rest ${JSON.stringify(this.data.toString('latin1'))}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return out;
  }

  /** What arrived and was not taken as an answer yet (latin1). */
  received(): string {
    return this.data.toString('latin1');
  }

  /** Waits until the server closes the connection; true when it did within `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && !this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed || this.ended;
  }

  private take(): Answer | null {
    const end = this.data.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const head = this.data.toString('latin1', 0, end);
    const headers: Record<string, string> = {};
    for (const line of head.split('\r\n').slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.data.length < end + 4 + length) return null;
    const body = this.data.toString('utf8', end + 4, end + 4 + length);
    this.data = this.data.subarray(end + 4 + length);
    const comparable = `${head.replace(/\r\nDate: [^\r]*/i, '\r\nDate: <date>')}\r\n\r\n${body.replace(/"duration_us":\d+/g, '"duration_us":0')}`.replace(
      /content-length: \d+/,
      `content-length: <${Buffer.byteLength(body.replace(/"duration_us":\d+/g, '"duration_us":0'))}>`,
    );
    return { status: Number(head.slice(9, 12)), comparable, headers, body };
  }
}

/** A kept-alive POST with a JSON body, as a client writes it. */
function post(path: string, body: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

const EXECUTE_ADULT = post('/api/v1/execute/age', '{"input":{"user":{"age":30}}}');
const EXECUTE_MINOR = post('/api/v1/execute/age', '{"input":{"user":{"age":10}}}');
const EVAL = post('/api/v1/eval', '{"expression":"a + 1","context":{"a":41}}');
const HEALTH = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/** Sends `payload` on a fresh connection to each app and returns the answers of both. */
async function bothWays(fast: App, node: App, payload: string, n = 1): Promise<[Answer[], Answer[]]> {
  const a = await Conn.open(fast.port);
  const b = await Conn.open(node.port);
  try {
    a.write(payload);
    b.write(payload);
    return [await a.answers(n), await b.answers(n)];
  } finally {
    a.socket.destroy();
    b.socket.destroy();
  }
}

// ------------------------------------------------------------------ tests

test('plain kept-alive requests are answered on the fast path, byte for byte as through node', async (t) => {
  const { service, close } = await makeService();
  t.after(close);
  const fast = await listen(t, service);
  const node = await listen(t, service, { httpFastPath: false });
  const cases: [string, string, number][] = [
    ['execute', EXECUTE_ADULT, 200],
    ['execute, another terminal', EXECUTE_MINOR, 200],
    ['eval', EVAL, 200],
    ['execute of an unknown ruleset', post('/api/v1/execute/nope', '{"input":{}}'), 404],
    ['execute without input', post('/api/v1/execute/age', '{}'), 400],
    ['execute with a trace', post('/api/v1/execute/age', '{"input":{"age":30},"trace":true}'), 200],
    ['execute with a bad trace flag', post('/api/v1/execute/age', '{"input":{},"trace":1}'), 400],
    ['eval that fails', post('/api/v1/eval', '{"expression":"a +"}'), 400],
    ['a charset spelling of JSON', post('/api/v1/eval', '{"expression":"1"}').replace('application/json', 'application/json; charset=utf-8'), 200],
    ['a body with a multi-byte character', post('/api/v1/eval', '{"expression":"\\"é\\" + \\"x\\""}'), 200],
  ];
  for (const [what, payload, status] of cases) {
    const before = fast.requests();
    const [[a], [b]] = await bothWays(fast, node, payload);
    assert.equal(a!.status, status, `${what}: status; ${a!.body}`);
    assert.equal(a!.comparable, b!.comparable, `${what}: the same bytes`);
    assert.equal(a!.headers['connection'], 'keep-alive', `${what}: kept alive`);
    assert.equal(fast.requests(), before, `${what}: node parsed no request on the fast-path app`);
  }
  // A body that is not JSON: 400 and the connection closed, on both.
  const before = fast.requests();
  const [[a], [b]] = await bothWays(fast, node, post('/api/v1/execute/age', '{"input":'));
  assert.equal(a!.status, 400);
  assert.equal(a!.headers['connection'], 'close');
  assert.equal(a!.comparable, b!.comparable, 'malformed body: the same bytes');
  assert.equal(fast.requests(), before);
  assert.ok(node.requests() > 0, 'the app without the fast path parsed its requests with node');
});

test('pipelined requests are answered in order; the first one the fast path does not take goes to node with the rest', async (t) => {
  const { service, close } = await makeService();
  t.after(close);
  const fast = await listen(t, service);
  const c = await Conn.open(fast.port);
  t.after(() => c.socket.destroy());
  c.write(EXECUTE_ADULT + EVAL + HEALTH + EXECUTE_MINOR + EXECUTE_ADULT);
  const answers = await c.answers(5);
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200],
  );
  assert.match(answers[0]!.body, /"code":"ADULT"/);
  assert.match(answers[1]!.body, /"result":42/);
  assert.match(answers[2]!.body, /"status"/);
  assert.match(answers[3]!.body, /"code":"MINOR"/);
  assert.match(answers[4]!.body, /"code":"ADULT"/);
  assert.equal(fast.requests(), 3, 'node parsed the health check and every request after it');
  // The connection stays with node and keeps working.
  c.write(EXECUTE_MINOR);
  assert.match((await c.answers(1))[0]!.body, /"code":"MINOR"/);
  assert.equal(fast.requests(), 4);
});

test('a request split over several reads is answered on the fast path; one still incomplete after more reads goes to node', async (t) => {
  const { service, close } = await makeService();
  t.after(close);
  const fast = await listen(t, service);
  const pause = () => new Promise((r) => setTimeout(r, 30));
  for (const cut of [10, EXECUTE_ADULT.indexOf('\r\n\r\n') + 2, EXECUTE_ADULT.length - 3]) {
    const c = await Conn.open(fast.port);
    c.write(EXECUTE_ADULT + EXECUTE_MINOR.slice(0, cut));
    await pause();
    c.write(EXECUTE_MINOR.slice(cut));
    const answers = await c.answers(2);
    c.socket.destroy();
    assert.deepEqual(
      answers.map((a) => JSON.parse(a.body).code),
      ['ADULT', 'MINOR'],
      `cut at ${cut}`,
    );
    assert.equal(fast.requests(), 0, `cut at ${cut}: on the fast path`);
  }
  // One byte a read: still not complete after MAX_WAITS more reads, so node takes it.
  const c = await Conn.open(fast.port);
  t.after(() => c.socket.destroy());
  for (let i = 0; i <= MAX_WAITS + 1; i++) {
    c.write(EXECUTE_ADULT.slice(i, i + 1));
    await pause();
  }
  c.write(EXECUTE_ADULT.slice(MAX_WAITS + 2));
  assert.match((await c.answers(1))[0]!.body, /"code":"ADULT"/);
  assert.equal(fast.requests(), 1, 'parsed by node');
});

test('requests outside the strict subset are answered by node exactly as without the fast path', async (t) => {
  const { service, close } = await makeService();
  t.after(close);
  const fast = await listen(t, service);
  const node = await listen(t, service, { httpFastPath: false });
  const body = '{"input":{"user":{"age":30}}}';
  const head = (extra: string, first = 'POST /api/v1/execute/age HTTP/1.1') => `${first}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}`;
  const chunked = `${head('Transfer-Encoding: chunked\r\n')}\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  // [what, payload, answers, parsed by node as a request]
  const cases: [string, string, boolean][] = [
    ['a chunked body', chunked, true],
    [
      'Content-Length and Transfer-Encoding (smuggling)',
      `${head(`Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`)}\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      false,
    ],
    ['two different Content-Lengths', `${head(`Content-Length: ${body.length}\r\nContent-Length: 5\r\n`)}\r\n${body}`, false],
    ['obsolete line folding', `${head(`Content-Length: ${body.length}\r\nX-A: 1\r\n 2\r\n`)}\r\n${body}`, false],
    ['whitespace before a colon', `${head(`Content-Length : ${body.length}\r\n`)}\r\n${body}`, false],
    ['Connection: close', post('/api/v1/execute/age', body, 'Connection: close\r\n'), true],
    ['HTTP/1.0', post('/api/v1/execute/age', body).replace('HTTP/1.1', 'HTTP/1.0'), true],
    ['Expect: 100-continue', post('/api/v1/execute/age', body, 'Expect: 100-continue\r\n'), true],
    ['a query string', post('/api/v1/execute/age?x=1', body), true],
    ['an encoded path', post('/api/v1/execute/a%67e', body), true],
    ['another method', post('/api/v1/execute/age', body).replace('POST', 'PUT'), true],
    ['a body over the limit', post('/api/v1/execute/age', `{"input":{"pad":"${'x'.repeat(BODY_LIMIT)}"}}`), true],
    ['no Host', post('/api/v1/execute/age', body).replace('Host: 127.0.0.1\r\n', ''), true],
    ['a text Content-Type', post('/api/v1/execute/age', body).replace('application/json', 'text/plain'), true],
    ['another charset', post('/api/v1/execute/age', body).replace('application/json', 'application/json; charset=latin1'), true],
    ['a repeated header', post('/api/v1/execute/age', body, 'X-A: 1\r\nX-A: 2\r\n'), true],
    ['a header value above ASCII', post('/api/v1/execute/age', body, 'X-A: caf\u00e9\r\n'), true],
  ];
  for (const [what, payload, parsed] of cases) {
    const before = fast.requests();
    const [[a], [b]] = await bothWays(fast, node, payload);
    assert.equal(a!.comparable, b!.comparable, `${what}: the same answer (${a!.status} ${a!.body.slice(0, 120)})`);
    assert.equal(fast.requests(), before + (parsed ? 1 : 0), `${what}: ${parsed ? 'parsed by node' : 'refused by node\u2019s parser'}`);
  }
});

test('app.close() closes idle fast-path connections at once, and a client half-close ends the connection', async (t) => {
  const { service, close } = await makeService();
  t.after(close);
  const fast = await listen(t, service);
  const idle = await Conn.open(fast.port);
  idle.write(EXECUTE_ADULT);
  assert.equal((await idle.answers(1))[0]!.status, 200);

  const halfClosed = await Conn.open(fast.port);
  halfClosed.write(EVAL);
  halfClosed.socket.end();
  assert.equal((await halfClosed.answers(1))[0]!.status, 200, 'answered before the end');
  assert.ok(await halfClosed.closedWithin(2000), 'the server ends its side after the client did');

  const started = Date.now();
  await fast.app.close();
  assert.ok(Date.now() - started < 5000, `close() did not wait for the keep-alive timeout (${Date.now() - started} ms)`);
  assert.ok(await idle.closedWithin(2000), 'the idle connection was closed');
});

// ------------------------------------------------------------------ the fast path on a bare server

/** Hot routes of one route `POST /x` that answers the body's `n` (a stand-in for the real ones, with a settable check). */
function oneRoute(check: HotMatcher['check']): HotRoutes {
  const m = { method: 'POST', exact: '/x', prefix: '/x', route: null as never, check } as HotMatcher;
  return {
    bodyLimit: 1024,
    match: (method, url, type) => (method === 'POST' && url === '/x' && type === 'application/json' ? m : null),
    param: () => '',
    answer: (_m, head, _p, body, principal): HotAnswer => ({
      status: 200,
      text: JSON.stringify({ n: (body as { n: number }).n, principal: principal?.id ?? null, tenant: head.headers['x-tenant-id'] ?? null }),
      close: false,
      extra: null,
    }),
    error: (err): HotAnswer => ({ status: 401, text: JSON.stringify({ error: String((err as Error).message) }), close: false, extra: null }),
  };
}

async function bare(
  t: TestContext,
  hot: HotRoutes,
  keepAliveTimeoutMs: number,
  headersTimeoutMs: number,
): Promise<{ server: Server; port: number; requests(): number }> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.end('node');
  });
  installFastPath(server, hot, { keepAliveTimeoutMs, headersTimeoutMs });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { server, port: (server.address() as AddressInfo).port, requests: () => requests };
}

const X = (n: number, extra = '') => post('/x', JSON.stringify({ n }), extra);

test('connection timeouts: the first request within the header timeout, then the keep-alive timeout', async (t) => {
  const s = await bare(t, oneRoute(null), 400, 200);
  const silent = await Conn.open(s.port);
  assert.ok(await silent.closedWithin(2000), 'a connection that sends nothing is closed after the header timeout');
  assert.match(silent.received(), /^HTTP\/1\.1 408 /, "with node's request-timeout answer");

  const c = await Conn.open(s.port);
  c.write(X(1));
  const [a] = await c.answers(1);
  assert.equal(JSON.parse(a!.body).n, 1);
  assert.equal(a!.headers['keep-alive'], 'timeout=0', 'Keep-Alive names the timeout in whole seconds, as node does');
  await new Promise((r) => setTimeout(r, 250));
  c.write(X(2));
  assert.equal(JSON.parse((await c.answers(1))[0]!.body).n, 2, 'still open within the keep-alive timeout');
  assert.ok(await c.closedWithin(2000), 'closed after the keep-alive timeout');
  assert.equal(s.requests(), 0);

  // A request begun and left incomplete past the header timeout: node's request-timeout answer.
  const partial = await Conn.open(s.port);
  partial.write(X(3).slice(0, 20));
  assert.ok(await partial.closedWithin(2000), 'closed after the header timeout');
  assert.match(partial.received(), /^HTTP\/1\.1 408 /);

  // The same between two requests of a kept-alive connection (the header timeout, not the
  // longer keep-alive one, applies to a request begun).
  const between = await Conn.open(s.port);
  between.write(X(5) + X(6).slice(0, 20));
  assert.equal(JSON.parse((await between.answers(1))[0]!.body).n, 5);
  const started = Date.now();
  assert.ok(await between.closedWithin(2000), 'closed');
  assert.ok(Date.now() - started < 390, `within the header timeout, not the keep-alive one (${Date.now() - started} ms)`);
  assert.match(between.received(), /^HTTP\/1\.1 408 /);

  // A client that ends its side in the middle of a request: node answers it as it answers
  // any request cut short (400 for an incomplete one), then the connection closes.
  const cut = await Conn.open(s.port);
  cut.write(X(4).slice(0, X(4).length - 2));
  await new Promise((r) => setTimeout(r, 30));
  cut.socket.end();
  assert.ok(await cut.closedWithin(2000), 'closed');
});

test('a caller check that is a promise keeps the answers in order, and a refused caller gets the error answer', async (t) => {
  let calls = 0;
  const check = (head: { headers: Record<string, unknown> }) => {
    calls++;
    const auth = head.headers['authorization'];
    if (auth === 'Bearer bad') throw new Error('refused');
    // The first sight of a token takes a while (a JWT's signature), later ones not.
    if (auth === 'Bearer slow') return new Promise<{ id: string }>((resolve) => setTimeout(() => resolve({ id: 'slow' }), 100));
    return { id: 'quick' };
  };
  const s = await bare(t, oneRoute(check as never), 5000, 5000);
  const c = await Conn.open(s.port);
  c.write(X(1, 'Authorization: Bearer quick\r\n') + X(2, 'Authorization: Bearer slow\r\n') + X(3, 'Authorization: Bearer quick\r\n'));
  // Sent while the second request's check runs: kept for after it.
  setTimeout(() => c.write(X(4, 'Authorization: Bearer bad\r\n') + X(5, 'Authorization: Bearer quick\r\nX-Tenant-Id: acme\r\n')), 20);
  const answers = await c.answers(5);
  assert.deepEqual(
    answers.map((a) => JSON.parse(a.body)),
    [
      { n: 1, principal: 'quick', tenant: null },
      { n: 2, principal: 'slow', tenant: null },
      { n: 3, principal: 'quick', tenant: null },
      { error: 'refused' },
      { n: 5, principal: 'quick', tenant: 'acme' },
    ],
  );
  assert.equal(answers[3]!.status, 401);
  assert.equal(calls, 5);
  assert.equal(s.requests(), 0, 'all on the fast path');

  // A check pending while the client ends its side: answered, then closed.
  const d = await Conn.open(s.port);
  d.write(X(6, 'Authorization: Bearer slow\r\n'));
  d.socket.end();
  assert.equal(JSON.parse((await d.answers(1))[0]!.body).n, 6);
  assert.ok(await d.closedWithin(2000));
});

test('a client that does not read its answers is not read further until they drain', async (t) => {
  const s = await bare(t, oneRoute(null), 5000, 5000);
  const serverSide: Socket[] = [];
  s.server.on('connection', (sock: Socket) => serverSide.push(sock));
  const c = await Conn.open(s.port);
  c.socket.pause(); // the client reads nothing
  const burst = X(1).repeat(2000);
  // Requests keep coming until the server stops reading them (its socket paused) and the
  // kernel buffers fill: then this client's writes no longer drain.
  let sent = 0;
  const deadline = Date.now() + 10_000;
  while (!(serverSide[0]?.isPaused() ?? false) && Date.now() < deadline) {
    if (c.socket.write(burst)) sent++;
    else await Promise.race([once(c.socket, 'drain'), new Promise((r) => setTimeout(r, 50))]);
  }
  assert.ok(serverSide[0]?.isPaused(), `the server paused reading (after ${sent} bursts)`);
  // Reading the answers lets the server go on: every request is answered, in order.
  c.socket.resume();
  const answers = await c.answers(Math.min(sent * 2000, 4000), 20_000);
  assert.ok(answers.every((a) => JSON.parse(a.body).n === 1));
  assert.equal(s.requests(), 0);
});
