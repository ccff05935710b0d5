/**
 * svc-client (client/) against the real server (a child process): every method once with a
 * real answer, the decision id of execute and batch, the typed errors (404, 400 with problems,
 * 409, TESTS_FAILED with failures, eval's position), and the tenant option with multi-tenancy on.
 * Authentication (401/403), retries and timeouts: ./client-auth.test.ts, ./client-retry.test.ts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SvcClient, SvcError, type RulesetDocument } from '../../client/src/index.js';
import { CLIENT_METHOD_OF_ROUTE } from '../helpers/client-routes.js';
import { startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

/** `loan`: under `minAge` REJECTED, else APPROVED with output `a` = the age; one test. */
function loan(version: string, minAge: number): RulesetDocument {
  return {
    config: { name: 'loan', version, entry_step: 'age' },
    steps: {
      age: { type: 'decision', branches: [{ condition: `applicant.age < ${minAge}`, next_step: 'no' }], default_next: 'ok' },
      ok: { type: 'terminal', result: { code: 'APPROVED', message: 'ok' }, output: { a: 'applicant.age' } },
      no: { type: 'terminal', result: { code: 'REJECTED', message: 'no' } },
    },
    tests: [{ name: 'adult', input: { applicant: { age: 30 } }, expect: { code: 'APPROVED' } }],
  };
}

const ALWAYS: RulesetDocument = {
  config: { name: 'loan', version: '2.0.0', entry_step: 'ok' },
  steps: { ok: { type: 'terminal', result: { code: 'APPROVED', message: 'ok' } } },
};

/** Runs `fn`, which must throw an SvcError; returns it. */
async function svcError(fn: () => Promise<unknown>): Promise<SvcError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof SvcError, `not an SvcError: ${String(err)}`);
    return err;
  }
  return assert.fail('the call did not throw');
}

describe('svc-client against a real server', () => {
  const dir = tempDir('svc-client-');
  let server: ServerProcess;
  let client: SvcClient;
  /** The client methods called so far (every route's method must be). */
  const called = new Set<string>();

  before(async () => {
    server = await startServer([
      '--disable-grpc',
      '--rules-dir',
      join(dir.path, 'rules'),
      '--decision-log',
      join(dir.path, 'decisions'),
      '--multi-tenancy-enabled',
      '--debug-mode',
    ]);
    const real = new SvcClient({ baseUrl: server.url + '/', timeoutMs: 10_000 });
    client = new Proxy(real, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        called.add(prop);
        return (value as (...args: unknown[]) => unknown).bind(target);
      },
    });
  });

  after(async () => {
    await server.stop();
    dir.remove();
  });

  it('rulesets: put, list, get, versions, analysis, schema, debug view', async () => {
    assert.deepEqual(await client.putRuleset(loan('1.0.0', 18)), { status: 'created', name: 'loan' });
    assert.deepEqual(await client.putRuleset(loan('1.1.0', 21)), { status: 'updated', name: 'loan' });
    assert.deepEqual(await client.listRulesets(), [{ name: 'loan', version: '1.1.0', description: null }]);
    const doc = await client.getRuleset('loan');
    assert.equal(doc.config.version, '1.1.0');
    assert.deepEqual(doc.steps['age'], loan('1.1.0', 21).steps['age']);
    const versions = await client.listVersions('loan');
    assert.equal(versions.current_version, '1.1.0');
    assert.deepEqual(
      versions.versions.map((v) => [v.seq, v.version]),
      [[1, '1.0.0']],
    );
    assert.match(versions.versions[0]!.timestamp, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(await client.getAnalysis('loan'), { warnings: [] });
    const schema = await client.getInputSchema('loan');
    assert.equal(schema.inferred, true);
    assert.equal(schema.input_validation, 'off');
    assert.deepEqual((schema.schema as { properties: unknown }).properties, { applicant: { type: 'object', properties: { age: { type: 'number' } } } });
    const debug = await client.debugRuleset('loan');
    assert.equal(debug.entry_step, 'age');
    assert.equal(debug.steps.length, 3);
  });

  it('execution: execute (trace, decision id), batch (decision id, item error), eval, filter, tests', async () => {
    const result = await client.execute('loan', { applicant: { age: 30 } }, { trace: true });
    assert.equal(result.code, 'APPROVED');
    assert.deepEqual(result.output, { a: 30 });
    assert.equal(result.trace?.path, 'age -> ok');
    assert.match(result.decisionId ?? '', /^\S+-\d+$/, 'the X-Svc-Decision-Id header is returned');
    assert.ok(!('trace' in (await client.execute('loan', { applicant: { age: 30 } }))));

    const batch = await client.executeBatch('loan', [{ applicant: { age: 30 } }, { applicant: { age: 19 } }]);
    assert.deepEqual(
      batch.results.map((r) => r.code),
      ['APPROVED', 'REJECTED'],
    );
    assert.deepEqual({ ...batch.summary, total_duration_us: 0 }, { total: 2, success: 2, failed: 0, total_duration_us: 0 });
    assert.ok(batch.decisionId !== undefined && batch.decisionId !== result.decisionId);

    assert.deepEqual(await client.evaluate('a + 1', { a: 2 }), { result: 3, parsed: '(+ a 1)' });
    assert.deepEqual(await client.evaluate('1 + 2'), { result: 3, parsed: '(+ 1 2)' });

    const filter = await client.filter('loan', { known_input: {}, target_results: ['APPROVED'] });
    assert.deepEqual(filter, {
      format: 'sql',
      filter: 'applicant_age >= 21',
      always_matches: false,
      never_matches: false,
      truncated: false,
      unknown_fields: ['applicant.age'],
      exact: true,
    });
    const mongo = await client.filter('loan', { known_input: {}, target_results: ['APPROVED'], format: 'mongo', field_mapping: { 'applicant.age': 'age' } });
    assert.deepEqual(mongo.filter, { age: { $not: { $lt: 21 } } });

    const stored = await client.testRuleset('loan');
    assert.equal(stored.passed, 1);
    assert.deepEqual(stored.coverage.branches.missing, ['steps.age.branches[0]']);
    const given = await client.testRuleset('loan', [{ name: 'minor', input: { applicant: { age: 10 } }, expect: { code: 'APPROVED' } }]);
    assert.deepEqual([given.passed, given.failed], [0, 1]);
    assert.deepEqual(given.results[0]!.actual, { code: 'REJECTED', message: 'no', output: {}, path: 'age -> no' });
  });

  it('changes: diff (versions and documents), impact, drafts', async () => {
    const diff = await client.diff('loan', 1, 'current');
    assert.deepEqual(diff.changes, [
      { op: 'change', path: 'config.version', from: '1.0.0', to: '1.1.0' },
      { op: 'change', path: 'steps.age.branches[0].condition', from: 'applicant.age < 18', to: 'applicant.age < 21' },
    ]);
    assert.equal(diff.behavior?.equivalent, false);
    assert.deepEqual(
      diff.behavior?.regions.map((r) => [r.from_code, r.to_code]),
      [['APPROVED', 'REJECTED']],
    );
    const docs = await client.diff('loan', loan('1.1.0', 21), 'current');
    assert.deepEqual(docs.changes, []);

    const impact = await client.impact('loan', { seq: 1 }, [{ applicant: { age: 19 } }, { applicant: { age: 40 } }]);
    assert.deepEqual(impact, {
      total: 2,
      changed: 1,
      errors: 0,
      transitions: [{ from: 'REJECTED', to: 'APPROVED', count: 1 }],
      examples: [{ input: { applicant: { age: 19 } }, from: 'REJECTED', to: 'APPROVED' }],
    });

    assert.deepEqual(await client.draftValidate(ALWAYS), { valid: true, problems: [], warnings: [] });
    const invalid = await client.draftValidate({ config: {} });
    assert.equal(invalid.valid, false);
    assert.deepEqual(
      invalid.problems.map((p) => p.path),
      ['config.name', 'config.entry_step', 'steps'],
    );
    const executed = await client.draftExecute(ALWAYS, {}, { trace: true, now: '2026-01-01T00:00:00Z' });
    assert.equal(executed.code, 'APPROVED');
    assert.equal(executed.trace?.path, 'ok');
    const draftFilter = await client.draftFilter(ALWAYS, { known_input: {}, target_results: ['APPROVED'], format: 'json' });
    assert.deepEqual([draftFilter.filter, draftFilter.always_matches], [{ type: 'always' }, true]);
    const draftTest = await client.draftTest(ALWAYS, [{ name: 't', input: {}, expect: { code: 'X' } }]);
    assert.deepEqual([draftTest.passed, draftTest.failed], [0, 1]);
    assert.deepEqual((await client.draftTest(loan('3.0.0', 18))).passed, 1);
  });

  it('shadow runs: put, count, get, promote, put again and delete; then rollback', async () => {
    const put = await client.putShadow('loan', ALWAYS, 100);
    assert.deepEqual([put.status, put.candidate_version, put.sample_rate], ['created', '2.0.0', 100]);
    await client.execute('loan', { applicant: { age: 19 } });
    // The candidate runs after the live answer (deferred on the server): poll for its count.
    let shadow = await client.getShadow('loan');
    for (let i = 0; i < 100 && shadow.executed === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      shadow = await client.getShadow('loan');
    }
    assert.deepEqual([shadow.live_version, shadow.counted_by, shadow.executed, shadow.disagreed], ['1.1.0', 'instance', 1, 1]);
    assert.deepEqual(shadow.transitions, [{ from: 'REJECTED', to: 'APPROVED', count: 1 }]);
    assert.deepEqual(await client.promoteShadow('loan'), { status: 'promoted', name: 'loan', from_version: '1.1.0', to_version: '2.0.0' });
    await client.putShadow('loan', loan('2.1.0', 18), 10);
    assert.equal(await client.deleteShadow('loan'), undefined);
    const gone = await svcError(() => client.getShadow('loan'));
    assert.deepEqual([gone.status, gone.code], [404, 'NOT_FOUND']);

    assert.deepEqual(await client.rollback('loan', 1), { status: 'rolled_back', name: 'loan', from_version: '2.0.0', to_version: '1.0.0' });
  });

  it('reference data: put (created, updated), list, get, delete', async () => {
    const created = await client.putData('countries', ['US', 'CA']);
    assert.deepEqual([created.status, created.name, created.bytes], ['created', 'countries', 11]);
    const updated = await client.putData('countries', ['US', 'CA', 'FR']);
    assert.equal(updated.status, 'updated');
    assert.notEqual(updated.version, created.version);
    assert.deepEqual(await client.listData(), [{ name: 'countries', bytes: 16, version: updated.version }]);
    assert.deepEqual(await client.getData<string[]>('countries'), ['US', 'CA', 'FR']);
    await client.deleteData('countries');
    assert.deepEqual(await client.listData(), []);
  });

  it('server: audit sample rate, health, live, ready, metrics', async () => {
    const before = await client.getAuditSampleRate();
    assert.equal(typeof before.sample_rate, 'number');
    assert.deepEqual(await client.setAuditSampleRate(50), { sample_rate: 50, previous: before.sample_rate });
    const health = await client.health();
    assert.deepEqual([health.status, health.role, health.storage.mode], ['healthy', 'standalone', 'persistent']);
    assert.deepEqual(await client.live(), { status: 'alive' });
    assert.equal((await client.ready()).status, 'healthy');
    const metrics = await client.metrics();
    assert.match(metrics, /^# HELP svc_info /m);
    const doc = await client.openapi();
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/api/v1/execute/{name}']?.['post'] !== undefined, Object.keys(doc.paths).join(', '));
  });

  it('tenants: create (201), conflict (409), get, update, the tenant option scopes rulesets, delete', async () => {
    const acme = await client.createTenant({ id: 'acme', name: 'ACME' });
    assert.deepEqual(acme, { id: 'acme', name: 'ACME', enabled: true, qps_limit: null, burst: null, execution_timeout_ms: null, max_rulesets: null });
    const conflict = await svcError(() => client.createTenant({ id: 'acme' }));
    assert.deepEqual([conflict.status, conflict.code], [409, 'CONFLICT']);
    assert.match(conflict.message, /already exists/);
    assert.deepEqual(await client.getTenant('acme'), acme);
    assert.equal((await client.updateTenant('acme', { name: 'ACME Corp', max_rulesets: 5 })).max_rulesets, 5);
    assert.deepEqual(
      (await client.listTenants()).map((t) => t.id),
      ['acme', 'default'],
    );

    // The tenant option: per call, and per client.
    await client.putRuleset(ALWAYS, { tenant: 'acme' });
    const forAcme = new SvcClient({ baseUrl: server.url, tenant: 'acme' });
    assert.deepEqual(
      (await forAcme.listRulesets()).map((r) => r.version),
      ['2.0.0'],
    );
    assert.deepEqual(
      (await client.listRulesets()).map((r) => r.version),
      ['1.0.0'],
      'the default tenant keeps its own loan',
    );
    assert.equal((await forAcme.listRulesets({ tenant: null })).length, 1, 'tenant: null sends no header (default)');
    const busy = await svcError(() => client.deleteTenant('acme'));
    assert.deepEqual([busy.status, busy.code, busy.details.rulesets], [409, 'CONFLICT', 1]);
    await forAcme.deleteRuleset('loan');
    await client.deleteTenant('acme');
    const unknown = await svcError(() => forAcme.listRulesets());
    assert.deepEqual([unknown.status, unknown.code], [404, 'TENANT_NOT_FOUND']);
    const noTenant = await svcError(() => client.getTenant('acme'));
    assert.equal(noTenant.code, 'TENANT_NOT_FOUND');
  });

  it('typed errors: 404 unknown ruleset, 400 with problems, 400 with position, 422 with failures', async () => {
    const missing = await svcError(() => client.getRuleset('nope'));
    assert.deepEqual([missing.status, missing.code, missing.message], [404, 'NOT_FOUND', "ruleset 'nope' not found"]);
    assert.deepEqual([missing.method, missing.path], ['GET', '/api/v1/rulesets/nope']);
    assert.deepEqual(missing.problems, []);

    const invalid = await svcError(() => client.putRuleset({ config: { name: 'x' } } as unknown as RulesetDocument));
    assert.deepEqual([invalid.status, invalid.code], [400, 'BAD_REQUEST']);
    assert.deepEqual(invalid.problems, [
      { path: 'config.entry_step', message: 'required' },
      { path: 'steps', message: 'required' },
    ]);
    assert.deepEqual(invalid.details.problems, invalid.problems);

    const parse = await svcError(() => client.evaluate('1 +'));
    assert.deepEqual([parse.status, parse.code, parse.details.position], [400, 'BAD_REQUEST', 3]);

    const failing = loan('9.0.0', 18);
    failing.tests = [{ name: 'wrong', input: { applicant: { age: 30 } }, expect: { code: 'REJECTED' } }];
    const tests = await svcError(() => client.putRuleset(failing));
    assert.deepEqual([tests.status, tests.code], [422, 'TESTS_FAILED']);
    assert.deepEqual(
      tests.details.failures?.map((f) => [f.name, f.actual.code]),
      [['wrong', 'APPROVED']],
    );

    const noVersion = await svcError(() => client.rollback('loan', 99));
    assert.deepEqual([noVersion.status, noVersion.code], [404, 'NOT_FOUND']);
  });

  it('delete ruleset; every route has had its method called', async () => {
    await client.deleteRuleset('loan');
    assert.deepEqual(await client.listRulesets(), []);
    const notCalled = Object.values(CLIENT_METHOD_OF_ROUTE).filter((m) => !called.has(m));
    assert.deepEqual(notCalled, [], 'client methods this file never called');
  });
});
