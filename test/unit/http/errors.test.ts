/**
 * Every HTTP error status and its body `{error, code, ...}` (DECISIONS.md 3): unknown routes,
 * wrong methods, body limit, media type, malformed or hostile JSON, reader write rejection and
 * server errors.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_JSON_DEPTH } from '../../../src/transport/json-text.js';
import { ageRules, assertError, makeHarness, type Harness } from './harness.js';

describe('routing errors', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
  });
  after(() => h.close());

  for (const [method, url] of [
    ['GET', '/'],
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v2/rulesets'],
    ['POST', '/api/v1/rulesets/a/b/c'],
    ['GET', '/API/V1/RULESETS'],
  ] as const) {
    it(`${method} ${url} is 404 NOT_FOUND with the error body`, async () => {
      assertError(await h.request(method, url), 404, 'NOT_FOUND', /no route/);
    });
  }

  for (const [method, url, allow] of [
    ['PUT', '/api/v1/rulesets', 'GET, POST'],
    ['PATCH', '/api/v1/rulesets/x', 'GET, DELETE'],
    ['GET', '/api/v1/execute/x', 'POST'],
    ['GET', '/api/v1/execute/x/batch', 'POST'],
    ['DELETE', '/health', 'GET'],
    ['POST', '/metrics', 'GET'],
    ['POST', '/api/v1/config/audit-sample-rate', 'GET, PUT'],
    ['GET', '/api/v1/eval', 'POST'],
  ] as const) {
    it(`${method} ${url} is 405 METHOD_NOT_ALLOWED with Allow: ${allow}`, async () => {
      const r = await h.request(method, url);
      assertError(r, 405, 'METHOD_NOT_ALLOWED');
      assert.equal(r.headers['allow'], allow);
    });
  }
});

describe('request body errors', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ bodyLimit: 4096 });
    await h.request('POST', '/api/v1/rulesets', ageRules('age'));
  });
  after(() => h.close());

  const post = (url: string, payload: string, contentType = 'application/json') => h.request('POST', url, payload, { 'content-type': contentType });

  it('a body over the limit is 413 PAYLOAD_TOO_LARGE and closes the connection', async () => {
    const payload = JSON.stringify({ expression: `"${'x'.repeat(5000)}"` });
    const r = await post('/api/v1/eval', payload);
    assertError(r, 413, 'PAYLOAD_TOO_LARGE', /4096 bytes/);
    assert.equal(r.headers['connection'], 'close');
    // at the limit it is read (and answered by the route)
    const atLimit = JSON.stringify({ expression: `"${'x'.repeat(4096 - 21)}"` });
    assert.equal(atLimit.length, 4096);
    assert.equal((await post('/api/v1/eval', atLimit)).status, 200);
  });

  it('a body that is not application/json is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    assertError(await post('/api/v1/eval', '{"expression":"1"}', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await post('/api/v1/eval', 'expression=1', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const bare = await h.app.inject({ method: 'POST', url: '/api/v1/eval', payload: '{"expression":"1"}' });
    assert.equal(bare.statusCode, 415, 'a body without Content-Type');
    assert.equal(JSON.parse(bare.body).code, 'UNSUPPORTED_MEDIA_TYPE');
    const withCharset = await post('/api/v1/eval', '{"expression":"1"}', 'application/json; charset=utf-8');
    assert.equal(withCharset.status, 200);
  });

  it('malformed JSON is 400 BAD_REQUEST', async () => {
    for (const payload of ['{"input":', '{input: {}}', "{'a': 1}", '{"a": 1,}', 'nul', '{"a":1} trailing']) {
      assertError(await post('/api/v1/execute/age', payload), 400, 'BAD_REQUEST', /malformed JSON/);
    }
  });

  it('an empty body is 400 BAD_REQUEST (with and without a JSON content type)', async () => {
    assertError(await post('/api/v1/execute/age', ''), 400, 'BAD_REQUEST', /empty/);
    assertError(await post('/api/v1/execute/age', '  \n '), 400, 'BAD_REQUEST', /empty/);
    assertError(await h.request('POST', '/api/v1/execute/age'), 400, 'BAD_REQUEST');
    assertError(await h.request('POST', '/api/v1/rulesets'), 400, 'BAD_REQUEST');
    assertError(await h.request('PUT', '/api/v1/config/audit-sample-rate'), 400, 'BAD_REQUEST');
  });

  it(`nesting deeper than ${MAX_JSON_DEPTH} is 400; exactly ${MAX_JSON_DEPTH} parses`, async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    // depth 1 is the outer object, so the context holds depth - 2 more arrays inside {"a": ...}
    const body = (depth: number) => `{"expression":"1","context":{"a":${nested(depth - 2)}}}`;
    assertError(await post('/api/v1/eval', body(MAX_JSON_DEPTH + 1)), 400, 'BAD_REQUEST', /nested deeper than 512/);
    assert.equal((await post('/api/v1/eval', body(MAX_JSON_DEPTH))).status, 200);
  });

  it('__proto__ keys (plain, escaped, nested) and constructor.prototype are 400', async () => {
    const hostile = [
      '{"__proto__": {"polluted": true}, "expression": "1"}',
      '{"expression": "1", "context": {"a": [{"__proto__": {"x": 1}}]}}',
      '{"\\u005f_proto__": {"polluted": true}, "expression": "1"}',
      '{"expression": "1", "context": {"constructor": {"prototype": {"polluted": true}}}}',
      // escapes hide the words from a plain text search: still found (decoded keys are checked)
      '{"expression": "1", "context": {"\\u0063onstructor": {"prototype": {"polluted": true}}}}',
      '{"expression": "1", "context": {"constructor": {"\\u0070rototype": {"polluted": true}}}}',
      '{"_\\u005fproto__": {"polluted": true}, "expression": "1"}',
    ];
    for (const payload of hostile) {
      assertError(await post('/api/v1/eval', payload), 400, 'BAD_REQUEST', /forbidden key/);
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    // the words inside string values are fine
    const ok = await post('/api/v1/eval', '{"expression": "\\"__proto__ constructor\\"", "context": {"constructor": "x"}}');
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.result, '__proto__ constructor');
  });
});

describe('reader instance: every write is 409 READ_ONLY', () => {
  let h: Harness;
  const writer = 'http://writer.internal:8080';
  before(async () => {
    // a reader serves whatever its store holds: seed it through the sync entry point
    h = await makeHarness({ role: 'reader', writerAddr: writer });
    assert.equal(await h.service.applyChange({ kind: 'ruleset.put', tenant: 'default', doc: ageRules('age') }, 'sync', false), 'applied');
  });
  after(() => h.close());

  const expected = {
    error: 'read_only',
    code: 'READ_ONLY',
    message: 'this instance is a reader and does not accept writes',
    writer,
    hint: 'send writes to the writer',
  };

  for (const [method, url, body] of [
    ['POST', '/api/v1/rulesets', ageRules('new')],
    ['POST', '/api/v1/rulesets', ageRules('age', { version: '9' })],
    ['DELETE', '/api/v1/rulesets/age', undefined],
    ['DELETE', '/api/v1/rulesets/unknown', undefined],
    ['POST', '/api/v1/rulesets/age/rollback', { seq: 1 }],
    ['PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 50 }],
  ] as const) {
    it(`${method} ${url} is 409 with the DECISIONS.md 3 body`, async () => {
      const r = await h.request(method, url, body);
      assertError(r, 409, 'READ_ONLY');
      assert.deepEqual(r.body, expected);
    });
  }

  it('nothing changed, and reads, executions, eval and filter still work', async () => {
    const list = await h.request('GET', '/api/v1/rulesets');
    assert.deepEqual(list.body, [{ name: 'age', version: '1.0.0', description: null }]);
    assert.equal((await h.request('GET', '/api/v1/rulesets/age')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 20 } } })).body.code, 'ADULT');
    assert.equal((await h.request('POST', '/api/v1/execute/age/batch', { inputs: [{}] })).status, 200);
    assert.equal((await h.request('POST', '/api/v1/eval', { expression: '1' })).status, 200);
    assert.equal((await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: ['ADULT'] })).status, 200);
    assert.equal((await h.request('GET', '/api/v1/rulesets/age/versions')).status, 200);
    assert.deepEqual((await h.request('GET', '/api/v1/config/audit-sample-rate')).body, { sample_rate: 100 });
    assert.equal(h.auditLines().filter((l) => String(l['event']).startsWith('rule_') && l['event'] !== 'rule_executed').length, 0);
  });

  it('without --writer-addr, writer is null', async () => {
    const bare = await makeHarness({ role: 'reader' });
    try {
      const r = await bare.request('POST', '/api/v1/rulesets', ageRules('x'));
      assert.equal(r.status, 409);
      assert.equal(r.body.writer, null);
      assert.ok('writer' in r.body);
    } finally {
      await bare.close();
    }
  });
});

describe('server errors', () => {
  it('a storage failure on write is 500 INTERNAL_ERROR and the old content stays', async () => {
    const h = await makeHarness({ rulesDir: true });
    try {
      const dir = h.rulesDir as string;
      assert.equal((await h.request('POST', '/api/v1/rulesets', ageRules('age', { version: '1' }))).status, 200);
      // a file where the history directory must go: saving the previous version fails
      mkdirSync(join(dir, '.versions'), { recursive: true });
      writeFileSync(join(dir, '.versions', 'age'), 'not a directory');
      assertError(await h.request('POST', '/api/v1/rulesets', ageRules('age', { version: '2' })), 500, 'INTERNAL_ERROR', /storage write failed/);
      assert.equal((await h.request('GET', '/api/v1/rulesets')).body[0].version, '1');
    } finally {
      await h.close();
    }
  });
});

describe('shutdown', () => {
  it('while draining: the in-flight request completes with Connection: close; a request reaching the app meanwhile gets 503 NOT_READY with the catalog body', async () => {
    const h = await makeHarness();
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    try {
      let received = '';
      let socketClosed = false;
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      socket.on('close', () => (socketClosed = true));
      await new Promise((resolve) => socket.once('connect', resolve));
      const body = '{"expression":"1 + 1"}';
      const arrived = new Promise((resolve) => h.app.server.once('request', resolve));
      // an in-flight request: headers and part of the body
      socket.write(`POST /api/v1/eval HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 4)}`);
      await arrived;
      // what the app answers to requests that reach it from now on (seen at the response)
      const late: Array<{ url: string; status: number; body: string }> = [];
      h.app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
        const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
        (res as unknown as { end: (...args: unknown[]) => ServerResponse }).end = (...args: unknown[]) => {
          late.push({ url: req.url ?? '', status: res.statusCode, body: typeof args[0] === 'string' || Buffer.isBuffer(args[0]) ? String(args[0]) : '' });
          return end(...args);
        };
      });
      const closed = h.app.close();
      await waitFor(() => !h.app.server.listening);
      // the rest of the body, then a pipelined request that reaches the app while it drains
      socket.write(`${body.slice(4)}GET /healthz/live HTTP/1.1\r\nHost: t\r\n\r\n`);
      await closed;
      await waitFor(() => socketClosed);
      assert.match(received, /^HTTP\/1\.1 200 /);
      assert.match(received, /\r\nconnection: close\r\n/i);
      assert.match(received, /\{"result":2,/);
      assert.equal((received.match(/HTTP\/1\.1 /g) ?? []).length, 1, 'nothing is answered after Connection: close');
      assert.deepEqual(late, [{ url: '/healthz/live', status: 503, body: JSON.stringify({ error: 'server is shutting down', code: 'NOT_READY' }) }]);
    } finally {
      socket.destroy();
      await h.close();
    }
  });
});

/** Polls `pred` every 10 ms for up to 5 s. */
async function waitFor(pred: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
