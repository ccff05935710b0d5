/**
 * A ruleset's own tests with real processes (EXTENSIONS.md 2 "Tests"): a writer and a reader
 * on this test's own nats-server. Tests travel with the ruleset by sync; an update whose tests
 * fail is 422 TESTS_FAILED on the writer and is neither stored, audited nor published (the
 * reader keeps the old version while a later change arrives); `POST .../test` answers the
 * report over real HTTP on both instances; a misspelt key is 400 with its suggestion.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, ruleset, servedVersion, waitConnected, waitFor } from '../helpers/sync-cluster.js';

const API = '/api/v1';

function loan(version: string, approved: string): Record<string, unknown> {
  return {
    config: { name: 'loan', version, entry_step: 'age', metadata: { owner: 'risk-team' } },
    steps: {
      age: { type: 'decision', branches: [{ condition: 'applicant.age >= 18', next_step: 'ok' }], default_next: 'no' },
      ok: { type: 'terminal', result: { code: approved } },
      no: { type: 'terminal', result: { code: 'REJECTED', message: 'too young' } },
    },
    tests: [
      { name: 'adult is approved', input: { applicant: { age: 30 } }, expect: { code: 'APPROVED', path: 'age -> ok' } },
      { name: 'minor is rejected', input: { applicant: { age: 12 } }, expect: { code: 'REJECTED', message: 'too young' } },
    ],
  };
}

describe('stored tests with a writer and a reader', () => {
  const cluster = new SyncCluster();
  let writer: ServerProcess;
  let reader: ServerProcess;

  before(async () => {
    await cluster.startNats();
    writer = await cluster.writer(['--rules-dir', cluster.dir(), '--audit-sample-rate', '0']);
    reader = await cluster.reader(['--writer-addr', writer.url]);
    await Promise.all([writer, reader].map((p) => waitConnected(p)));
  });
  after(() => cluster.dispose());

  it('tests and metadata travel to the reader with the ruleset', async () => {
    const r = await http(writer.url, 'POST', `${API}/rulesets`, loan('1.0.0', 'APPROVED'));
    assert.deepEqual(r.body, { status: 'created', name: 'loan' });
    await waitFor('loan on the reader', async () => (await servedVersion(reader.url, 'loan')) === '1.0.0');
    const got = await http(reader.url, 'GET', `${API}/rulesets/loan`);
    assert.deepEqual(got.body.tests, loan('1.0.0', 'APPROVED')['tests']);
    assert.deepEqual(got.body.config.metadata, { owner: 'risk-team' });
  });

  it('an update whose tests fail is 422 and is not stored, audited or published', async () => {
    const r = await http(writer.url, 'POST', `${API}/rulesets`, loan('2.0.0', 'OK'));
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'TESTS_FAILED');
    assert.deepEqual(r.body.failures, [
      {
        name: 'adult is approved',
        expected: { code: 'APPROVED', path: 'age -> ok' },
        actual: { code: 'OK', message: '', output: {}, path: 'age -> ok' },
      },
    ]);
    assert.equal(await servedVersion(writer.url, 'loan'), '1.0.0');
    // The history holds the versions an update replaced: the refused update replaced none.
    const versions = await http(writer.url, 'GET', `${API}/rulesets/loan/versions`);
    assert.deepEqual(versions.body, { name: 'loan', current_version: '1.0.0', versions: [] });
    // A later change reaches the reader; the refused one never did.
    assert.equal((await http(writer.url, 'POST', `${API}/rulesets`, ruleset('marker'))).status, 200);
    await waitFor('marker on the reader', async () => (await servedVersion(reader.url, 'marker')) === '1.0.0');
    assert.equal(await servedVersion(reader.url, 'loan'), '1.0.0');
    // NOTE: the writer's audit lines reach this process through its stdout pipe, which can be
    // later than the marker reaches the reader through the broker.
    const events = () => writer.stdout.map((l) => `${String(l['event'])} ${String(l['rule_name'])}`);
    await waitFor('the audit line of the marker on the writer', () => events().includes('rule_created marker'));
    assert.ok(events().includes('rule_created loan'), events().join(', '));
    assert.ok(!events().includes('rule_updated loan'), events().join(', '));
  });

  it('POST .../test answers results and coverage on the writer and on the reader', async () => {
    for (const url of [writer.url, reader.url]) {
      const r = await http(url, 'POST', `${API}/rulesets/loan/test`, {});
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.passed, 2);
      assert.equal(r.body.failed, 0);
      assert.deepEqual(r.body.coverage, {
        steps: { covered: 3, total: 3, missing: [] },
        branches: { covered: 2, total: 2, missing: [] },
        terminals: { covered: 2, total: 2, missing: [] },
      });
    }
    const adHoc = await http(reader.url, 'POST', `${API}/rulesets/loan/test`, {
      tests: [{ name: 'adult only', input: { applicant: { age: 40 } }, expect: { code: 'APPROVED' } }],
    });
    assert.deepEqual(adHoc.body.coverage.branches.missing, ['steps.age.default_next']);
  });

  it('a misspelt key is 400 with the suggestion', async () => {
    const doc = loan('3.0.0', 'APPROVED') as { steps: Record<string, Record<string, unknown>> };
    doc.steps['age']!['defualt_next'] = 'no';
    delete doc.steps['age']!['default_next'];
    const r = await http(writer.url, 'POST', `${API}/rulesets`, doc);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.problems, [{ path: 'steps.age.defualt_next', message: "unknown key (did you mean 'default_next'?)" }]);
  });
});
