/**
 * Bad input over real sockets (fast-check), HTTP and gRPC. HTTP: random JSON bodies, and valid requests with one
 * part replaced by random JSON or removed, sent to every route that reads a body and to random
 * ruleset names, against a real `svc-server` process (HTTP fast path included). Every answer is
 * a success or an error with the catalog's `{error, code}` body. A 5xx only where SPEC.md gives
 * one: an execution error on execute and batch (a type error in the ruleset's own expressions,
 * a missing field in strict mode...) and a filter the format cannot express; never an
 * unexpected exception (`internal error: ...`), never a 5xx elsewhere. Afterwards the server is
 * up, and a ruleset the requests never named is stored unchanged.
 *
 * Tenants (`--multi-tenancy-enabled`, with a rules dir): random and damaged tenant records on
 * POST and PUT `/api/v1/tenants`, random `X-Tenant-ID` values; the same answers are allowed, and
 * after a restart on the same rules dir the server starts with an untouched tenant intact
 * (`tenants.json` is never left unreadable).
 *
 * gRPC: the JSON text fields (`input_json`, `inputs_json`, `context_json`), names and
 * expressions get the same random and damaged values; every answer is OK or a status with the
 * catalog's `svc-error-code`, INTERNAL only for a specified execution error.
 *
 * Authentication on (`--auth-keys-file`): the same bodies again (fewer of them), each request
 * carrying a valid admin key; the same answers are allowed, and never a 401, 403 or 429.
 *
 * Environment: HTTP_FUZZ_SEED (printed; replays a run), HTTP_FUZZ_RUNS (per generator, default 150),
 * HTTP_FUZZ_AUTH_RUNS (per generator with authentication on, default a fifth of HTTP_FUZZ_RUNS).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { connect, type GrpcOutcome, type TestClient } from '../helpers/grpc-client.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { bearer, writeKeysFile } from '../helpers/auth-fixtures.js';

const SEED = Number(process.env['HTTP_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env['HTTP_FUZZ_RUNS'] ?? 150);
/** Per generator in the run with authentication on (a fifth: it repeats the bodies of the run without). */
const AUTH_RUNS = Number(process.env['HTTP_FUZZ_AUTH_RUNS'] ?? Math.max(10, Math.floor(RUNS / 5)));
const API = '/api/v1';

const LOAN = {
  config: { name: 'loan', version: '1.0.0', entry_step: 'age', description: 'fuzz target' },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'vip' }], default_next: 'reject' },
    vip: { type: 'decision', branches: [{ condition: 'user.vip || order.amount > 1000', next_step: 'note' }], default_next: 'review' },
    note: {
      type: 'action',
      actions: [
        { action: 'set_variable', name: 'tier', value: '"gold"' },
        { action: 'log', message: 'vip' },
      ],
      next_step: 'approve',
    },
    approve: { type: 'terminal', result: { code: 'APPROVE', message: 'ok' }, output: { tier: '$tier', amount: 'order.amount * 2' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
    reject: { type: 'terminal', result: { code: 'REJECT' } },
  },
};
const KEEP = { ...LOAN, config: { ...LOAN.config, name: 'keep-untouched' } };
const INPUT = { user: { age: 30, vip: true, country: 'US' }, order: { amount: 1500 } };
const FILTER = { known_input: { user: { country: 'US' } }, target_results: ['APPROVE'], format: 'sql', field_mapping: { 'user.age': 'age' }, max_paths: 10 };
const EVAL = { expression: 'user.age >= 18 && user.country in ["US", "CA"]', context: INPUT };

/** JSON values, with hostile keys and values mixed in. */
const hostile = fc.constantFrom<unknown>(
  { ['__proto__']: { polluted: true } },
  JSON.parse('{"constructor": {"prototype": {"polluted": true}}}'),
  JSON.parse('{"\\u0063onstructor": {"prototype": {"x": 1}}}'),
  '../x',
  '..',
  '',
  '\u0000',
  '\ud800',
  1e308,
  -0,
  Number.MAX_SAFE_INTEGER + 2,
  nest(600),
  [],
  {},
);
const value: fc.Arbitrary<unknown> = fc.oneof({ weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) }, { weight: 1, arbitrary: hostile });

function nest(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** Every path to a value inside `v` (objects and arrays), the root included. */
function paths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

/** `base` with the value at one of its paths replaced by `replacement`, or removed. */
function mutate(base: unknown, pick: number, replacement: unknown, remove: boolean): unknown {
  const copy = structuredClone(base);
  const all = paths(copy);
  const path = all[pick % all.length]!;
  if (path.length === 0) return replacement;
  let parent = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove && !Array.isArray(parent)) delete parent[last];
  else parent[last] = replacement;
  return copy;
}

const mutant = (base: unknown): fc.Arbitrary<unknown> =>
  fc.tuple(fc.nat(), value, fc.boolean()).map(([pick, replacement, remove]) => mutate(base, pick, replacement, remove));

/** A request: path and body text (usually JSON; sometimes not JSON at all). */
interface Req {
  readonly path: string;
  readonly body: string;
  /** Extra request headers (a Content-Type with a charset). */
  readonly headers?: Record<string, string>;
}

const asJson =
  (path: string) =>
  (v: unknown): Req => ({ path, body: JSON.stringify(v) ?? 'null' });
const GENERATORS: Record<string, fc.Arbitrary<Req>> = {
  'create: random JSON': value.map(asJson(`${API}/rulesets`)),
  'create: a valid ruleset, one part changed': mutant(LOAN).map(asJson(`${API}/rulesets`)),
  'execute: random JSON': value.map(asJson(`${API}/execute/loan`)),
  'execute: a valid request, one part changed': mutant({ input: INPUT, trace: true }).map(asJson(`${API}/execute/loan`)),
  'batch: a valid request, one part changed': mutant({ inputs: [INPUT, INPUT], trace: false }).map(asJson(`${API}/execute/loan/batch`)),
  'eval: random JSON': value.map(asJson(`${API}/eval`)),
  'eval: a valid request, one part changed': mutant(EVAL).map(asJson(`${API}/eval`)),
  'eval: random expression text': fc.tuple(fc.string({ maxLength: 40 }), value).map(([expression, context]) => asJson(`${API}/eval`)({ expression, context })),
  'filter: a valid request, one part changed': mutant(FILTER).map(asJson(`${API}/rulesets/loan/filter`)),
  'any route: text that is not JSON': fc
    .tuple(fc.constantFrom(`${API}/rulesets`, `${API}/execute/loan`, `${API}/eval`, `${API}/rulesets/loan/filter`), fc.string({ maxLength: 30 }))
    .filter(([, body]) => !isJson(body))
    .map(([path, body]) => ({ path, body })),
  'execute: a random ruleset name': fc.string({ maxLength: 40 }).map((name) => asJson(`${API}/execute/${encodeURIComponent(name)}`)({ input: INPUT })),
  'any name route: a long name': fc
    .tuple(
      fc.constantFrom(`${API}/execute/`, `${API}/rulesets/`, `${API}/execute/`),
      fc.integer({ min: 100, max: 5000 }),
      fc.constantFrom('', '/batch', '/filter', '/rollback'),
    )
    .map(([route, n, tail]) => asJson(`${route}${'n'.repeat(n)}${tail}`)({ input: INPUT, inputs: [INPUT], seq: 1, ...FILTER })),
  'any route: a Content-Type charset': fc
    .tuple(
      fc.constantFrom(`${API}/rulesets`, `${API}/execute/loan`, `${API}/eval`, `${API}/rulesets/loan/filter`, `${API}/execute/loan/batch`),
      fc.constantFrom('utf-8', 'UTF-8', 'utf8', '"utf-8"', 'latin1', 'iso-8859-1', 'utf-16', 'us-ascii', '', 'x;y'),
    )
    .map(([path, charset]) => ({
      path,
      body: JSON.stringify(path.endsWith('/eval') ? EVAL : path.endsWith('/filter') ? FILTER : { input: INPUT, inputs: [INPUT] }),
      headers: { 'content-type': `application/json; charset=${charset}` },
    })),
};

/** SPEC.md's 500s: execution errors (execute, batch) and filters the format cannot express. */
function specified500(path: string, status: number, body: Record<string, unknown> | undefined): boolean {
  if (status !== 500 || body === undefined || body['code'] !== 'INTERNAL_ERROR') return false;
  const message = String(body['error']);
  if (message.startsWith('internal error:')) return false; // an unexpected exception
  return path.startsWith(`${API}/execute/`) || path.endsWith('/filter');
}

/** One HTTP answer: status, text, and the text parsed when it is JSON. */
interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: Record<string, unknown> | undefined;
}

async function send(base: string, method: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed };
}

/** What is wrong with an answer to `path`, or null: a 5xx SPEC.md does not give, a non-JSON answer, an error without `{error, code}`. */
function problemOf(path: string, a: Answer): string | null {
  if (a.status >= 500 && !specified500(path, a.status, a.body)) return `status ${a.status}`;
  if (a.body === undefined) return 'answer is not JSON';
  if (a.status >= 400 && (typeof a.body['code'] !== 'string' || typeof a.body['error'] !== 'string')) return 'error answer without {error, code}';
  return null;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

let server: ServerProcess;
let grpcClient: TestClient;

before(async () => {
  server = await startServer(['--audit-sample-rate', '0']);
  grpcClient = connect(server.grpcAddress);
  for (const doc of [LOAN, KEEP]) assert.equal((await http(server.url, 'POST', `${API}/rulesets`, doc)).status, 200);
});

after(async () => {
  grpcClient?.close();
  await server?.stop('SIGKILL');
});

/** Text for a JSON string field: random JSON, damaged valid JSON, or text that is not JSON. */
const jsonText = (valid: unknown): fc.Arbitrary<string> =>
  fc.oneof(
    value.map((v) => JSON.stringify(v) ?? 'null'),
    mutant(valid).map((v) => JSON.stringify(v) ?? 'null'),
    fc.string({ maxLength: 30 }),
  );
const name = fc.oneof(fc.constant('loan'), fc.string({ maxLength: 40 }));

const GRPC_GENERATORS: Record<string, fc.Arbitrary<[string, object]>> = {
  Execute: fc.tuple(name, jsonText(INPUT), fc.boolean()).map(([n, input_json, trace]) => ['Execute', { name: n, input_json, trace }]),
  BatchExecute: fc
    .tuple(name, fc.array(jsonText(INPUT), { maxLength: 4 }), fc.boolean())
    .map(([n, inputs_json, trace]) => ['BatchExecute', { name: n, inputs_json, trace }]),
  Eval: fc
    .tuple(fc.oneof(fc.constant(EVAL.expression), fc.string({ maxLength: 40 })), jsonText(INPUT))
    .map(([expression, context_json]) => ['Eval', { expression, context_json }]),
  GetRuleSet: name.map((n) => ['GetRuleSet', { name: n }]),
};

/** gRPC status numbers the catalog uses for these calls (docs/errors.md). */
const GRPC_OK = 0;
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_NOT_FOUND = 5;
const GRPC_INTERNAL = 13;

test(`random and damaged fields on the gRPC calls: OK, a catalog status, or INTERNAL for an execution error (seed ${SEED})`, async () => {
  const codes = new Map<number, number>();
  const failures: string[] = [];
  let g = 100;
  for (const [label, gen] of Object.entries(GRPC_GENERATORS)) {
    for (const [method, request] of fc.sample(gen, { numRuns: RUNS, seed: SEED + g++ })) {
      const out: GrpcOutcome = await grpcClient.call(method, request);
      const code = out.ok ? GRPC_OK : out.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
      let problem: string | null = null;
      if (!out.ok) {
        if (out.svcCode === undefined) problem = `status ${out.code} without svc-error-code`;
        else if (![GRPC_INVALID_ARGUMENT, GRPC_NOT_FOUND, GRPC_INTERNAL].includes(out.code)) problem = `status ${out.code} (${out.svcCode})`;
        else if (out.code === GRPC_INTERNAL && (method === 'Eval' || method === 'GetRuleSet' || out.details.startsWith('internal error:')))
          problem = `INTERNAL: ${out.details}`;
      }
      if (problem !== null && failures.length < 10) failures.push(`${label}: ${problem}: ${JSON.stringify(request).slice(0, 300)}`);
    }
  }
  console.log(`grpc fuzz: status codes ${JSON.stringify(Object.fromEntries([...codes].sort((a, b) => a[0] - b[0])))}`);
  assert.deepEqual(failures, [], `replay with HTTP_FUZZ_SEED=${SEED}`);
  assert.ok((codes.get(GRPC_OK) ?? 0) > RUNS / 2, 'some calls succeed');
  assert.ok((codes.get(GRPC_INVALID_ARGUMENT) ?? 0) > RUNS, 'many calls are refused with INVALID_ARGUMENT');
  const health = await grpcClient.call('Health', {});
  assert.equal(health.ok, true);
});

/** Sends `runs` requests of every body generator to `base` (with `extra` headers); the statuses seen and the problems found. */
async function fuzzBodies(base: string, runs: number, extra: Record<string, string> = {}): Promise<{ statuses: Map<number, number>; failures: string[] }> {
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  let g = 0;
  for (const [name, gen] of Object.entries(GENERATORS)) {
    const reqs = fc.sample(gen, { numRuns: runs, seed: SEED + g++ });
    for (const req of reqs) {
      const answer = await send(base, 'POST', req.path, req.body, { ...req.headers, ...extra });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const problem = problemOf(req.path, answer);
      if (problem !== null && failures.length < 10)
        failures.push(`${name}: ${problem}: POST ${req.path} ${req.body.slice(0, 300)}\n  -> ${answer.text.slice(0, 300)}`);
    }
  }
  return { statuses, failures };
}

test(`random and damaged bodies on every body route: 2xx, a catalog 4xx, or one of SPEC.md's 500s (seed ${SEED})`, async () => {
  console.log(`http fuzz: HTTP_FUZZ_SEED=${SEED}, ${RUNS} requests per generator`);
  const { statuses, failures } = await fuzzBodies(server.url, RUNS);
  console.log(`http fuzz: statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  assert.deepEqual(failures, [], `replay with HTTP_FUZZ_SEED=${SEED}`);
  // The generators reach both sides: successes and refusals.
  assert.ok((statuses.get(200) ?? 0) > RUNS, 'some requests succeed');
  assert.ok((statuses.get(400) ?? 0) > RUNS, 'many requests are refused with 400');

  // Still up, and the ruleset nobody named is intact.
  assert.equal((await http(server.url, 'GET', '/health')).status, 200);
  const kept = await http(server.url, 'GET', `${API}/rulesets/keep-untouched`);
  assert.equal(kept.status, 200);
  assert.deepEqual(kept.body, KEEP);
  const run = await http(server.url, 'POST', `${API}/execute/keep-untouched`, { input: INPUT });
  assert.equal(run.body.code, 'APPROVE');
  assert.equal(server.child.exitCode, null);
});

test(`authentication on: the same bodies with a valid admin key get the same kinds of answers, never 401/403/429 (seed ${SEED})`, async () => {
  const dir = tempDir('svc-fuzz-auth-');
  const keys = writeKeysFile(dir.path, [{ id: 'fuzz-admin', role: 'admin' }]);
  const admin = bearer(keys.keys['fuzz-admin']!);
  const authed = await startServer(['--disable-grpc', '--audit-sample-rate', '0', '--auth-keys-file', keys.path]);
  try {
    for (const doc of [LOAN, KEEP]) assert.equal((await http(authed.url, 'POST', `${API}/rulesets`, doc, admin)).status, 200);
    const { statuses, failures } = await fuzzBodies(authed.url, AUTH_RUNS, admin);
    console.log(
      `http fuzz with auth: ${AUTH_RUNS} requests per generator, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
    assert.deepEqual(failures, [], `replay with HTTP_FUZZ_SEED=${SEED}`);
    for (const refused of [401, 403, 429]) assert.equal(statuses.get(refused) ?? 0, 0, `no ${refused} for a valid admin key`);
    assert.ok((statuses.get(200) ?? 0) > AUTH_RUNS, 'some requests succeed');
    assert.ok((statuses.get(400) ?? 0) > AUTH_RUNS, 'many requests are refused with 400');

    // Still up, authentication still on, and the ruleset nobody named is intact.
    assert.equal((await http(authed.url, 'GET', '/health')).status, 200);
    assert.equal((await http(authed.url, 'GET', `${API}/rulesets/keep-untouched`)).status, 401);
    const kept = await http(authed.url, 'GET', `${API}/rulesets/keep-untouched`, undefined, admin);
    assert.equal(kept.status, 200);
    assert.deepEqual(kept.body, KEEP);
    assert.equal((await http(authed.url, 'POST', `${API}/execute/keep-untouched`, { input: INPUT }, admin)).body.code, 'APPROVE');
    assert.equal(authed.child.exitCode, null);
  } finally {
    await authed.stop('SIGKILL');
    dir.remove();
  }
});

const TENANT = { id: 'acme', name: 'ACME', enabled: true, qps_limit: 50, burst: 100, execution_timeout_ms: 250, max_rulesets: 20 };
const KEPT_TENANT = { ...TENANT, id: 'kept-tenant', name: 'Kept' };

test(`tenants: random and damaged records, random X-Tenant-ID; tenants.json survives a restart (seed ${SEED})`, async () => {
  const dir = tempDir('svc-fuzz-tenants-');
  const args = ['--disable-grpc', '--audit-sample-rate', '0', '--multi-tenancy-enabled', '--rules-dir', dir.path];
  let mt = await startServer(args);
  try {
    assert.equal((await http(mt.url, 'POST', `${API}/tenants`, KEPT_TENANT)).status, 201);
    assert.equal((await http(mt.url, 'POST', `${API}/rulesets`, KEEP, { 'x-tenant-id': 'kept-tenant' })).status, 200);
    const requests: fc.Arbitrary<{ method: string; path: string; body: unknown; tenant?: string }>[] = [
      fc.oneof(value, mutant(TENANT)).map((body) => ({ method: 'POST', path: `${API}/tenants`, body })),
      fc.tuple(fc.oneof(fc.constant('acme'), fc.string({ maxLength: 20 })), fc.oneof(value, mutant(TENANT))).map(([id, body]) => ({
        method: 'PUT',
        path: `${API}/tenants/${encodeURIComponent(id)}`,
        body,
      })),
      fc.tuple(fc.string({ maxLength: 30 }), fc.oneof(value, mutant({ input: INPUT }))).map(([tenant, body]) => ({
        method: 'POST',
        path: `${API}/execute/keep-untouched`,
        body,
        tenant,
      })),
    ];
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let g = 200;
    for (const gen of requests) {
      for (const r of fc.sample(gen, { numRuns: RUNS, seed: SEED + g++ })) {
        // Header values must be latin-1 without control characters; other tenant ids go as they can.
        const tenant = r.tenant === undefined ? undefined : r.tenant.replace(/[^\x20-\x7e]/g, '?');
        const answer = await send(mt.url, r.method, r.path, JSON.stringify(r.body) ?? 'null', tenant !== undefined ? { 'x-tenant-id': tenant } : {});
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const problem = problemOf(r.path, answer);
        if (problem !== null && failures.length < 10)
          failures.push(`${problem}: ${r.method} ${r.path} ${tenant ?? ''} ${JSON.stringify(r.body)?.slice(0, 200)} -> ${answer.text.slice(0, 200)}`);
      }
    }
    console.log(`tenant fuzz: statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    assert.deepEqual(failures, [], `replay with HTTP_FUZZ_SEED=${SEED}`);
    assert.ok((statuses.get(400) ?? 0) > RUNS, 'many requests are refused with 400');

    // A restart on the same rules dir reads tenants.json back: the untouched tenant and its rule are there.
    assert.equal(await mt.stop(), 0);
    mt = await startServer(args);
    const kept = await http(mt.url, 'GET', `${API}/tenants/kept-tenant`);
    assert.equal(kept.status, 200);
    assert.deepEqual(kept.body, KEPT_TENANT);
    const run = await http(mt.url, 'POST', `${API}/execute/keep-untouched`, { input: INPUT }, { 'x-tenant-id': 'kept-tenant' });
    assert.equal(run.body.code, 'APPROVE');
  } finally {
    await mt.stop('SIGKILL');
    dir.remove();
  }
});
