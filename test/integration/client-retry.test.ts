/**
 * svc-client's retries, timeout and abort. 429: a real server with a tenant rate limit of one
 * request per two seconds (`Retry-After: 2`). 503, the non-idempotent rule, exhausted retries,
 * timeouts and aborts: a local node:http server (a real socket) that answers from a script.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SvcClient, SvcError, SvcRequestError, type RulesetDocument } from '../../client/src/index.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const DOC: RulesetDocument = { config: { name: 'door', entry_step: 'done' }, steps: { done: { type: 'terminal', result: { code: 'OPEN', message: 'open' } } } };

/** Runs `fn`, which must throw an error of class `type`; returns it. */
async function rejects<T extends Error>(fn: () => Promise<unknown>, type: new (...args: never[]) => T): Promise<T> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof type, `not a ${type.name}: ${String(err)}`);
    return err;
  }
  return assert.fail('the call did not throw');
}

/** A fetch that records the status and `Retry-After` of every answer (the real fetch does the work). */
function recordingFetch(answers: { status: number; retryAfter: string | null }[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    answers.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
    return res;
  };
}

/**
 * Empties tenant `slow`'s bucket: evaluations without retries until one is refused (the bucket
 * refills at 0.5 tokens per second, so a few quick calls reach it whatever the machine's load).
 */
async function drain(url: string): Promise<SvcError> {
  const client = new SvcClient({ baseUrl: url, tenant: 'slow', retry: false });
  for (let i = 0; i < 10; i++) {
    try {
      await client.evaluate('1');
    } catch (err) {
      assert.ok(err instanceof SvcError, String(err));
      return err;
    }
  }
  return assert.fail('no 429 in 10 evaluations');
}

describe('svc-client retries on 429 from a real rate-limited server', () => {
  let server: ServerProcess;
  let admin: SvcClient;

  before(async () => {
    server = await startServer(['--disable-grpc', '--multi-tenancy-enabled']);
    admin = new SvcClient({ baseUrl: server.url });
    await admin.createTenant({ id: 'slow', qps_limit: 0.5, burst: 1 });
    await admin.putRuleset(DOC, { tenant: 'slow' });
  });

  after(async () => {
    await server.stop();
  });

  it('an execution over the rate limit is 429 with Retry-After; the client waits that long and succeeds', async () => {
    await drain(server.url);
    const answers: { status: number; retryAfter: string | null }[] = [];
    const client = new SvcClient({ baseUrl: server.url, tenant: 'slow', fetch: recordingFetch(answers) });
    const started = Date.now();
    assert.equal((await client.execute('door', {})).code, 'OPEN');
    const waited = Date.now() - started;
    assert.deepEqual(
      answers.map((a) => a.status),
      [429, 200],
    );
    const retryAfterMs = Number(answers[0]!.retryAfter) * 1000;
    assert.ok(retryAfterMs >= 1000, `Retry-After: ${answers[0]!.retryAfter}`);
    assert.ok(waited >= retryAfterMs - 20, `waited ${waited} ms; Retry-After said ${retryAfterMs} ms`);
    assert.ok(waited < retryAfterMs + 3000, `waited ${waited} ms`);
  });

  it('without retries the 429 is a typed error with retryAfterMs and retry_after_ms', async () => {
    const err = await drain(server.url);
    assert.deepEqual([err.status, err.code], [429, 'RATE_LIMITED']);
    const retryAfterMs = err.details.retry_after_ms;
    assert.ok(typeof retryAfterMs === 'number' && retryAfterMs > 0 && retryAfterMs <= 2000, String(retryAfterMs));
    assert.equal(err.retryAfterMs, Math.ceil(retryAfterMs / 1000) * 1000, 'the Retry-After header (whole seconds) is what the client reports');
    assert.match(err.message, /exceeded its rate limit/);
  });

  it('a batch larger than the burst (retry_after_ms: null) is not retried: waiting cannot help', async () => {
    const answers: { status: number; retryAfter: string | null }[] = [];
    const client = new SvcClient({ baseUrl: server.url, tenant: 'slow', fetch: recordingFetch(answers) });
    const err = await rejects(() => client.executeBatch('door', [{}, {}]), SvcError);
    assert.deepEqual([err.status, err.code, err.details.retry_after_ms, err.retryAfterMs], [429, 'RATE_LIMITED', null, null]);
    assert.deepEqual(answers, [{ status: 429, retryAfter: null }]);
  });
});

/** One scripted answer: status, headers, body; `hang`: never answer. */
interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  hang?: boolean;
}

describe('svc-client retries, timeout and abort against a scripted node:http server', () => {
  let stub: Server;
  let url: string;
  let script: Scripted[] = [];
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const hanging: ServerResponse[] = [];

  const play = (...answers: Scripted[]): void => {
    script = answers;
    seen.length = 0;
  };
  const json503 = {
    status: 503,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: 'server is shutting down', code: 'NOT_READY' }),
  };
  const ok = { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'created', name: 'door' }) };

  before(async () => {
    stub = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const next = script.shift() ?? { status: 500, body: 'script exhausted' };
        if (next.hang === true) return void hanging.push(res);
        res.writeHead(next.status ?? 200, next.headers ?? {});
        res.end(next.body ?? '');
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const res of hanging) res.destroy();
    stub.closeAllConnections();
    await new Promise((r) => stub.close(r));
  });

  it('503 on an idempotent request: retried with backoff until it succeeds', async () => {
    play(json503, json503, { status: 200, headers: { 'content-type': 'application/json' }, body: '[]' });
    const client = new SvcClient({ baseUrl: url, retry: { baseDelayMs: 20 } });
    const started = Date.now();
    assert.deepEqual(await client.listRulesets(), []);
    assert.equal(seen.length, 3);
    assert.ok(Date.now() - started >= 10 + 20, 'two backoffs (at least half of 20 ms and of 40 ms)');
  });

  it('503 on a non-idempotent request (create, rollback, promote, create tenant): not retried', async () => {
    const client = new SvcClient({ baseUrl: url, retry: { baseDelayMs: 1 } });
    for (const call of [
      () => client.putRuleset(DOC),
      () => client.rollback('door', 1),
      () => client.promoteShadow('door'),
      () => client.createTenant({ id: 'x' }),
    ]) {
      play(json503, ok);
      const err = await rejects(call, SvcError);
      assert.deepEqual([err.status, err.code], [503, 'NOT_READY']);
      assert.equal(seen.length, 1, `${seen[0]?.method} ${seen[0]?.url} was sent again`);
    }
  });

  it('429 on a non-idempotent request: retried (svc refuses before doing work), honouring Retry-After', async () => {
    play(
      {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '1' },
        body: JSON.stringify({ error: 'too many', code: 'RATE_LIMITED', retry_after_ms: 900 }),
      },
      ok,
    );
    const client = new SvcClient({ baseUrl: url });
    const started = Date.now();
    assert.deepEqual(await client.putRuleset(DOC), { status: 'created', name: 'door' });
    assert.ok(Date.now() - started >= 990, 'Retry-After (1 s) wins over the shorter backoff and retry_after_ms');
    assert.equal(seen.length, 2);
    assert.equal(seen[1]!.body, JSON.stringify(DOC), 'the same body is sent again');
  });

  it('Retry-After as an HTTP date; and one over maxRetryAfterMs fails at once', async () => {
    play({ status: 503, headers: { 'retry-after': new Date(Date.now() + 2500).toUTCString() } }, { status: 200, body: '{"status":"alive"}' });
    const client = new SvcClient({ baseUrl: url, retry: { maxRetryAfterMs: 60_000 } });
    const started = Date.now();
    assert.deepEqual(await client.getAuditSampleRate(), { status: 'alive' });
    assert.ok(Date.now() - started >= 1000, 'waited for the date (1.5-2.5 s ahead: an HTTP date has whole seconds)');

    play({ status: 503, headers: { 'retry-after': '120' } }, ok);
    const err = await rejects(() => client.getAuditSampleRate(), SvcError);
    assert.deepEqual([err.status, err.retryAfterMs, seen.length], [503, 120_000, 1]);
  });

  it('retries exhausted: the last error is thrown', async () => {
    play(json503, json503, json503, json503);
    const client = new SvcClient({ baseUrl: url, retry: { retries: 2, baseDelayMs: 1 } });
    const err = await rejects(() => client.getTenant('a'), SvcError);
    assert.equal(err.code, 'NOT_READY');
    assert.equal(seen.length, 3);

    // A call's retry fields replace the client's one by one (here `retries: 2` stays).
    play(json503, json503, json503, json503);
    await rejects(() => client.getTenant('a', { retry: { baseDelayMs: 2 } }), SvcError);
    assert.equal(seen.length, 3);
    play(json503, json503);
    await rejects(() => client.getTenant('a', { retry: false }), SvcError);
    assert.equal(seen.length, 1);
  });

  it('health probes are not retried by default (they report the state now); a call may ask for it', async () => {
    const unhealthy = { ...json503, body: JSON.stringify({ error: 'not ready', code: 'NOT_READY', status: 'unhealthy', version: '0.1.0' }) };
    play(unhealthy, ok);
    const client = new SvcClient({ baseUrl: url, retry: { baseDelayMs: 1 } });
    const err = await rejects(() => client.ready(), SvcError);
    assert.deepEqual([err.status, err.body['status'], seen.length], [503, 'unhealthy', 1]);
    play(unhealthy, { status: 200, body: '{"status":"healthy"}' });
    assert.equal((await client.health({ retry: { baseDelayMs: 1 } })).status, 'healthy');
    assert.equal(seen.length, 2);
  });

  it('an error answer that is not a catalog body: UNEXPECTED_ANSWER with the status, not retried', async () => {
    play({ status: 502, headers: { 'content-type': 'text/html' }, body: '<html>Bad Gateway</html>' }, ok);
    const client = new SvcClient({ baseUrl: url });
    const err = await rejects(() => client.listRulesets(), SvcError);
    assert.deepEqual([err.status, err.code], [502, 'UNEXPECTED_ANSWER']);
    assert.match(err.message, /502.*Bad Gateway/);
    assert.equal(seen.length, 1);
  });

  it('headers: credential, tenant (client and call), content type, extra headers, signature headers', async () => {
    play(ok, ok);
    const client = new SvcClient({ baseUrl: url + '/prefix/', apiKey: 'svck_key', tenant: 'acme', headers: { 'x-proxy': 'p' } });
    await client.putRuleset(DOC, { signature: 'c2ln', publicKey: 'cHVi', tenant: 'beta' });
    await client.getAuditSampleRate();
    const [put, get] = seen;
    assert.equal(put!.url, '/prefix/api/v1/rulesets');
    assert.deepEqual(
      [put!.headers['authorization'], put!.headers['x-tenant-id'], put!.headers['content-type'], put!.headers['x-proxy']],
      ['Bearer svck_key', 'beta', 'application/json', 'p'],
    );
    assert.deepEqual([put!.headers['x-svc-signature'], put!.headers['x-svc-public-key']], ['c2ln', 'cHVi']);
    assert.deepEqual([get!.method, get!.headers['x-tenant-id'], get!.headers['content-type'], get!.body], ['GET', 'acme', undefined, '']);
  });

  it('timeout: a server that never answers fails the call with kind "timeout" after timeoutMs', async () => {
    play({ hang: true });
    const client = new SvcClient({ baseUrl: url, timeoutMs: 5000 });
    const started = Date.now();
    const err = await rejects(() => client.listRulesets({ timeoutMs: 200 }), SvcRequestError);
    const took = Date.now() - started;
    assert.equal(err.kind, 'timeout');
    assert.match(err.message, /GET \/api\/v1\/rulesets timed out after 200 ms/);
    assert.ok(took >= 190 && took < 2000, `took ${took} ms`);
  });

  it('the timeout covers the retries: a Retry-After past the deadline fails at once with the answer', async () => {
    play({ status: 503, headers: { 'retry-after': '5' }, body: json503.body }, ok);
    const client = new SvcClient({ baseUrl: url, timeoutMs: 3000 });
    const started = Date.now();
    const err = await rejects(() => client.listRulesets(), SvcError);
    assert.equal(err.status, 503);
    assert.ok(Date.now() - started < 2500, 'thrown at once, not after waiting');
    assert.equal(seen.length, 1);
  });

  it('abort: while the request is in flight, before it is sent, and while waiting to retry', async () => {
    play({ hang: true });
    const client = new SvcClient({ baseUrl: url });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 100);
    const inFlight = await rejects(() => client.execute('door', {}, { signal: controller.signal }), SvcRequestError);
    assert.equal(inFlight.kind, 'aborted');
    assert.equal((inFlight.cause as Error).message, 'user left');

    play(ok);
    const early = await rejects(() => client.listRulesets({ signal: AbortSignal.abort() }), SvcRequestError);
    assert.equal(early.kind, 'aborted');
    assert.equal(seen.length, 0, 'nothing is sent once aborted');

    play({ status: 503, headers: { 'retry-after': '10' }, body: json503.body }, ok);
    const waiting = new AbortController();
    const started = Date.now();
    setTimeout(() => waiting.abort(), 150);
    const duringWait = await rejects(() => client.listRulesets({ signal: waiting.signal }), SvcRequestError);
    assert.equal(duringWait.kind, 'aborted');
    assert.ok(Date.now() - started < 2000, 'the 10 s wait was cut short');
    assert.equal(seen.length, 1);
  });

  it('network failure: kind "network" with the cause', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const client = new SvcClient({ baseUrl: `http://127.0.0.1:${port}` });
    const err = await rejects(() => client.live(), SvcRequestError);
    assert.equal(err.kind, 'network');
    assert.match(err.message, /^GET \/healthz\/live failed: /);
  });
});
