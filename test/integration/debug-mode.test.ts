/**
 * `--debug-mode` (DECISIONS.md 3) against the real built server: the debug endpoint
 * `GET /api/v1/debug/rulesets/:name` (every condition, action value and output expression as
 * written and as a rendered syntax tree) and CORS for any origin (preflight, and the header on
 * normal and error answers); with the flag off, the endpoint is 404 and no CORS header is sent.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const SHOP = {
  config: { name: 'shop', version: '2.0.0', description: 'debug fixture', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      name: 'Check customer',
      branches: [
        { condition: 'user.age >= 18 && user.country in ["US", "CA"]', next_step: 'discount' },
        { condition: 'starts_with(user.name, "VIP")', next_step: 'discount' },
      ],
      default_next: 'reject',
    },
    discount: {
      type: 'action',
      actions: [
        { action: 'set_variable', name: 'rate', value: 'order.total*0.1' },
        { action: 'log', message: 'discount granted', level: 'debug' },
      ],
      next_step: 'ok',
    },
    ok: { type: 'terminal', result: { code: 'OK', message: 'approved', channel: 'web' }, output: { discount: 'round(order.total / 4)' } },
    reject: { type: 'terminal', result: { code: 'REJECTED' } },
  },
};

const ORIGIN = { origin: 'https://console.example' };

function rulesDir(): { path: string; remove: () => void } {
  const dir = tempDir('svc-debug-');
  writeFileSync(join(dir.path, 'shop.json'), JSON.stringify(SHOP));
  return dir;
}

describe('with --debug-mode', () => {
  let server: ServerProcess;
  let dir: { path: string; remove: () => void };

  before(async () => {
    dir = rulesDir();
    server = await startServer(['--debug-mode', '--rules-dir', dir.path, '--disable-grpc']);
  });

  after(async () => {
    await server?.stop();
    dir?.remove();
  });

  it('GET /api/v1/debug/rulesets/:name renders every expression of every step', async () => {
    const res = await http(server.url, 'GET', '/api/v1/debug/rulesets/shop');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      name: 'shop',
      version: '2.0.0',
      description: 'debug fixture',
      entry_step: 'check',
      field_missing: 'lenient',
      steps: [
        {
          id: 'check',
          name: 'Check customer',
          type: 'decision',
          branches: [
            {
              condition: 'user.age >= 18 && user.country in ["US", "CA"]',
              parsed: '(&& (>= user.age 18) (in user.country ["US", "CA"]))',
              next_step: 'discount',
            },
            { condition: 'starts_with(user.name, "VIP")', parsed: 'starts_with(user.name, "VIP")', next_step: 'discount' },
          ],
          default_next: 'reject',
        },
        {
          id: 'discount',
          name: 'discount',
          type: 'action',
          actions: [
            { action: 'set_variable', name: 'rate', value: 'order.total*0.1', parsed: '(* order.total 0.1)' },
            { action: 'log', message: 'discount granted', level: 'debug' },
          ],
          next_step: 'ok',
        },
        {
          id: 'ok',
          name: 'ok',
          type: 'terminal',
          result: { code: 'OK', message: 'approved', channel: 'web' },
          output: [{ key: 'discount', expression: 'round(order.total / 4)', parsed: 'round((/ order.total 4))' }],
        },
        { id: 'reject', name: 'reject', type: 'terminal', result: { code: 'REJECTED', message: '' }, output: [] },
      ],
    });
  });

  it('each rendering equals the `parsed` of POST /eval for the same expression', async () => {
    const res = await http(server.url, 'GET', '/api/v1/debug/rulesets/shop');
    const pairs: Array<[string, string]> = [];
    for (const step of res.body.steps) {
      for (const b of step.branches ?? []) pairs.push([b.condition, b.parsed]);
      for (const a of step.actions ?? []) if (a.action === 'set_variable') pairs.push([a.value, a.parsed]);
      for (const o of step.output ?? []) pairs.push([o.expression, o.parsed]);
    }
    assert.equal(pairs.length, 4);
    for (const [expression, parsed] of pairs) {
      const context = { user: { age: 30, country: 'US', name: 'VIP Ann' }, order: { total: 42 } };
      const evaluated = await http(server.url, 'POST', '/api/v1/eval', { expression, context });
      assert.equal(evaluated.status, 200, expression);
      assert.equal(evaluated.body.parsed, parsed, expression);
    }
  });

  it('an unknown ruleset is 404 NOT_FOUND; a bad name is 400', async () => {
    const missing = await http(server.url, 'GET', '/api/v1/debug/rulesets/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
    const bad = await http(server.url, 'GET', '/api/v1/debug/rulesets/.hidden');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
  });

  it('CORS: a preflight from any origin is answered 204 with the methods and the requested headers', async () => {
    const res = await http(server.url, 'OPTIONS', '/api/v1/execute/shop', undefined, {
      ...ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, x-tenant-id',
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /DELETE/);
    assert.equal(res.headers.get('access-control-allow-headers'), 'content-type, x-tenant-id');
  });

  it('CORS: normal answers and error answers carry Access-Control-Allow-Origin: *', async () => {
    const ok = await http(server.url, 'POST', '/api/v1/execute/shop', { input: { user: { name: 'VIP Ann' }, order: { total: 42 } } }, ORIGIN);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.code, 'OK');
    assert.equal(ok.headers.get('access-control-allow-origin'), '*');
    const list = await http(server.url, 'GET', '/api/v1/rulesets', undefined, ORIGIN);
    assert.equal(list.headers.get('access-control-allow-origin'), '*');
    const missing = await http(server.url, 'GET', '/api/v1/rulesets/nope', undefined, ORIGIN);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('access-control-allow-origin'), '*');
    const bad = await http(server.url, 'POST', '/api/v1/eval', '{not json', ORIGIN);
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('access-control-allow-origin'), '*');
  });
});

describe('without --debug-mode', () => {
  let server: ServerProcess;
  let dir: { path: string; remove: () => void };

  before(async () => {
    dir = rulesDir();
    server = await startServer(['--rules-dir', dir.path, '--disable-grpc']);
  });

  after(async () => {
    await server?.stop();
    dir?.remove();
  });

  it('the debug endpoint is 404 with the catalog body, for a ruleset that exists', async () => {
    const res = await http(server.url, 'GET', '/api/v1/debug/rulesets/shop');
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'NOT_FOUND');
  });

  it('no CORS: no Access-Control-Allow-Origin header, and a preflight is not answered 204', async () => {
    const ok = await http(server.url, 'GET', '/api/v1/rulesets', undefined, ORIGIN);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), null);
    const preflight = await http(server.url, 'OPTIONS', '/api/v1/execute/shop', undefined, {
      ...ORIGIN,
      'access-control-request-method': 'POST',
    });
    assert.notEqual(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal(preflight.headers.get('access-control-allow-methods'), null);
  });
});
