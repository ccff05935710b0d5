/**
 * Every HTTP capability has its gRPC RPC (EXTENSIONS.md 5 "gRPC"), and both give the same
 * answer. Three parts:
 *
 * 1. ROUTE_RPC maps every route id of the HTTP route table (src/transport/http/routes.ts) to
 *    the RPC of `rules.RuleService` that does the same; a route that is neither mapped nor in
 *    HTTP_ONLY (each entry says why) fails the test, so a new route needs its RPC. Each mapped
 *    RPC exists in the proto the server loads and needs the same permission as its route.
 * 2. A table of requests run over HTTP and over gRPC against ONE real server (the built
 *    `svc-server` with a rules dir, multi-tenancy and the debug view on); the gRPC answer is
 *    turned into the HTTP shape (its `*_json` texts parsed) and compared. Errors compare the
 *    catalog code, the message, the HTTP and gRPC statuses of that code, and the `problems` and
 *    `failures` lists (trailing metadata `svc-problems`, `svc-failures`). A write runs on the
 *    same starting state on both transports (`setup` runs before each of the two).
 * 3. Every mapped route has at least one success row.
 *
 * The execution RPCs (Execute, BatchExecute, Eval, ListRuleSets, GetRuleSet, Health) have their
 * detailed rows in ./grpc-parity.test.ts; here each has one, for coverage.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/service/errors.js';
import { GRPC_GLOBAL_METHODS, GRPC_PERMISSIONS, type GrpcMethod } from '../../src/transport/grpc/handlers.js';
import { loadRulesPackage, SERVICE_NAME } from '../../src/transport/grpc/proto.js';
import { ROUTES } from '../../src/transport/http/routes.js';
import { connect, type GrpcOutcome, type TestClient } from '../helpers/grpc-client.js';
import { LOAN, postRulesets } from '../helpers/grpc-fixtures.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

/** The RPC that serves each HTTP route. */
const ROUTE_RPC: Readonly<Record<string, GrpcMethod>> = {
  listRulesets: 'ListRuleSets',
  putRuleset: 'PutRuleset',
  getRuleset: 'GetRuleSet',
  deleteRuleset: 'DeleteRuleset',
  listVersions: 'ListVersions',
  getAnalysis: 'GetAnalysis',
  rollback: 'Rollback',
  filter: 'Filter',
  getInputSchema: 'GetInputSchema',
  testRuleset: 'TestRuleset',
  diffRuleset: 'Diff',
  impact: 'Impact',
  draftValidate: 'DraftValidate',
  draftExecute: 'DraftExecute',
  draftFilter: 'DraftFilter',
  draftTest: 'DraftTest',
  execute: 'Execute',
  executeBatch: 'BatchExecute',
  eval: 'Eval',
  getAuditSampleRate: 'GetAuditSampleRate',
  setAuditSampleRate: 'SetAuditSampleRate',
  health: 'Health',
  // /healthz/ready is /health under a Kubernetes path (the same handler); gRPC probes use
  // grpc.health.v1.Health (./grpc-health-reflection.test.ts).
  ready: 'Health',
  listData: 'ListData',
  getData: 'GetData',
  putData: 'PutData',
  deleteData: 'DeleteData',
  listTenants: 'ListTenants',
  createTenant: 'CreateTenant',
  getTenant: 'GetTenant',
  updateTenant: 'UpdateTenant',
  deleteTenant: 'DeleteTenant',
  debugRuleset: 'DebugRuleset',
  putShadow: 'PutShadow',
  getShadow: 'GetShadow',
  deleteShadow: 'DeleteShadow',
  promoteShadow: 'PromoteShadow',
};

/** HTTP routes with no RPC, and why. Keep this list short: everything a client does belongs on both. */
const HTTP_ONLY: Readonly<Record<string, string>> = {
  // Liveness of the HTTP process for Kubernetes httpGet probes; always {"status": "alive"}. A gRPC
  // client that can connect has its answer; grpc.health.v1.Health serves gRPC probes.
  live: 'Kubernetes HTTP liveness probe',
  // Prometheus scrapes HTTP text exposition; there is no gRPC scrape protocol.
  metrics: 'Prometheus text exposition for HTTP scrapers',
  // The description of the HTTP API itself; gRPC clients have the proto file and server reflection.
  openapi: 'OpenAPI document of the HTTP API (gRPC has server reflection)',
};

type Shape = (v: any) => unknown;

interface Row {
  name: string;
  route: string;
  http: [method: string, path: string, body?: unknown, headers?: Record<string, string>];
  grpc: [method: GrpcMethod, request: object, metadata?: Record<string, string>];
  /** gRPC answer → HTTP body (success rows; absent: the HTTP answer has no body). */
  shape?: Shape;
  /** Runs before the HTTP call and again before the gRPC call: the same starting state. */
  setup?: () => Promise<void>;
  /** The messages differ by design (they name the gRPC field). */
  codeOnly?: boolean;
  /** Keys whose values are times of the setup (each transport's run has its own): blanked at any depth on both sides. */
  mask?: readonly string[];
}

const parse = (text: string): unknown => JSON.parse(text);
const approve = { user: { age: 30, country: 'US' } };
const reject = { user: { age: 9, country: 'US' } };

/** `loan` with stored tests and an input schema, so tests, coverage, schema and analysis say something. */
const TESTED = {
  config: { name: 'tested', version: '1.0.0', entry_step: 'check' },
  steps: {
    check: { type: 'decision', name: 'Check age', branches: [{ condition: 'user.age >= 18', next_step: 'ok' }], default_next: 'no' },
    ok: { type: 'terminal', result: { code: 'APPROVED' } },
    no: { type: 'terminal', result: { code: 'REJECTED', message: 'too young' } },
  },
  tests: [
    { name: 'adult', input: { user: { age: 30 } }, expect: { code: 'APPROVED' } },
    { name: 'minor', input: { user: { age: 12 } }, expect: { code: 'REJECTED' } },
  ],
};
const TESTED_V2 = {
  ...TESTED,
  config: { ...TESTED.config, version: '2.0.0' },
  steps: { ...TESTED.steps, ok: { type: 'terminal', result: { code: 'OK' } } },
  tests: [],
};
/** A version of `scratch` (written, rolled back and deleted by the rows). */
const scratch = (version: string, code = 'A') => ({
  config: { name: 'scratch', version, entry_step: 't' },
  steps: { t: { type: 'terminal', result: { code } } },
});
const FILTER_REQUEST = { known_input: {}, target_results: ['APPROVED'], field_mapping: { 'user.age': 'age', 'user.country': 'country' } };
const ZIPS = { '10001': 'NY', '94105': 'CA' };
const TENANT = { id: 'gamma', name: 'Gamma', enabled: true, qps_limit: 50, burst: 100 };
/** The live version of `shade` (shadow runs) and its candidate, which approves from 21 on: a 19-year-old is a disagreement. */
const SHADE = {
  config: { name: 'shade', version: '1.0.0', entry_step: 'check' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'ok' }], default_next: 'no' },
    ok: { type: 'terminal', result: { code: 'APPROVED' } },
    no: { type: 'terminal', result: { code: 'REJECTED' } },
  },
};
const SHADE_V2 = {
  ...SHADE,
  config: { ...SHADE.config, version: '2.0.0' },
  steps: { ...SHADE.steps, check: { ...SHADE.steps.check, branches: [{ condition: 'user.age >= 21', next_step: 'ok' }] } },
  tests: [{ name: 'adult', input: { user: { age: 30 } }, expect: { code: 'APPROVED' } }],
};
const SHADOW = { candidate: SHADE_V2, sample_rate: 100 };
const SHADOW_MSG = { name: 'shade', candidate_json: JSON.stringify(SHADE_V2), sample_rate: 100 };

let server: ServerProcess;
let client: TestClient;
const dir = tempDir('svc-grpc-route-parity-');

/** `shade` live at 1.0.0 with a fresh shadow of SHADE_V2 at 100% (its counters at zero). */
async function freshShadow(): Promise<void> {
  await must(200, 'POST', '/api/v1/rulesets', SHADE);
  await must(200, 'PUT', '/api/v1/rulesets/shade/shadow', SHADOW);
}

/** A fresh shadow that has seen one execution (a disagreement: APPROVED live, REJECTED by the candidate). */
async function shadowWithOneRun(): Promise<void> {
  await freshShadow();
  await must(200, 'POST', '/api/v1/execute/shade', { input: { user: { age: 19 } } });
  // The candidate runs after the answer is written: wait until this instance counted it.
  for (let i = 0; i < 100; i++) {
    const res = await http(server.url, 'GET', '/api/v1/rulesets/shade/shadow');
    if (res.status === 200 && res.body.executed === 1) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('the shadow execution was never counted');
}

/** An HTTP call that must answer `status` (setup steps). */
async function must(status: number | number[], method: string, path: string, body?: unknown): Promise<void> {
  const res = await http(server.url, method, path, body);
  const allowed = Array.isArray(status) ? status : [status];
  assert.ok(allowed.includes(res.status), `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

const ROWS: Row[] = [
  // ------------------------------------------------------------- rulesets
  {
    name: 'list rulesets',
    route: 'listRulesets',
    http: ['GET', '/api/v1/rulesets'],
    grpc: ['ListRuleSets', {}],
    shape: (r) => r.rulesets.map((x: any) => ({ ...x, description: x.description === '' ? null : x.description })),
  },
  {
    name: 'get a ruleset',
    route: 'getRuleset',
    http: ['GET', '/api/v1/rulesets/loan'],
    grpc: ['GetRuleSet', { name: 'loan' }],
    shape: (r) => parse(r.ruleset_json),
  },
  {
    name: 'create a ruleset',
    route: 'putRuleset',
    setup: () => must([204, 404], 'DELETE', '/api/v1/rulesets/scratch'),
    http: ['POST', '/api/v1/rulesets', scratch('1.0.0')],
    grpc: ['PutRuleset', { ruleset_json: JSON.stringify(scratch('1.0.0')) }],
    shape: (r) => ({ status: r.status, name: r.name, ...(r.warnings_json === '' ? {} : { warnings: parse(r.warnings_json) }) }),
  },
  {
    name: 'update a ruleset, with analysis warnings',
    route: 'putRuleset',
    setup: () => must(200, 'POST', '/api/v1/rulesets', scratch('1.0.0')),
    http: [
      'POST',
      '/api/v1/rulesets',
      { ...scratch('1.1.0'), steps: { t: { type: 'terminal', result: { code: 'A' } }, orphan: { type: 'terminal', result: { code: 'B' } } } },
    ],
    grpc: [
      'PutRuleset',
      {
        ruleset_json: JSON.stringify({
          ...scratch('1.1.0'),
          steps: { t: { type: 'terminal', result: { code: 'A' } }, orphan: { type: 'terminal', result: { code: 'B' } } },
        }),
      },
    ],
    shape: (r) => ({ status: r.status, name: r.name, ...(r.warnings_json === '' ? {} : { warnings: parse(r.warnings_json) }) }),
  },
  {
    name: 'create an invalid ruleset',
    route: 'putRuleset',
    http: ['POST', '/api/v1/rulesets', { config: { name: 'bad', entry_step: 'nowhere' }, steps: {} }],
    grpc: ['PutRuleset', { ruleset_json: JSON.stringify({ config: { name: 'bad', entry_step: 'nowhere' }, steps: {} }) }],
  },
  {
    name: 'create a ruleset whose own tests fail',
    route: 'putRuleset',
    http: [
      'POST',
      '/api/v1/rulesets',
      { ...TESTED, config: { ...TESTED.config, name: 'failing' }, tests: [{ name: 'x', input: { user: { age: 1 } }, expect: { code: 'APPROVED' } }] },
    ],
    grpc: [
      'PutRuleset',
      {
        ruleset_json: JSON.stringify({
          ...TESTED,
          config: { ...TESTED.config, name: 'failing' },
          tests: [{ name: 'x', input: { user: { age: 1 } }, expect: { code: 'APPROVED' } }],
        }),
      },
    ],
  },
  {
    name: 'delete a ruleset',
    route: 'deleteRuleset',
    setup: () => must(200, 'POST', '/api/v1/rulesets', scratch('1.0.0')),
    http: ['DELETE', '/api/v1/rulesets/scratch'],
    grpc: ['DeleteRuleset', { name: 'scratch' }],
    shape: () => undefined,
  },
  { name: 'delete an unknown ruleset', route: 'deleteRuleset', http: ['DELETE', '/api/v1/rulesets/ghost'], grpc: ['DeleteRuleset', { name: 'ghost' }] },
  {
    name: 'versions',
    route: 'listVersions',
    http: ['GET', '/api/v1/rulesets/tested/versions'],
    grpc: ['ListVersions', { name: 'tested' }],
    shape: (r) => r,
  },
  {
    name: 'versions of an unknown ruleset',
    route: 'listVersions',
    http: ['GET', '/api/v1/rulesets/ghost/versions'],
    grpc: ['ListVersions', { name: 'ghost' }],
  },
  {
    name: 'rollback',
    route: 'rollback',
    // The same state before each transport: tested at 2.0.0, then back to seq 1 (1.0.0).
    setup: () => must(200, 'POST', '/api/v1/rulesets', TESTED_V2),
    http: ['POST', '/api/v1/rulesets/tested/rollback', { seq: 1 }],
    grpc: ['Rollback', { name: 'tested', seq: 1 }],
    shape: (r) => r,
  },
  {
    name: 'rollback to seq 0',
    route: 'rollback',
    http: ['POST', '/api/v1/rulesets/tested/rollback', { seq: 0 }],
    grpc: ['Rollback', { name: 'tested', seq: 0 }],
  },
  {
    name: 'rollback to a version that does not exist',
    route: 'rollback',
    http: ['POST', '/api/v1/rulesets/tested/rollback', { seq: 999 }],
    grpc: ['Rollback', { name: 'tested', seq: 999 }],
  },
  {
    name: 'analysis',
    route: 'getAnalysis',
    http: ['GET', '/api/v1/rulesets/loan/analysis'],
    grpc: ['GetAnalysis', { name: 'loan' }],
    shape: (r) => ({ warnings: parse(r.warnings_json) }),
  },
  {
    name: 'input schema (inferred)',
    route: 'getInputSchema',
    http: ['GET', '/api/v1/rulesets/loan/schema'],
    grpc: ['GetInputSchema', { name: 'loan' }],
    shape: ({ schema_json, ...r }) => ({ ...r, schema: parse(schema_json) }),
  },
  {
    name: 'filter',
    route: 'filter',
    http: ['POST', '/api/v1/rulesets/loan/filter', FILTER_REQUEST],
    grpc: ['Filter', { name: 'loan', request_json: JSON.stringify(FILTER_REQUEST) }],
    shape: (r) => parse(r.filter_json),
  },
  {
    name: 'filter with a bad request',
    route: 'filter',
    http: ['POST', '/api/v1/rulesets/loan/filter', { target_results: 'APPROVED' }],
    grpc: ['Filter', { name: 'loan', request_json: '{"target_results":"APPROVED"}' }],
  },
  {
    name: 'stored tests',
    route: 'testRuleset',
    setup: () => must(200, 'POST', '/api/v1/rulesets', TESTED),
    http: ['POST', '/api/v1/rulesets/tested/test', {}],
    grpc: ['TestRuleset', { name: 'tested' }],
    shape: testShape,
  },
  {
    name: 'given tests',
    route: 'testRuleset',
    http: [
      'POST',
      '/api/v1/rulesets/loan/test',
      {
        tests: [
          { name: 'adult', input: approve, expect: { code: 'APPROVED' } },
          { name: 'wrong', input: reject, expect: { code: 'APPROVED' } },
        ],
      },
    ],
    grpc: [
      'TestRuleset',
      {
        name: 'loan',
        tests_json: JSON.stringify([
          { name: 'adult', input: approve, expect: { code: 'APPROVED' } },
          { name: 'wrong', input: reject, expect: { code: 'APPROVED' } },
        ]),
      },
    ],
    shape: testShape,
  },
  // ------------------------------------------------------------- changes
  {
    name: 'diff of a document against the current version',
    route: 'diffRuleset',
    http: ['POST', '/api/v1/rulesets/tested/diff', { from: 'current', to: TESTED_V2 }],
    grpc: ['Diff', { name: 'tested', from_json: '"current"', to_json: JSON.stringify(TESTED_V2) }],
    shape: (r) => ({ changes: parse(r.changes_json), behavior: parse(r.behavior_json) }),
  },
  {
    name: 'diff without "to"',
    route: 'diffRuleset',
    http: ['POST', '/api/v1/rulesets/tested/diff', { from: 'current' }],
    grpc: ['Diff', { name: 'tested', from_json: '"current"' }],
  },
  {
    name: 'impact',
    route: 'impact',
    http: ['POST', '/api/v1/rulesets/tested/impact', { candidate: TESTED_V2, inputs: [{ user: { age: 30 } }, { user: { age: 3 } }] }],
    grpc: ['Impact', { name: 'tested', candidate_json: JSON.stringify(TESTED_V2), inputs_json: ['{"user":{"age":30}}', '{"user":{"age":3}}'] }],
    shape: (r) => parse(r.report_json),
  },
  {
    name: 'draft validate (valid)',
    route: 'draftValidate',
    http: ['POST', '/api/v1/draft/validate', { ruleset: TESTED }],
    grpc: ['DraftValidate', { ruleset_json: JSON.stringify(TESTED) }],
    shape: (r) => ({ valid: r.valid, problems: parse(r.problems_json), warnings: parse(r.warnings_json) }),
  },
  {
    name: 'draft validate (invalid: 200 with problems)',
    route: 'draftValidate',
    http: ['POST', '/api/v1/draft/validate', { ruleset: { config: { name: 'x', entry_step: 'nowhere' }, steps: {} } }],
    grpc: ['DraftValidate', { ruleset_json: JSON.stringify({ config: { name: 'x', entry_step: 'nowhere' }, steps: {} }) }],
    shape: (r) => ({ valid: r.valid, problems: parse(r.problems_json), warnings: parse(r.warnings_json) }),
  },
  {
    name: 'draft validate without a ruleset',
    route: 'draftValidate',
    http: ['POST', '/api/v1/draft/validate', {}],
    grpc: ['DraftValidate', {}],
  },
  {
    name: 'draft execute, traced, with now',
    route: 'draftExecute',
    http: ['POST', '/api/v1/draft/execute', { ruleset: TESTED, input: { user: { age: 40 } }, trace: true, now: '2026-11-24' }],
    grpc: ['DraftExecute', { ruleset_json: JSON.stringify(TESTED), input_json: '{"user":{"age":40}}', trace: true, now: '2026-11-24' }],
    shape: execShape,
  },
  {
    name: 'draft execute with an input that is not an object',
    route: 'draftExecute',
    http: ['POST', '/api/v1/draft/execute', { ruleset: TESTED, input: 3 }],
    grpc: ['DraftExecute', { ruleset_json: JSON.stringify(TESTED), input_json: '3' }],
  },
  {
    name: 'draft filter',
    route: 'draftFilter',
    http: ['POST', '/api/v1/draft/filter', { ruleset: LOAN, ...FILTER_REQUEST }],
    grpc: ['DraftFilter', { ruleset_json: JSON.stringify(LOAN), request_json: JSON.stringify(FILTER_REQUEST) }],
    shape: (r) => parse(r.filter_json),
  },
  {
    name: 'draft test (its own tests)',
    route: 'draftTest',
    http: ['POST', '/api/v1/draft/test', { ruleset: TESTED }],
    grpc: ['DraftTest', { ruleset_json: JSON.stringify(TESTED) }],
    shape: testShape,
  },
  {
    name: 'draft test (given tests)',
    route: 'draftTest',
    http: ['POST', '/api/v1/draft/test', { ruleset: TESTED, tests: [{ name: 't', input: { user: { age: 2 } }, expect: { code: 'APPROVED' } }] }],
    grpc: [
      'DraftTest',
      { ruleset_json: JSON.stringify(TESTED), tests_json: JSON.stringify([{ name: 't', input: { user: { age: 2 } }, expect: { code: 'APPROVED' } }]) },
    ],
    shape: testShape,
  },
  // ------------------------------------------------------------- execution (details: ./grpc-parity.test.ts)
  {
    name: 'execute',
    route: 'execute',
    http: ['POST', '/api/v1/execute/loan', { input: approve, trace: true }],
    grpc: ['Execute', { name: 'loan', input_json: JSON.stringify(approve), trace: true }],
    shape: execShape,
  },
  {
    name: 'batch',
    route: 'executeBatch',
    http: ['POST', '/api/v1/execute/loan/batch', { inputs: [approve, reject] }],
    grpc: ['BatchExecute', { name: 'loan', inputs_json: [JSON.stringify(approve), JSON.stringify(reject)] }],
    shape: (r) => ({
      results: r.results.map((i: any) => execShape(i.result)),
      summary: { ...r.summary, total_duration_us: Number(r.summary.total_duration_us) },
    }),
  },
  {
    name: 'eval',
    route: 'eval',
    http: ['POST', '/api/v1/eval', { expression: 'a + 1', context: { a: 41 } }],
    grpc: ['Eval', { expression: 'a + 1', context_json: '{"a":41}' }],
    shape: (r) => ({ result: parse(r.result_json), parsed: r.parsed }),
  },
  // ------------------------------------------------------------- config
  {
    name: 'audit sample rate',
    route: 'getAuditSampleRate',
    http: ['GET', '/api/v1/config/audit-sample-rate'],
    grpc: ['GetAuditSampleRate', {}],
    shape: (r) => ({ sample_rate: r.sample_rate }),
  },
  {
    name: 'set the audit sample rate',
    route: 'setAuditSampleRate',
    setup: () => must(200, 'PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 50 }),
    http: ['PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 12.5 }],
    grpc: ['SetAuditSampleRate', { sample_rate: 12.5 }],
    // `_previous`: proto-loader's name for the synthetic oneof of a proto3 `optional` field.
    shape: ({ _previous: _p, ...r }) => r,
  },
  {
    name: 'set the audit sample rate out of range',
    route: 'setAuditSampleRate',
    http: ['PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 101 }],
    grpc: ['SetAuditSampleRate', { sample_rate: 101 }],
  },
  {
    name: 'set the audit sample rate without a rate',
    route: 'setAuditSampleRate',
    http: ['PUT', '/api/v1/config/audit-sample-rate', {}],
    grpc: ['SetAuditSampleRate', {}],
  },
  // ------------------------------------------------------------- health
  { name: 'health', route: 'health', http: ['GET', '/health'], grpc: ['Health', {}], shape: healthShape },
  { name: 'ready', route: 'ready', http: ['GET', '/healthz/ready'], grpc: ['Health', {}], shape: healthShape },
  // ------------------------------------------------------------- reference data
  {
    name: 'put a dataset',
    route: 'putData',
    setup: () => must([204, 404], 'DELETE', '/api/v1/data/zips'),
    http: ['PUT', '/api/v1/data/zips', ZIPS],
    grpc: ['PutData', { name: 'zips', data_json: JSON.stringify(ZIPS) }],
    shape: (r) => ({ ...r, bytes: Number(r.bytes) }),
  },
  { name: 'get a dataset', route: 'getData', http: ['GET', '/api/v1/data/zips'], grpc: ['GetData', { name: 'zips' }], shape: (r) => parse(r.data_json) },
  { name: 'get an unknown dataset', route: 'getData', http: ['GET', '/api/v1/data/nothing'], grpc: ['GetData', { name: 'nothing' }] },
  {
    name: 'list datasets',
    route: 'listData',
    http: ['GET', '/api/v1/data'],
    grpc: ['ListData', {}],
    shape: (r) => r.datasets.map((d: any) => ({ ...d, bytes: Number(d.bytes) })),
  },
  {
    name: 'delete a dataset',
    route: 'deleteData',
    setup: () => must(200, 'PUT', '/api/v1/data/old', [1, 2]),
    http: ['DELETE', '/api/v1/data/old'],
    grpc: ['DeleteData', { name: 'old' }],
    shape: () => undefined,
  },
  {
    name: 'put a dataset with a bad name',
    route: 'putData',
    http: ['PUT', '/api/v1/data/bad%20name', {}],
    grpc: ['PutData', { name: 'bad name', data_json: '{}' }],
  },
  // ------------------------------------------------------------- tenants
  { name: 'list tenants', route: 'listTenants', http: ['GET', '/api/v1/tenants'], grpc: ['ListTenants', {}], shape: (r) => parse(r.tenants_json) },
  {
    name: 'create a tenant',
    route: 'createTenant',
    setup: () => must([204, 404], 'DELETE', '/api/v1/tenants/gamma'),
    http: ['POST', '/api/v1/tenants', TENANT],
    grpc: ['CreateTenant', { tenant_json: JSON.stringify(TENANT) }],
    shape: (r) => parse(r.tenant_json),
  },
  {
    name: 'create a tenant that exists',
    route: 'createTenant',
    http: ['POST', '/api/v1/tenants', { id: 'default' }],
    grpc: ['CreateTenant', { tenant_json: '{"id":"default"}' }],
  },
  {
    name: 'get a tenant',
    route: 'getTenant',
    http: ['GET', '/api/v1/tenants/gamma'],
    grpc: ['GetTenant', { id: 'gamma' }],
    shape: (r) => parse(r.tenant_json),
  },
  { name: 'get an unknown tenant', route: 'getTenant', http: ['GET', '/api/v1/tenants/nobody'], grpc: ['GetTenant', { id: 'nobody' }] },
  {
    name: 'update a tenant',
    route: 'updateTenant',
    http: ['PUT', '/api/v1/tenants/gamma', { ...TENANT, qps_limit: 5 }],
    grpc: ['UpdateTenant', { id: 'gamma', tenant_json: JSON.stringify({ ...TENANT, qps_limit: 5 }) }],
    shape: (r) => parse(r.tenant_json),
  },
  {
    name: 'delete a tenant',
    route: 'deleteTenant',
    setup: () => must([201, 409], 'POST', '/api/v1/tenants', TENANT),
    http: ['DELETE', '/api/v1/tenants/gamma'],
    grpc: ['DeleteTenant', { id: 'gamma' }],
    shape: () => undefined,
  },
  { name: 'delete the default tenant', route: 'deleteTenant', http: ['DELETE', '/api/v1/tenants/default'], grpc: ['DeleteTenant', { id: 'default' }] },
  {
    name: 'a tenant-scoped read for another tenant',
    route: 'listRulesets',
    setup: () => must([201, 409], 'POST', '/api/v1/tenants', { id: 'delta' }),
    http: ['GET', '/api/v1/rulesets', undefined, { 'x-tenant-id': 'delta' }],
    grpc: ['ListRuleSets', {}, { 'x-tenant-id': 'delta' }],
    shape: (r) => r.rulesets,
  },
  {
    name: 'an unknown tenant',
    route: 'getRuleset',
    http: ['GET', '/api/v1/rulesets/loan', undefined, { 'x-tenant-id': 'nobody' }],
    grpc: ['GetRuleSet', { name: 'loan' }, { 'x-tenant-id': 'nobody' }],
  },
  // ------------------------------------------------------------- shadow runs
  {
    name: 'put a shadow',
    route: 'putShadow',
    setup: async () => {
      await must(200, 'POST', '/api/v1/rulesets', SHADE);
      await must([204, 404], 'DELETE', '/api/v1/rulesets/shade/shadow');
    },
    http: ['PUT', '/api/v1/rulesets/shade/shadow', SHADOW],
    grpc: ['PutShadow', SHADOW_MSG],
    shape: shadowPutShape,
    mask: ['since'],
  },
  {
    name: 'replace a shadow',
    route: 'putShadow',
    setup: freshShadow,
    http: ['PUT', '/api/v1/rulesets/shade/shadow', { ...SHADOW, sample_rate: 12.5 }],
    grpc: ['PutShadow', { ...SHADOW_MSG, sample_rate: 12.5 }],
    shape: shadowPutShape,
    mask: ['since'],
  },
  {
    name: 'put a shadow whose candidate renames the ruleset',
    route: 'putShadow',
    http: ['PUT', '/api/v1/rulesets/shade/shadow', { ...SHADOW, candidate: { ...SHADE_V2, config: { ...SHADE_V2.config, name: 'other' } } }],
    grpc: ['PutShadow', { ...SHADOW_MSG, candidate_json: JSON.stringify({ ...SHADE_V2, config: { ...SHADE_V2.config, name: 'other' } }) }],
  },
  {
    name: 'put a shadow without a sample rate',
    route: 'putShadow',
    http: ['PUT', '/api/v1/rulesets/shade/shadow', { candidate: SHADE_V2 }],
    grpc: ['PutShadow', { name: 'shade', candidate_json: JSON.stringify(SHADE_V2) }],
  },
  {
    name: 'put a shadow without a candidate',
    route: 'putShadow',
    http: ['PUT', '/api/v1/rulesets/shade/shadow', { sample_rate: 5 }],
    grpc: ['PutShadow', { name: 'shade', sample_rate: 5 }],
  },
  {
    name: 'put a shadow whose candidate fails its own tests',
    route: 'putShadow',
    http: [
      'PUT',
      '/api/v1/rulesets/shade/shadow',
      { ...SHADOW, candidate: { ...SHADE_V2, tests: [{ name: 'teen', input: { user: { age: 19 } }, expect: { code: 'APPROVED' } }] } },
    ],
    grpc: [
      'PutShadow',
      { ...SHADOW_MSG, candidate_json: JSON.stringify({ ...SHADE_V2, tests: [{ name: 'teen', input: { user: { age: 19 } }, expect: { code: 'APPROVED' } }] }) },
    ],
  },
  {
    name: 'get a shadow with one disagreement',
    route: 'getShadow',
    setup: shadowWithOneRun,
    http: ['GET', '/api/v1/rulesets/shade/shadow'],
    grpc: ['GetShadow', { name: 'shade' }],
    shape: ({ examples_json, transitions, ...r }) => ({
      ...r,
      ...Object.fromEntries(['executed', 'agreed', 'disagreed', 'errors', 'dropped'].map((k) => [k, Number(r[k])])),
      transitions: transitions.map((t: any) => ({ ...t, count: Number(t.count) })),
      examples: parse(examples_json),
    }),
    mask: ['since', 'at'],
  },
  { name: 'get the shadow of a ruleset without one', route: 'getShadow', http: ['GET', '/api/v1/rulesets/loan/shadow'], grpc: ['GetShadow', { name: 'loan' }] },
  { name: 'get the shadow of an unknown ruleset', route: 'getShadow', http: ['GET', '/api/v1/rulesets/ghost/shadow'], grpc: ['GetShadow', { name: 'ghost' }] },
  {
    name: 'promote a shadow',
    route: 'promoteShadow',
    setup: freshShadow,
    http: ['POST', '/api/v1/rulesets/shade/shadow/promote', {}],
    grpc: ['PromoteShadow', { name: 'shade' }],
    shape: ({ warnings_json, ...r }) => ({ ...r, ...(warnings_json === '' ? {} : { warnings: parse(warnings_json) }) }),
  },
  {
    name: 'promote without a shadow',
    route: 'promoteShadow',
    http: ['POST', '/api/v1/rulesets/loan/shadow/promote', {}],
    grpc: ['PromoteShadow', { name: 'loan' }],
  },
  {
    name: 'delete a shadow',
    route: 'deleteShadow',
    setup: freshShadow,
    http: ['DELETE', '/api/v1/rulesets/shade/shadow'],
    grpc: ['DeleteShadow', { name: 'shade' }],
    shape: () => undefined,
  },
  {
    name: 'delete a shadow that is not there',
    route: 'deleteShadow',
    http: ['DELETE', '/api/v1/rulesets/loan/shadow'],
    grpc: ['DeleteShadow', { name: 'loan' }],
  },
  // ------------------------------------------------------------- debug view
  {
    name: 'debug view',
    route: 'debugRuleset',
    http: ['GET', '/api/v1/debug/rulesets/loan'],
    grpc: ['DebugRuleset', { name: 'loan' }],
    shape: (r) => parse(r.debug_json),
  },
];

function execShape(r: any): unknown {
  return {
    code: r.code,
    message: r.message,
    output: parse(r.output_json),
    duration_us: Number(r.duration_us),
    ...(r.trace
      ? { trace: { path: r.trace.path, steps: r.trace.steps.map(({ table_match: _t, ...s }: any) => ({ ...s, duration_us: Number(s.duration_us) })) } }
      : {}),
  };
}

function shadowPutShape({ warnings_json, ...r }: any): unknown {
  return { ...r, ...(warnings_json === '' ? {} : { warnings: parse(warnings_json) }) };
}

function testShape(r: any): unknown {
  return { passed: r.passed, failed: r.failed, results: parse(r.results_json), coverage: parse(r.coverage_json) };
}

function healthShape(r: any): unknown {
  return { status: r.status, version: r.version, uptime_seconds: Number(r.uptime_seconds), rules_count: r.rules_count };
}

/** HTTP `/health` carries more than HealthResponse; keep the common fields. */
function httpShape(row: Row, body: any): unknown {
  if (row.grpc[0] !== 'Health') return body;
  return { status: body.status, version: body.version, uptime_seconds: body.uptime_seconds, rules_count: body.storage.rules_count };
}

const TIMINGS = ['duration_us', 'total_duration_us', 'uptime_seconds', 'elapsed_us'];

/** Zeroes timing fields (and the row's `mask` keys) at any depth. */
function normalise(v: unknown, mask: readonly string[] = []): unknown {
  if (Array.isArray(v)) return v.map((x) => normalise(x, mask));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, TIMINGS.includes(k) || mask.includes(k) ? 0 : normalise(x, mask)]));
  }
  return v;
}

describe('every HTTP route has its RPC', () => {
  const protoMethods = new Set(Object.keys(loadRulesPackage()[SERVICE_NAME] as unknown as ServiceDefinition));

  it('each route of the route table is mapped to an RPC, or listed as HTTP-only with its reason', () => {
    const missing = ROUTES.map((r) => r.id).filter((id) => ROUTE_RPC[id] === undefined && HTTP_ONLY[id] === undefined);
    assert.deepEqual(missing, [], 'routes without an RPC: add the RPC to proto/rules.proto (or, for a route only HTTP can serve, to HTTP_ONLY)');
    const ids = new Set(ROUTES.map((r) => r.id));
    for (const id of [...Object.keys(ROUTE_RPC), ...Object.keys(HTTP_ONLY)]) assert.ok(ids.has(id), `${id} is no route`);
    for (const id of Object.keys(ROUTE_RPC)) assert.ok(HTTP_ONLY[id] === undefined, `${id} is both mapped and HTTP-only`);
  });

  it('each mapped RPC exists in the proto and needs the permission (and tenant scope) of its route', () => {
    for (const route of ROUTES) {
      const rpc = ROUTE_RPC[route.id];
      if (rpc === undefined) continue;
      assert.ok(protoMethods.has(rpc), `${route.id}: ${rpc} is not a method of ${SERVICE_NAME}`);
      assert.equal(GRPC_PERMISSIONS[rpc], route.permission, `${route.id} (${route.permission}) vs ${rpc}`);
      // A route about no single tenant needs a credential for every tenant; so does its RPC.
      assert.equal(GRPC_GLOBAL_METHODS.has(rpc), route.scope === 'global', `${route.id} scope vs ${rpc}`);
    }
  });

  it('every RPC of the proto serves a route (no RPC without its HTTP twin)', () => {
    const served = new Set(Object.values(ROUTE_RPC));
    assert.deepEqual(
      [...protoMethods].filter((m) => !served.has(m as GrpcMethod)),
      [],
    );
  });
});

describe('each route and its RPC give the same answer', () => {
  before(async () => {
    server = await startServer(['--rules-dir', dir.path, '--multi-tenancy-enabled', '--debug-mode']);
    await postRulesets(server.url, [LOAN, TESTED]);
    await postRulesets(server.url, [TESTED_V2, TESTED]); // versions 2 and 3 of `tested` (rows roll back to seq 1)
    await postRulesets(server.url, [SHADE]);
    client = connect(server.grpcAddress);
  });

  after(async () => {
    client?.close();
    await server?.stop();
    dir.remove();
  });

  const succeeded = new Set<string>();
  const errorCodes = new Set<string>();
  for (const row of ROWS) {
    it(`${row.route}: ${row.name}`, async () => {
      const [verb, path, body, headers] = row.http;
      await row.setup?.();
      const h = await http(server.url, verb, path, body, headers);
      await row.setup?.();
      const g: GrpcOutcome = await client.call(row.grpc[0], row.grpc[1], row.grpc[2]);
      if (h.status >= 200 && h.status < 300) {
        assert.ok(g.ok, `gRPC failed where HTTP answered ${h.status}: ${g.ok ? '' : `${g.code} ${g.details}`}`);
        assert.ok(row.shape, `a success row needs a shape (HTTP ${h.status}: ${JSON.stringify(h.body)})`);
        assert.deepEqual(normalise(row.shape(g.value), row.mask), normalise(httpShape(row, h.body), row.mask));
        succeeded.add(row.route);
        return;
      }
      assert.equal(g.ok, false, `gRPC succeeded where HTTP answered ${h.status} ${JSON.stringify(h.body)}`);
      if (g.ok) return;
      const code = h.body.code as ErrorCode;
      errorCodes.add(code);
      if (h.body.failures !== undefined) errorCodes.add('with failures');
      if (h.body.problems !== undefined) errorCodes.add('with problems');
      assert.equal(ERROR_CATALOG[code].http, h.status);
      assert.equal(g.svcCode, code, `${g.details} vs ${h.body.error}`);
      assert.equal(g.code, ERROR_CATALOG[code].grpc);
      if (!row.codeOnly) assert.equal(g.details, h.body.error);
      // The lists of the HTTP body are the JSON texts of trailing metadata svc-problems and svc-failures.
      for (const key of ['problems', 'failures']) {
        const text: unknown = g.trailers?.get(`svc-${key}`)[0];
        if (h.body[key] === undefined) assert.equal(text, undefined, key);
        else assert.deepEqual(JSON.parse(String(text)), h.body[key], key);
      }
    });
  }

  it('every mapped route had a successful row', () => {
    const without = Object.keys(ROUTE_RPC).filter((id) => !succeeded.has(id));
    assert.deepEqual(without, []);
  });

  it('the error rows reach the codes of the new RPCs, with their problems and failures lists', () => {
    for (const code of ['NOT_FOUND', 'BAD_REQUEST', 'TENANT_NOT_FOUND', 'CONFLICT', 'TESTS_FAILED', 'with failures', 'with problems']) {
      assert.ok(errorCodes.has(code), code);
    }
  });
});
