/**
 * Hostile and broken input against the real `svc-server` process: every request gets its 4xx
 * with the catalog body, the server keeps serving after each one, and nothing outside the rules
 * dir is touched. Also the request timeout (408) over a raw TCP socket, and the answer bound
 * (`--max-response-bytes`) on HTTP and gRPC.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, Status, type TestClient } from '../helpers/grpc-client.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { ageRules, isCatalogError, rawExchange, rawRequest, snapshotTree, type RawReply } from './http-support.js';

const API = '/api/v1';

describe('svc-server: bad input', () => {
  const tmp = tempDir('svc-http-bad-');
  // The rules dir sits two levels down so that `../etc/passwd` and `../../etc/passwd` have
  // decoys to hit; the snapshot covers everything outside the rules dir.
  const rulesDir = join(tmp.path, 'a', 'b', 'rules');
  let server: ServerProcess;
  let outside: Record<string, string>;

  before(async () => {
    for (const dir of ['etc', 'a/etc', 'a/b/etc', 'a/b/.versions/x']) mkdirSync(join(tmp.path, dir), { recursive: true });
    for (const file of ['etc/passwd', 'a/etc/passwd', 'a/b/etc/passwd', 'a/b/victim.json', 'a/b/.versions/x/v1_1.json']) {
      writeFileSync(join(tmp.path, file), `decoy ${file}\n`);
    }
    server = await startServer(['--disable-grpc', '--rules-dir', rulesDir]);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets`, ageRules('good'))).status, 200);
    outside = snapshotTree(tmp.path, ['a/b/rules']);
  });

  after(async () => {
    await server.stop('SIGKILL');
    tmp.remove();
  });

  /** After every bad request: still serving, and the good rule still runs. */
  const stillServing = async (what: string) => {
    const health = await http(server.url, 'GET', '/health');
    assert.equal(health.status, 200, `/health after ${what}`);
    assert.equal(health.body.status, 'healthy');
    const exec = await http(server.url, 'POST', `${API}/execute/good`, { input: { user: { age: 30 } } });
    assert.equal(exec.body.code, 'ADULT', `execute after ${what}`);
  };

  const expectError = async (what: string, reply: RawReply, status: number, code: string, message?: RegExp) => {
    assert.ok(isCatalogError(reply, status, code), `${what}: expected ${status} ${code}, got ${reply.status} ${reply.text.slice(0, 200)}`);
    if (message) assert.match(reply.body.error, message, what);
    await stillServing(what);
  };

  it('malformed JSON is 400', async () => {
    for (const body of ['{"config":', '{config: 1}', '{"a":1}}', '\u0000\u0001', '{"input": {"user": }}']) {
      await expectError(
        `malformed ${JSON.stringify(body)}`,
        await rawRequest(server.url, 'POST', `${API}/rulesets`, body),
        400,
        'BAD_REQUEST',
        /malformed JSON/,
      );
      await expectError(`malformed execute ${JSON.stringify(body)}`, await rawRequest(server.url, 'POST', `${API}/execute/good`, body), 400, 'BAD_REQUEST');
    }
  });

  it('wrong types are 400', async () => {
    const cases: Array<[string, unknown]> = [
      [`${API}/rulesets`, []],
      [`${API}/rulesets`, { config: [], steps: 1 }],
      [`${API}/rulesets`, { config: { name: 5, entry_step: 'x' }, steps: {} }],
      [`${API}/execute/good`, { input: 5 }],
      [`${API}/execute/good`, { input: {}, trace: 'yes' }],
      [`${API}/execute/good/batch`, { inputs: 'x' }],
      [`${API}/eval`, { expression: ['1'] }],
      [`${API}/rulesets/good/rollback`, { seq: 'one' }],
      [`${API}/rulesets/good/filter`, { known_input: [], target_results: 'A' }],
    ];
    for (const [path, body] of cases) {
      await expectError(`${path} ${JSON.stringify(body)}`, await rawRequest(server.url, 'POST', path, JSON.stringify(body)), 400, 'BAD_REQUEST');
    }
    await expectError('PUT sample rate "x"', await rawRequest(server.url, 'PUT', `${API}/config/audit-sample-rate`, '{"sample_rate":"x"}'), 400, 'BAD_REQUEST');
  });

  it('an empty body is 400', async () => {
    await expectError('empty body', await rawRequest(server.url, 'POST', `${API}/rulesets`, ''), 400, 'BAD_REQUEST', /empty/);
    await expectError('no body', await rawRequest(server.url, 'POST', `${API}/execute/good`), 400, 'BAD_REQUEST');
  });

  it('an 11 MB body is 413 (with Content-Length and chunked)', async () => {
    const big = Buffer.alloc(11 * 1024 * 1024, 0x20);
    big.write('{"input":{"pad":"', 0);
    await expectError('11 MB', await rawRequest(server.url, 'POST', `${API}/execute/good`, big), 413, 'PAYLOAD_TOO_LARGE', /10485760/);
    await expectError('11 MB chunked', await rawRequest(server.url, 'POST', `${API}/rulesets`, big, {}, true), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('JSON nested 100,000 deep is 400', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    await expectError('100k arrays', await rawRequest(server.url, 'POST', `${API}/eval`, deep), 400, 'BAD_REQUEST', /nested deeper/);
    const deepObj = `{"expression":"1","context":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    await expectError('100k objects', await rawRequest(server.url, 'POST', `${API}/eval`, deepObj), 400, 'BAD_REQUEST', /nested deeper/);
  });

  it('__proto__ keys are 400 and pollute nothing', async () => {
    const bodies = [
      '{"__proto__":{"admin":true},"config":{"name":"p","entry_step":"e"},"steps":{"e":{"type":"terminal","result":{"code":"X"}}}}',
      '{"input":{"__proto__":{"admin":true}}}',
      '{"input":{"constructor":{"prototype":{"admin":true}}}}',
    ];
    await expectError('__proto__ ruleset', await rawRequest(server.url, 'POST', `${API}/rulesets`, bodies[0]), 400, 'BAD_REQUEST', /forbidden key/);
    await expectError('__proto__ input', await rawRequest(server.url, 'POST', `${API}/execute/good`, bodies[1]), 400, 'BAD_REQUEST', /forbidden key/);
    await expectError(
      'constructor.prototype input',
      await rawRequest(server.url, 'POST', `${API}/execute/good`, bodies[2]),
      400,
      'BAD_REQUEST',
      /forbidden key/,
    );
    assert.equal((await http(server.url, 'GET', `${API}/rulesets/p`)).status, 404);
  });

  it('names like ../etc/passwd and .. get their 4xx, in paths (raw and URL-encoded) and in bodies', async () => {
    const paths: Array<[string, string]> = [
      ['GET', `${API}/rulesets/..%2Fetc%2Fpasswd`],
      ['GET', `${API}/rulesets/..%2F..%2F..%2Fetc%2Fpasswd`],
      ['DELETE', `${API}/rulesets/..%2Fvictim`],
      ['DELETE', `${API}/rulesets/..`],
      ['GET', `${API}/rulesets/..`],
      ['GET', `${API}/rulesets/%2E%2E`],
      ['GET', `${API}/rulesets/..%2Fetc/versions`],
      ['GET', `${API}/rulesets/../versions`],
      ['GET', `${API}/rulesets/.versions`],
      ['POST', `${API}/execute/..%2Fvictim`],
      ['POST', `${API}/execute/..`],
      ['POST', `${API}/rulesets/..%2Fvictim/rollback`],
      ['POST', `${API}/rulesets/../rollback`],
      ['POST', `${API}/rulesets/..%2Fvictim/filter`],
      ['GET', `${API}/rulesets/../../etc/passwd`],
      ['GET', `${API}/rulesets/%2e%2e%5c..%5cetc%5cpasswd`],
    ];
    for (const [method, path] of paths) {
      const body = method === 'POST' ? '{"input":{},"seq":1,"known_input":{},"target_results":["A"]}' : undefined;
      const r = await rawRequest(server.url, method, path, body);
      assert.ok(r.status >= 400 && r.status < 500, `${method} ${path}: ${r.status} ${r.text}`);
      assert.equal(typeof r.body?.code, 'string', `${method} ${path}: catalog body`);
      assert.equal(typeof r.body?.error, 'string');
      await stillServing(`${method} ${path}`);
    }
    for (const name of ['../etc/passwd', '..', '../../victim', '.versions', 'a/../../b', '..\\..\\etc\\passwd']) {
      await expectError(`config.name ${name}`, await rawRequest(server.url, 'POST', `${API}/rulesets`, JSON.stringify(ageRules(name))), 400, 'BAD_REQUEST');
    }
  });

  it('a path parameter over 128 characters is 400 BAD_REQUEST with the catalog body and without the URL', async () => {
    for (const n of [129, 1025, 10_000]) {
      const name = 'a'.repeat(n);
      for (const [method, path] of [
        ['GET', `${API}/rulesets/${name}`],
        ['DELETE', `${API}/rulesets/${name}`],
        ['GET', `${API}/rulesets/${name}/versions`],
        ['POST', `${API}/execute/${name}`],
        ['POST', `${API}/execute/${name}/batch`],
      ] as const) {
        const body = method === 'POST' ? '{"input":{},"inputs":[{}]}' : undefined;
        const r = await rawRequest(server.url, method, path, body);
        await expectError(`${method} ${n}-character name`, r, 400, 'BAD_REQUEST');
        assert.ok(!r.text.includes('a'.repeat(100)), `${method} ${n}: the URL is not echoed back: ${r.text.slice(0, 200)}`);
      }
    }
  });

  it('a URL whose parameter does not decode is 400 BAD_REQUEST with the catalog body', async () => {
    for (const path of [`${API}/rulesets/%E0%A4%A`, `${API}/rulesets/%ZZ/versions`]) {
      const r = await rawRequest(server.url, 'GET', path);
      await expectError(`GET ${path}`, r, 400, 'BAD_REQUEST');
      assert.ok(!r.text.includes('%'), `${path}: the URL is not echoed back: ${r.text}`);
    }
  });

  it('a ruleset named tenants is 400 BAD_REQUEST with the reason, not a storage failure', async () => {
    const r = await rawRequest(server.url, 'POST', `${API}/rulesets`, JSON.stringify(ageRules('tenants')));
    await expectError('config.name tenants', r, 400, 'BAD_REQUEST');
    assert.match(JSON.stringify(r.body.problems), /reserved/);
  });

  it('a body whose charset is not UTF-8 is 415 UNSUPPORTED_MEDIA_TYPE; UTF-8 spellings are taken', async () => {
    const latin1 = Buffer.from('{"expression":"s","context":{"s":"caf\u00e9"}}', 'latin1');
    for (const type of ['application/json; charset=latin1', 'application/json; charset=ISO-8859-1', 'application/json;charset="utf-16"']) {
      for (const path of [`${API}/eval`, `${API}/execute/good`, `${API}/rulesets`]) {
        await expectError(
          `${type} ${path}`,
          await rawRequest(server.url, 'POST', path, latin1, { 'content-type': type }),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          /charset/,
        );
      }
    }
    const utf8 = '{"expression":"s","context":{"s":"caf\u00e9"}}';
    for (const type of ['application/json; charset=utf-8', 'application/json; charset=UTF8', 'application/json; charset="utf-8"', 'application/json']) {
      const r = await rawRequest(server.url, 'POST', `${API}/eval`, utf8, { 'content-type': type });
      assert.equal(r.status, 200, `${type}: ${r.text}`);
      assert.equal(r.body.result, 'caf\u00e9');
    }
  });

  it('an HTTP/1.1 request without Host is 400 with the catalog body; HTTP/1.0 needs none', async () => {
    const r = await rawExchange(server.url, 'GET /healthz/live HTTP/1.1\r\n\r\n');
    assert.equal(r.status, 400, r.head);
    assert.match(r.head, /\r\nconnection: close/i);
    assert.deepEqual(r.body, { error: 'an HTTP/1.1 request must have a Host header', code: 'BAD_REQUEST' });
    const old = await rawExchange(server.url, 'GET /healthz/live HTTP/1.0\r\n\r\n');
    assert.match(old.head, /^HTTP\/1\.[01] 200 /);
    await stillServing('no Host');
  });

  it('nothing outside the rules dir was touched, and the rules dir holds only what the API wrote', () => {
    assert.deepEqual(snapshotTree(tmp.path, ['a/b/rules']), outside);
    assert.deepEqual(readdirSync(rulesDir).sort(), ['.health_probe', 'good.json']);
  });

  it('after all of it the server still serves', async () => {
    await stillServing('everything');
  });
});

describe('svc-server: request timeout', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer(['--disable-grpc', '--request-timeout-secs', '1']);
  });
  after(async () => {
    await server.stop('SIGKILL');
  });

  it('a body that does not arrive within --request-timeout-secs is 408 with the catalog body, and the connection closes', async () => {
    const r = await rawExchange(
      server.url,
      `POST ${API}/eval HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"expression":`,
    );
    assert.equal(r.status, 408, r.head);
    assert.match(r.head, /\r\nconnection: close/i);
    assert.match(r.head, /\r\ncontent-type: application\/json/i);
    assert.equal(r.body.code, 'REQUEST_TIMEOUT');
    assert.match(r.body.error, /body not received within 1 s/);
    assert.equal((await http(server.url, 'GET', '/health')).status, 200);
  });

  it('headers that do not arrive within --request-timeout-secs are 408 with the catalog body too', async () => {
    const r = await rawExchange(server.url, `GET /health HTTP/1.1\r\nHost: test\r\nX-Slow: `);
    assert.equal(r.status, 408, r.head);
    assert.deepEqual(r.body, { error: 'request headers not received within 1 s (--request-timeout-secs)', code: 'REQUEST_TIMEOUT' });
    assert.equal((await http(server.url, 'GET', '/health')).status, 200);
  });

  it('malformed HTTP and oversized headers are 400 with the catalog body', async () => {
    const garbage = await rawExchange(server.url, 'NOT HTTP AT ALL\r\n\r\n');
    assert.equal(garbage.status, 400, garbage.head);
    assert.deepEqual(garbage.body, { error: 'malformed HTTP request', code: 'BAD_REQUEST' });
    const huge = await rawExchange(server.url, `GET /health HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    assert.equal(huge.status, 400, huge.head);
    assert.deepEqual(huge.body, { error: 'request headers are too large', code: 'BAD_REQUEST' });
    assert.equal((await http(server.url, 'GET', '/health')).status, 200);
  });
});

describe('svc-server: --max-response-bytes', () => {
  let server: ServerProcess;
  let grpcClient: TestClient;
  before(async () => {
    server = await startServer(['--max-response-bytes', '3000']);
    grpcClient = connect(server.grpcAddress);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets`, ageRules('good'))).status, 200);
  });
  after(async () => {
    grpcClient?.close();
    await server.stop('SIGKILL');
  });

  it('HTTP: an answer over the bound is 500 LIMIT_EXCEEDED naming the flag; smaller answers pass', async () => {
    const big = await rawRequest(server.url, 'POST', `${API}/eval`, JSON.stringify({ expression: 'upper(s)', context: { s: 'x'.repeat(3000) } }));
    assert.ok(isCatalogError(big, 500, 'LIMIT_EXCEEDED'), big.text);
    assert.match(big.body.error, /^answer of 30[0-9]{2} bytes exceeds --max-response-bytes \(3000\)$/);
    const batch = await rawRequest(
      server.url,
      'POST',
      `${API}/execute/good/batch`,
      JSON.stringify({ inputs: Array.from({ length: 100 }, () => ({ user: { age: 30 } })) }),
    );
    assert.ok(isCatalogError(batch, 500, 'LIMIT_EXCEEDED'), batch.text);
    assert.equal((await rawRequest(server.url, 'POST', `${API}/execute/good`, JSON.stringify({ input: { user: { age: 30 } } }))).status, 200);
  });

  it('gRPC: RESOURCE_EXHAUSTED with svc-error-code LIMIT_EXCEEDED', async () => {
    const out = await grpcClient.call('Eval', { expression: 'upper(s)', context_json: JSON.stringify({ s: 'x'.repeat(3000) }) });
    assert.equal(out.ok, false);
    assert.ok(!out.ok && out.code === Status.RESOURCE_EXHAUSTED && out.svcCode === 'LIMIT_EXCEEDED', JSON.stringify(out));
    const small = await grpcClient.call('Eval', { expression: 'upper(s)', context_json: '{"s":"x"}' });
    assert.ok(small.ok);
  });
});
