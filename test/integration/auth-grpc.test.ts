/**
 * Authentication on gRPC (EXTENSIONS.md 1) against the real built server process: every method
 * of GRPC_PERMISSIONS × every role (API keys, and a JWT whose role names no role), metadata
 * `authorization: Bearer ...`, Health, grpc.health.v1 and reflection open, global methods needing
 * a credential for every tenant, tenants from `x-tenant-id` with multi-tenancy on,
 * the JWT path (verified asynchronously), the Unix socket guarded the same way, audit
 * `principal`, and brute force answered RESOURCE_EXHAUSTED. Every process is stopped by pid.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROLE_PERMISSIONS, type AuthRole } from '../../src/auth/index.js';
import { GRPC_GLOBAL_METHODS, GRPC_PERMISSIONS } from '../../src/transport/grpc/handlers.js';
import { bearer, makeSigningKey, makeTestKey, signToken, writeJwks, writeKeysFile, type SigningKey, type TestKey } from '../helpers/auth-jwt.js';
import { connect, Status, type GrpcOutcome, type TestClient } from '../helpers/grpc-client.js';
import { LOAN, postRulesets } from '../helpers/grpc-fixtures.js';
import { healthCheck, healthClient, reflect } from '../helpers/grpc-reflection.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const ROLES: readonly AuthRole[] = ['executor', 'viewer', 'editor', 'admin'];

const LOAN_JSON = JSON.stringify(LOAN);
const FILTER_JSON = JSON.stringify({ known_input: {}, target_results: ['APPROVED'], field_mapping: { 'user.age': 'age', 'user.country': 'country' } });
const SCRATCH = { config: { name: 'scratch', entry_step: 't' }, steps: { t: { type: 'terminal', result: { code: 'A' } } } };
/** A ruleset of its own for the shadow RPCs (a shadow of `loan` would run on the executions the audit test reads). */
const SHADE = { config: { name: 'shade', version: '1', entry_step: 't' }, steps: { t: { type: 'terminal', result: { code: 'A' } } } };
const SHADOW = { candidate: { ...SHADE, config: { ...SHADE.config, version: '2' } }, sample_rate: 10 };
let made = 0;

/** Starts (or replaces) the shadow of `shade` over HTTP as admin: GetShadow, DeleteShadow and PromoteShadow need one. */
async function withShadow(url: string, admin: Record<string, string>): Promise<object> {
  assert.equal((await http(url, 'PUT', '/api/v1/rulesets/shade/shadow', SHADOW, admin)).status, 200);
  return { name: 'shade' };
}

/**
 * A request each method answers successfully (tenant `default`, `loan` loaded, dataset `zips`
 * stored, tenants alpha and beta), or a function that prepares what the call consumes (over
 * HTTP, as admin) and gives the request: a delete needs something to delete each time.
 */
const REQUESTS = {
  Execute: { name: 'loan', input_json: JSON.stringify({ user: { age: 30, country: 'US' } }) },
  BatchExecute: { name: 'loan', inputs_json: [JSON.stringify({ user: { age: 30, country: 'US' } }), JSON.stringify({ user: { age: 3 } })] },
  Eval: { expression: '1 + 2', context_json: '' },
  ListRuleSets: {},
  GetRuleSet: { name: 'loan' },
  Health: {},
  PutRuleset: { ruleset_json: LOAN_JSON },
  DeleteRuleset: async (url, admin) => {
    await postRulesets(url, [SCRATCH], admin);
    return { name: 'scratch' };
  },
  ListVersions: { name: 'loan' },
  Rollback: { name: 'loan', seq: 1 },
  GetAnalysis: { name: 'loan' },
  GetInputSchema: { name: 'loan' },
  Filter: { name: 'loan', request_json: FILTER_JSON },
  TestRuleset: { name: 'loan', tests_json: JSON.stringify([{ name: 'adult', input: { user: { age: 30, country: 'US' } }, expect: { code: 'APPROVED' } }]) },
  Diff: { name: 'loan', from_json: '"current"', to_json: LOAN_JSON },
  Impact: { name: 'loan', candidate_json: LOAN_JSON, inputs_json: ['{"user":{"age":30,"country":"US"}}'] },
  DraftValidate: { ruleset_json: LOAN_JSON },
  DraftExecute: { ruleset_json: LOAN_JSON, input_json: '{"user":{"age":30,"country":"US"}}' },
  DraftFilter: { ruleset_json: LOAN_JSON, request_json: FILTER_JSON },
  DraftTest: { ruleset_json: LOAN_JSON },
  GetAuditSampleRate: {},
  SetAuditSampleRate: { sample_rate: 100 },
  ListData: {},
  GetData: { name: 'zips' },
  PutData: { name: 'zips', data_json: '{"10001":"NY"}' },
  DeleteData: async (url, admin) => {
    assert.equal((await http(url, 'PUT', '/api/v1/data/old', [1], admin)).status, 200);
    return { name: 'old' };
  },
  ListTenants: {},
  CreateTenant: async () => ({ tenant_json: JSON.stringify({ id: `made-${++made}` }) }),
  GetTenant: { id: 'alpha' },
  UpdateTenant: { id: 'beta', tenant_json: '{"id":"beta"}' },
  DeleteTenant: async (url, admin) => {
    const id = `gone-${++made}`;
    assert.equal((await http(url, 'POST', '/api/v1/tenants', { id }, admin)).status, 201);
    return { id };
  },
  DebugRuleset: { name: 'loan' },
  PutShadow: { name: 'shade', candidate_json: JSON.stringify(SHADOW.candidate), sample_rate: SHADOW.sample_rate },
  GetShadow: withShadow,
  DeleteShadow: withShadow,
  PromoteShadow: withShadow,
} satisfies Record<keyof typeof GRPC_PERMISSIONS, object | ((url: string, admin: Record<string, string>) => Promise<object>)>;
const GUARDED = (Object.keys(GRPC_PERMISSIONS) as Array<keyof typeof GRPC_PERMISSIONS>).filter((m) => GRPC_PERMISSIONS[m] !== 'public');

const auth = (credential: string, tenant?: string): Record<string, string> => ({
  authorization: bearer(credential),
  ...(tenant !== undefined ? { 'x-tenant-id': tenant } : {}),
});

function assertDenied(out: GrpcOutcome, what: string, message: RegExp): void {
  assert.equal(out.ok, false, `${what}: expected PERMISSION_DENIED, got OK`);
  if (out.ok) return;
  assert.equal(Status[out.code], 'PERMISSION_DENIED', `${what}: ${out.details}`);
  assert.equal(out.svcCode, 'FORBIDDEN', what);
  assert.match(out.details, message, what);
}

function assertUnauthenticated(out: GrpcOutcome, what: string): void {
  assert.equal(out.ok, false, `${what}: expected UNAUTHENTICATED, got OK`);
  if (out.ok) return;
  assert.equal(Status[out.code], 'UNAUTHENTICATED', `${what}: ${out.details}`);
  assert.equal(out.svcCode, 'UNAUTHENTICATED', what);
}

describe('gRPC and the Unix socket with authentication on', () => {
  const dir = tempDir('svc-auth-grpc-');
  const keysPath = join(dir.path, 'keys.json');
  const jwksPath = join(dir.path, 'jwks.json');
  const sockPath = join(dir.path, 'svc.sock');
  const keys = Object.fromEntries(ROLES.map((r) => [r, makeTestKey(`${r}-key`, r)])) as Record<AuthRole, TestKey>;
  const alphaViewer = makeTestKey('alpha-viewer', 'viewer', ['alpha']);
  const alphaAdmin = makeTestKey('alpha-admin', 'admin', ['alpha']);
  let jwtKey: SigningKey;
  let server: ServerProcess | undefined;
  let client: TestClient | undefined;
  let uds: TestClient | undefined;

  /** The request of `method` (prepared over HTTP as admin when it consumes something). */
  const requestOf = async (method: keyof typeof GRPC_PERMISSIONS): Promise<object> => {
    const r: object | ((url: string, admin: Record<string, string>) => Promise<object>) = REQUESTS[method];
    return typeof r === 'function' ? r(server!.url, { authorization: bearer(keys.admin.key) }) : r;
  };

  before(async () => {
    writeKeysFile(keysPath, [...Object.values(keys), alphaViewer, alphaAdmin]);
    jwtKey = await makeSigningKey('ES256');
    writeJwks(jwksPath, [jwtKey]);
    server = await startServer([
      '--auth-keys-file',
      keysPath,
      '--auth-jwt-jwks-file',
      jwksPath,
      '--multi-tenancy-enabled',
      '--uds-path',
      sockPath,
      '--audit-sample-rate',
      '100',
      // A rules dir (Rollback restores from history) and the debug view: every method can succeed.
      '--rules-dir',
      join(dir.path, 'rules'),
      '--debug-mode',
    ]);
    await server.waitForLog((l) => l['msg'] === 'uds listening');
    const admin = { authorization: bearer(keys.admin.key) };
    assert.equal((await http(server.url, 'PUT', '/api/v1/data/zips', { '10001': 'NY' }, admin)).status, 200);
    assert.equal((await http(server.url, 'POST', '/api/v1/tenants', { id: 'alpha' }, admin)).status, 201);
    assert.equal((await http(server.url, 'POST', '/api/v1/tenants', { id: 'beta' }, admin)).status, 201);
    await postRulesets(server.url, [LOAN, SHADE], admin);
    await postRulesets(server.url, [LOAN], { ...admin, 'x-tenant-id': 'alpha' });
    await postRulesets(server.url, [LOAN], { ...admin, 'x-tenant-id': 'beta' });
    client = connect(server.grpcAddress);
    uds = connect(`unix://${sockPath}`);
  });

  after(async () => {
    client?.close();
    uds?.close();
    await server?.stop();
    dir.remove();
  });

  it('every method × every role: PERMISSION_DENIED naming the permission the role lacks, OK where it has it', async () => {
    for (const method of GUARDED) {
      const need = GRPC_PERMISSIONS[method];
      for (const role of ROLES) {
        const out = await client!.call(method, await requestOf(method), auth(keys[role].key));
        const what = `${method} as ${role}`;
        if ((ROLE_PERMISSIONS[role] as readonly string[]).includes(need)) {
          assert.ok(out.ok, `${what}: ${out.ok ? '' : `${Status[out.code]} ${out.details}`}`);
        } else {
          assertDenied(out, what, new RegExp(`"${need}" permission`));
        }
      }
    }
  });

  it('the method answers are real (the checked call reaches the façade)', async () => {
    const res = await client!.ok('Execute', REQUESTS.Execute, auth(keys.executor.key));
    assert.equal(res.code, 'APPROVED');
    const list = await client!.ok('ListRuleSets', {}, auth(keys.viewer.key));
    assert.deepEqual(
      list.rulesets.map((r: { name: string }) => r.name),
      ['loan', 'shade'],
    );
  });

  it('every guarded method without metadata, with a malformed or unknown credential: UNAUTHENTICATED', async () => {
    const unknown = makeTestKey('ghost', 'admin');
    for (const method of GUARDED) {
      assertUnauthenticated(await client!.call(method, await requestOf(method)), `${method} without metadata`);
    }
    // NOTE: a bad credential counts as a guess, and more than 20 in a minute block the address
    // (the brute force test below), so these run on one method of each permission and scope:
    // every method goes through the same check (handlers.ts `unary`).
    for (const method of ['Execute', 'ListRuleSets', 'PutRuleset', 'SetAuditSampleRate', 'DeleteTenant'] as const) {
      assertUnauthenticated(await client!.call(method, await requestOf(method), { authorization: `Basic ${keys.admin.key}` }), `${method} Basic`);
      const out = await client!.call(method, await requestOf(method), auth(unknown.key));
      assertUnauthenticated(out, `${method} unknown key`);
      assert.ok(!out.ok && !out.details.includes('ghost') && !out.details.includes(unknown.key), 'the answer names neither key nor id');
    }
  });

  it('the global methods (tenants, audit sample rate) need a credential for every tenant, as their HTTP routes', async () => {
    for (const method of GUARDED.filter((m) => GRPC_GLOBAL_METHODS.has(m))) {
      assertDenied(await client!.call(method, await requestOf(method), auth(alphaAdmin.key, 'alpha')), `${method} as alpha admin`, /all tenants/);
    }
    // A tenant-scoped method works for the key's own tenant.
    assert.ok((await client!.call('PutData', { name: 'zips', data_json: '[]' }, auth(alphaAdmin.key, 'alpha'))).ok);
  });

  it('grpc.health.v1.Health and server reflection are open: no credential needed', async () => {
    const health = healthClient(server!.grpcAddress);
    try {
      assert.deepEqual(await healthCheck(health, ''), { status: 'SERVING' });
    } finally {
      health.close();
    }
    const [list] = await reflect(server!.grpcAddress, [{ list_services: '*' }]);
    assert.ok(list?.list_services_response?.service.some((s) => s.name === 'rules.RuleService'));
  });

  it('Health is open: no credential, or a bad one, still answers', async () => {
    const res = await client!.ok('Health', {});
    assert.equal(res.status, 'healthy');
    assert.equal((await client!.ok('Health', {}, { authorization: 'Bearer nonsense' })).status, 'healthy');
  });

  it('a JWT works on gRPC (verified asynchronously): allowed, denied, and a role that names no role', async () => {
    const viewer = await signToken(jwtKey, { sub: 'jwt-viewer', role: 'viewer' });
    const executor = await signToken(jwtKey, { sub: 'jwt-executor', role: 'executor' });
    const nobody = await signToken(jwtKey, { sub: 'jwt-nobody', role: 'superuser' });
    // Twice each: the first call verifies the signature, the second finds the cached principal.
    for (let i = 0; i < 2; i++) {
      assert.equal((await client!.ok('GetRuleSet', { name: 'loan' }, auth(viewer))).ruleset_json.length > 0, true);
      assertDenied(await client!.call('ListRuleSets', {}, auth(executor)), 'ListRuleSets as executor JWT', /"read" permission/);
      assert.equal((await client!.ok('Eval', REQUESTS.Eval, auth(executor))).result_json, '3');
      for (const method of GUARDED) {
        assertDenied(await client!.call(method, await requestOf(method), auth(nobody)), `${method} as JWT without role`, /permission/);
      }
    }
    const expired = await signToken(jwtKey, { sub: 'late', role: 'admin', expIn: -120 });
    assertUnauthenticated(await client!.call('Execute', REQUESTS.Execute, auth(expired)), 'expired JWT');
  });

  it('tenants: x-tenant-id outside the credential is PERMISSION_DENIED naming the tenant; inside is OK', async () => {
    const k = alphaViewer.key;
    assert.equal((await client!.ok('Execute', REQUESTS.Execute, auth(k, 'alpha'))).code, 'APPROVED');
    assert.ok((await client!.call('ListRuleSets', {}, auth(k, 'alpha'))).ok);
    assertDenied(await client!.call('Execute', REQUESTS.Execute, auth(k, 'beta')), 'alpha key for beta', /tenant "beta"/);
    assertDenied(await client!.call('GetRuleSet', REQUESTS.GetRuleSet, auth(k, 'beta')), 'alpha key for beta', /tenant "beta"/);
    assertDenied(await client!.call('Execute', REQUESTS.Execute, auth(k)), 'alpha key without x-tenant-id (default)', /tenant "default"/);
    // A "*" key acts for any tenant.
    assert.ok((await client!.call('Execute', REQUESTS.Execute, auth(keys.executor.key, 'beta'))).ok);
    // The permission check comes first: an executor key for its own tenant still lacks read.
    const alphaExec = await signToken(jwtKey, { sub: 'alpha-exec', role: 'executor', tenants: ['alpha'] });
    assertDenied(await client!.call('ListRuleSets', {}, auth(alphaExec, 'alpha')), 'alpha executor JWT', /"read" permission/);
    assertDenied(await client!.call('Execute', REQUESTS.Execute, auth(alphaExec, 'beta')), 'alpha executor JWT for beta', /tenant "beta"/);
  });

  it('the Unix socket requires credentials the same way', async () => {
    for (const method of GUARDED) {
      assertUnauthenticated(await uds!.call(method, await requestOf(method)), `UDS ${method} without metadata`);
      for (const role of ROLES) {
        const out = await uds!.call(method, await requestOf(method), auth(keys[role].key));
        const what = `UDS ${method} as ${role}`;
        if ((ROLE_PERMISSIONS[role] as readonly string[]).includes(GRPC_PERMISSIONS[method])) assert.ok(out.ok, what);
        else assertDenied(out, what, /permission/);
      }
    }
    assertDenied(await uds!.call('Execute', REQUESTS.Execute, auth(alphaViewer.key, 'beta')), 'UDS alpha key for beta', /tenant "beta"/);
    assert.equal((await uds!.ok('Health', {})).status, 'healthy');
  });

  it('audit: gRPC executions carry the principal (key id or JWT sub); auth_failed names the address and reason, never the credential', async () => {
    await client!.ok('Execute', REQUESTS.Execute, auth(keys.editor.key, 'beta'));
    const token = await signToken(jwtKey, { sub: 'carol@example', role: 'executor' });
    await client!.ok('Execute', REQUESTS.Execute, auth(token, 'alpha'));
    const executed = async (principal: string) => {
      for (let i = 0; i < 100; i++) {
        const line = server!.stdout.find((l) => l['event'] === 'rule_executed' && l['principal'] === principal);
        if (line) return line;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.fail(`no rule_executed line with principal ${principal}`);
    };
    assert.equal((await executed('editor-key'))['rule_name'], 'loan');
    assert.equal((await executed('carol@example'))['rule_name'], 'loan');
    const failed = server!.stdout.filter((l) => l['event'] === 'auth_failed');
    assert.ok(failed.length > 0, 'auth_failed lines were written');
    assert.ok(
      failed.some((l) => l['source_ip'] === '127.0.0.1'),
      JSON.stringify(failed),
    );
    assert.ok(failed.some((l) => l['source_ip'] === null));
    for (const l of failed) assert.ok(['missing', 'malformed', 'unknown_key', 'expired', 'invalid_token'].includes(String(l['reason'])), JSON.stringify(l));
    const all = JSON.stringify(server!.stdout) + JSON.stringify(server!.logs);
    for (const k of [...Object.values(keys), alphaViewer]) assert.ok(!all.includes(k.key), `key of ${k.id} never logged`);
  });
});

describe('gRPC brute force', () => {
  const dir = tempDir('svc-auth-grpc-bf-');
  const sockPath = join(dir.path, 'svc.sock');
  const good = makeTestKey('good', 'viewer');
  let server: ServerProcess | undefined;
  let client: TestClient | undefined;
  let uds: TestClient | undefined;

  before(async () => {
    const keysPath = join(dir.path, 'keys.json');
    writeKeysFile(keysPath, [good]);
    server = await startServer(['--auth-keys-file', keysPath, '--uds-path', sockPath]);
    await server.waitForLog((l) => l['msg'] === 'uds listening');
    client = connect(server.grpcAddress);
    uds = connect(`unix://${sockPath}`);
  });

  after(async () => {
    client?.close();
    uds?.close();
    await server?.stop();
    dir.remove();
  });

  it('requests without any credential are not counted as guesses', async () => {
    for (let i = 0; i < 30; i++) assertUnauthenticated(await client!.call('ListRuleSets', {}), `missing #${i + 1}`);
    assert.ok((await client!.call('ListRuleSets', {}, auth(good.key))).ok);
  });

  it('more than 20 failed attempts from one address: RESOURCE_EXHAUSTED for that address, even with a valid key; other addresses unaffected', async () => {
    for (let i = 1; i <= 21; i++) {
      const guess = makeTestKey(`guess-${i}`, 'viewer').key;
      assertUnauthenticated(await client!.call('ListRuleSets', {}, auth(guess)), `guess #${i}`);
    }
    for (const credential of [makeTestKey('guess-22', 'viewer').key, good.key]) {
      const out = await client!.call('ListRuleSets', {}, auth(credential));
      assert.equal(out.ok, false);
      if (out.ok) return;
      assert.equal(Status[out.code], 'RESOURCE_EXHAUSTED', out.details);
      assert.equal(out.svcCode, 'RATE_LIMITED');
      assert.match(out.details, /too many failed authentication attempts/);
    }
    // Health stays open; the Unix socket is another address.
    assert.equal((await client!.ok('Health', {})).status, 'healthy');
    assert.ok((await uds!.call('ListRuleSets', {}, auth(good.key))).ok);
  });
});
