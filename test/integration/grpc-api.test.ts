/**
 * The gRPC API against the real built server process, over TCP, with a real grpc-js
 * client loading the same proto: every method, every error status a client can reach, 64-bit
 * fields as decimal strings, the message size limit, and metrics and audit counting gRPC
 * executions exactly like HTTP ones.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, Status, type TestClient } from '../helpers/grpc-client.js';
import { BROKEN, LOAN, counter, postRulesets } from '../helpers/grpc-fixtures.js';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const DIGITS = /^\d+$/;
const LIMIT = 65536;

let server: ServerProcess;
let client: TestClient;

before(async () => {
  server = await startServer([
    '--audit-sample-rate',
    '100',
    '--max-steps',
    '100000000',
    '--execution-timeout-ms',
    '60000',
    '--max-request-body-bytes',
    String(LIMIT),
  ]);
  await postRulesets(server.url, [LOAN, BROKEN, counter('slowpoke', 5), counter('metered')]);
  client = connect(server.grpcAddress);
});

after(async () => {
  client?.close();
  await server?.stop();
});

describe('gRPC methods', () => {
  it('logs `grpc listening` with a 127.0.0.1:PORT address', () => {
    assert.match(server.grpcAddress, /^127\.0\.0\.1:\d+$/);
  });

  it('ListRuleSets lists every ruleset; a missing description is ""', async () => {
    const res = await client.ok('ListRuleSets', {});
    const byName = new Map(res.rulesets.map((r: any) => [r.name, r]));
    assert.deepEqual(byName.get('loan'), { name: 'loan', version: '2.1.0', description: 'loan approval' });
    assert.deepEqual(byName.get('broken'), { name: 'broken', version: '1.0.0', description: '' });
    assert.equal(res.rulesets.length, 4);
  });

  it('GetRuleSet returns the definition as JSON text, equal to HTTP GET', async () => {
    const res = await client.ok('GetRuleSet', { name: 'loan' });
    const viaHttp = await http(server.url, 'GET', '/api/v1/rulesets/loan');
    assert.deepEqual(JSON.parse(res.ruleset_json), viaHttp.body);
    assert.equal(JSON.parse(res.ruleset_json).config.name, 'loan');
  });

  it('Execute without trace: code, message, output_json, duration_us as a decimal string, no trace', async () => {
    const res = await client.ok('Execute', { name: 'loan', input_json: JSON.stringify({ user: { age: 30, country: 'US' } }) });
    assert.equal(res.code, 'APPROVED');
    assert.equal(res.message, 'welcome');
    assert.deepEqual(JSON.parse(res.output_json), { tier: 'gold', limit: 3000 });
    assert.equal(typeof res.duration_us, 'string');
    assert.match(res.duration_us, DIGITS);
    assert.equal(res.trace, null);
  });

  it('Execute with trace: TraceInfo with path and steps (uint64 durations as strings)', async () => {
    const res = await client.ok('Execute', { name: 'loan', input_json: '{"user":{"age":12}}', trace: true });
    assert.equal(res.code, 'REJECTED');
    assert.deepEqual(JSON.parse(res.output_json), {});
    assert.equal(res.trace.path, 'check -> no');
    assert.deepEqual(
      res.trace.steps.map((s: any) => [s.id, s.name]),
      [
        ['check', 'Check age'],
        ['no', 'Reject'],
      ],
    );
    for (const s of res.trace.steps) assert.match(s.duration_us, DIGITS);
  });

  it('Eval returns result_json and the parsed rendering; an empty context_json means {}', async () => {
    const res = await client.ok('Eval', { expression: 'user.age >= 18 && user.country in ["US", "CA"]', context_json: '{"user":{"age":20,"country":"CA"}}' });
    assert.deepEqual(res, { result_json: 'true', parsed: '(&& (>= user.age 18) (in user.country ["US", "CA"]))' });
    const empty = await client.ok('Eval', { expression: 'coalesce(missing, "dflt")' });
    assert.equal(JSON.parse(empty.result_json), 'dflt');
    const obj = await client.ok('Eval', { expression: 'a', context_json: '{"a":{"b":[1,null]}}' });
    assert.deepEqual(JSON.parse(obj.result_json), { b: [1, null] });
  });

  it('Health: healthy, the server version, uptime_seconds as a decimal string, rules_count', async () => {
    const res = await client.ok('Health', {});
    const viaHttp = await http(server.url, 'GET', '/health');
    assert.equal(res.status, 'healthy');
    assert.equal(res.version, viaHttp.body.version);
    assert.equal(typeof res.uptime_seconds, 'string');
    assert.match(res.uptime_seconds, DIGITS);
    assert.equal(res.rules_count, 4);
  });

  it('BatchExecute: results in input order, an item error in place, the summary', async () => {
    const res = await client.ok('BatchExecute', {
      name: 'loan',
      inputs_json: ['{"user":{"age":40,"country":"CA"}}', '"not an object"', '{"user":{"age":3}}'],
      trace: true,
    });
    assert.deepEqual(
      res.results.map((r: any) => r.outcome),
      ['result', 'error', 'result'],
    );
    assert.equal(res.results[0].result.code, 'APPROVED');
    assert.equal(res.results[0].result.trace.path, 'check -> ok');
    assert.deepEqual(res.results[1].error, {
      error: 'inputs[1] must be a JSON object',
      code: 'BAD_REQUEST',
      status: Status.INVALID_ARGUMENT,
      problems_json: '',
    });
    assert.equal(res.results[2].result.code, 'REJECTED');
    assert.equal(res.summary.total, 3);
    assert.equal(res.summary.success, 2);
    assert.equal(res.summary.failed, 1);
    assert.match(res.summary.total_duration_us, DIGITS);
  });

  it('BatchExecute: execution errors are items with the catalog code and its gRPC status', async () => {
    const res = await client.ok('BatchExecute', { name: 'broken', inputs_json: ['{"name":"x"}'] });
    assert.equal(res.results[0].outcome, 'error');
    assert.equal(res.results[0].error.code, 'INTERNAL_ERROR');
    assert.equal(res.results[0].error.status, Status.INTERNAL);
    assert.deepEqual(res.summary, { total: 1, success: 0, failed: 1, total_duration_us: res.summary.total_duration_us });
  });
});

describe('gRPC error statuses', () => {
  const cases: Array<{ name: string; method: string; req: object; status: number; svcCode: string; details: RegExp }> = [
    {
      name: 'unknown ruleset (Execute)',
      method: 'Execute',
      req: { name: 'nope', input_json: '{}' },
      status: Status.NOT_FOUND,
      svcCode: 'NOT_FOUND',
      details: /ruleset 'nope' not found/,
    },
    { name: 'unknown ruleset (GetRuleSet)', method: 'GetRuleSet', req: { name: 'nope' }, status: Status.NOT_FOUND, svcCode: 'NOT_FOUND', details: /not found/ },
    {
      name: 'unknown ruleset (BatchExecute)',
      method: 'BatchExecute',
      req: { name: 'nope', inputs_json: ['{}'] },
      status: Status.NOT_FOUND,
      svcCode: 'NOT_FOUND',
      details: /not found/,
    },
    {
      name: 'malformed input_json',
      method: 'Execute',
      req: { name: 'loan', input_json: '{"user":' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^input_json: malformed JSON/,
    },
    {
      name: 'empty input_json',
      method: 'Execute',
      req: { name: 'loan', input_json: '' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /input_json is required/,
    },
    {
      name: 'input_json that is not an object',
      method: 'Execute',
      req: { name: 'loan', input_json: '[1]' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /input must be a JSON object/,
    },
    {
      name: 'input_json with a __proto__ key',
      method: 'Execute',
      req: { name: 'loan', input_json: '{"__proto__":{"x":1}}' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^input_json contains a forbidden key/,
    },
    {
      name: 'input_json with a number outside the double range',
      method: 'Execute',
      req: { name: 'loan', input_json: '{"user":{"age":1e309}}' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^input_json holds a number outside the double range/,
    },
    {
      name: 'context_json with a number outside the double range',
      method: 'Eval',
      req: { expression: 'x % 3', context_json: '{"x":1e309}' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^context_json holds a number outside the double range/,
    },
    {
      name: 'invalid ruleset name',
      method: 'Execute',
      req: { name: '../etc', input_json: '{}' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /invalid ruleset name/,
    },
    {
      name: 'bad expression',
      method: 'Eval',
      req: { expression: 'a >= ', context_json: '{}' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^parse error: .* at \d+/,
    },
    {
      name: 'eval run-time error',
      method: 'Eval',
      req: { expression: '"a" * 2' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^evaluation error/,
    },
    {
      name: 'malformed context_json',
      method: 'Eval',
      req: { expression: 'a', context_json: 'nope' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^context_json: malformed JSON/,
    },
    {
      name: 'context_json that is not an object',
      method: 'Eval',
      req: { expression: 'a', context_json: '3' },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /context must be a JSON object/,
    },
    {
      name: 'malformed batch item',
      method: 'BatchExecute',
      req: { name: 'loan', inputs_json: ['{}', '{'] },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /^inputs_json\[1\]: malformed JSON/,
    },
    {
      name: 'empty batch',
      method: 'BatchExecute',
      req: { name: 'loan', inputs_json: [] },
      status: Status.INVALID_ARGUMENT,
      svcCode: 'BAD_REQUEST',
      details: /must not be empty/,
    },
    {
      name: 'execution error',
      method: 'Execute',
      req: { name: 'broken', input_json: '{"name":"x"}' },
      status: Status.INTERNAL,
      svcCode: 'INTERNAL_ERROR',
      details: /./,
    },
    {
      name: 'execution timeout',
      method: 'Execute',
      req: { name: 'slowpoke', input_json: '{"limit":100000000}' },
      status: Status.DEADLINE_EXCEEDED,
      svcCode: 'TIMEOUT',
      details: /timed out after 5 ms/,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${Status[c.status]}`, async () => {
      const out = await client.call(c.method, c.req);
      assert.equal(out.ok, false, `${c.method} should fail`);
      if (out.ok) return;
      assert.equal(out.code, c.status, `status ${Status[out.code]}: ${out.details}`);
      assert.equal(out.svcCode, c.svcCode);
      assert.match(out.details, c.details);
    });
  }

  it("a request that is not valid protobuf is INVALID_ARGUMENT BAD_REQUEST (the caller's fault), on every method", async () => {
    // A tag whose varint runs past the end of the message: protobuf cannot decode it.
    const garbage = Buffer.from([0xff, 0xff, 0xff]);
    for (const method of ['Execute', 'Eval', 'BatchExecute', 'GetRuleSet', 'ListRuleSets', 'Health']) {
      const out = await new Promise<{ code: number; details: string; svcCode: unknown }>((resolve) => {
        client.raw.makeUnaryRequest(
          `/rules.RuleService/${method}`,
          (b: Buffer) => b,
          (b: Buffer) => b,
          garbage,
          (err) => resolve({ code: err?.code ?? 0, details: err?.details ?? '', svcCode: err?.metadata?.get('svc-error-code')[0] }),
        );
      });
      assert.equal(out.code, Status.INVALID_ARGUMENT, `${method}: ${Status[out.code]} ${out.details}`);
      assert.equal(out.svcCode, 'BAD_REQUEST', method);
      assert.match(out.details, /^malformed request message: /, method);
    }
    // The server is unharmed: the next well-formed call is served.
    assert.equal((await client.ok('Execute', { name: 'loan', input_json: '{"user":{"age":30,"country":"US"}}' })).code, 'APPROVED');
  });

  it('a message over --max-request-body-bytes is RESOURCE_EXHAUSTED; one under it is served', async () => {
    const big = JSON.stringify({ user: { age: 30, country: 'US' }, pad: 'x'.repeat(LIMIT) });
    const out = await client.call('Execute', { name: 'loan', input_json: big });
    assert.equal(out.ok, false);
    if (!out.ok) assert.equal(out.code, Status.RESOURCE_EXHAUSTED);
    const fits = JSON.stringify({ user: { age: 30, country: 'US' }, pad: 'x'.repeat(LIMIT - 1000) });
    assert.equal((await client.ok('Execute', { name: 'loan', input_json: fits })).code, 'APPROVED');
  });
});

describe('metrics and audit count gRPC executions like HTTP ones', () => {
  it('svc_executions_total, the terminal counter and rule_executed lines (source_ip) follow gRPC calls', async () => {
    const before = await metricsText(server.url);
    const auditBefore = auditLines('metered').length;
    for (let i = 0; i < 3; i++) await client.ok('Execute', { name: 'metered', input_json: '{"limit":2}' });
    const afterText = await metricsText(server.url);

    const delta = (name: string, labels: Record<string, string>) => sample(afterText, name, labels) - sample(before, name, labels);
    assert.equal(delta('svc_executions_total', { ruleset: 'metered', result: 'success' }), 3);
    assert.equal(delta('svc_terminal_results_total', { ruleset: 'metered', code: 'COUNTED' }), 3);
    assert.equal(delta('svc_execution_duration_seconds_count', { ruleset: 'metered' }), 3);
    const mine = (await waitForAudit('metered', auditBefore + 3)).slice(auditBefore);
    assert.equal(mine.length, 3);
    for (const l of mine) {
      assert.equal(l['source_ip'], '127.0.0.1');
      assert.equal(l['result'], 'success');
      assert.equal(typeof l['duration_us'], 'number');
    }
  });

  it('an execution error over gRPC counts as result="error" and audits result "error"', async () => {
    const before = await metricsText(server.url);
    const auditBefore = auditLines('broken').length;
    const out = await client.call('Execute', { name: 'broken', input_json: '{"name":"x"}' });
    assert.equal(out.ok, false);
    const afterText = await metricsText(server.url);
    assert.equal(
      sample(afterText, 'svc_executions_total', { ruleset: 'broken', result: 'error' }) -
        sample(before, 'svc_executions_total', { ruleset: 'broken', result: 'error' }),
      1,
    );
    const lines = (await waitForAudit('broken', auditBefore + 1)).slice(auditBefore);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!['result'], 'error');
    assert.equal(lines[0]!['source_ip'], '127.0.0.1');
  });

  it('Eval over gRPC counts in svc_eval_total', async () => {
    const before = sample(await metricsText(server.url), 'svc_eval_total', { result: 'success' });
    await client.ok('Eval', { expression: '1 + 1' });
    assert.equal(sample(await metricsText(server.url), 'svc_eval_total', { result: 'success' }) - before, 1);
  });
});

async function metricsText(url: string): Promise<string> {
  const res = await http(url, 'GET', '/metrics');
  assert.equal(res.status, 200);
  return String(res.body);
}

/** The value of one series (0 when absent); labels in any order. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const body = line.slice(name.length + 1, close);
    const got = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v) && Object.keys(got).length === Object.keys(labels).length) {
      return Number(line.slice(close + 1).trim());
    }
  }
  return 0;
}

function auditLines(rule: string): Record<string, unknown>[] {
  return server.stdout.filter((l) => l['event'] === 'rule_executed' && l['rule_name'] === rule);
}

/** Audit lines arrive on the child's stdout asynchronously: wait until `count` are there. */
async function waitForAudit(rule: string, count: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200 && auditLines(rule).length < count; i++) await new Promise((r) => setTimeout(r, 25));
  return auditLines(rule);
}
