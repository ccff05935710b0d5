/**
 * Shadow runs through the real built server over HTTP (EXTENSIONS.md 4 "Shadow runs"):
 * `PUT/GET/DELETE /api/v1/rulesets/:name/shadow` and `POST .../shadow/promote`. The candidate
 * runs on the sampled share of live executions after their answers, never changing them; the
 * counts, transitions and examples; `svc_shadow_executions_total`; the candidate checked as a
 * create checks a document (400 problems, 422 TESTS_FAILED); persisted as
 * `<rules-dir>/shadows/<name>.json` and back after a restart; promote through the normal update
 * (history, audit); delete; tenant scoping; a candidate reading a dataset.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { waitFor } from '../helpers/sync-cluster.js';

const API = '/api/v1';

/** Live: score >= 700 approves. */
const LIVE = {
  config: { name: 'credit', version: '1.0.0', entry_step: 'score' },
  steps: {
    score: { type: 'decision', branches: [{ condition: 'applicant.score >= 700', next_step: 'approve' }], default_next: 'review' },
    approve: { type: 'terminal', result: { code: 'APPROVE' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
  },
};

/** Candidate: score >= 680 approves (with a test that says so). */
const CANDIDATE = {
  config: { name: 'credit', version: '1.1.0', entry_step: 'score' },
  steps: {
    score: { type: 'decision', branches: [{ condition: 'applicant.score >= 680', next_step: 'approve' }], default_next: 'review' },
    approve: { type: 'terminal', result: { code: 'APPROVE' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
  },
  tests: [{ name: 'new threshold', input: { applicant: { score: 690 } }, expect: { code: 'APPROVE' } }],
};

async function exec(url: string, score: number, headers: Record<string, string> = {}): Promise<string> {
  const res = await http(url, 'POST', `${API}/execute/credit`, { input: { applicant: { score } } }, headers);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.code as string;
}

async function shadowOf(url: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await http(url, 'GET', `${API}/rulesets/credit/shadow`, undefined, headers);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

describe('shadow runs with --rules-dir', () => {
  const dir = tempDir('svc-shadow-');
  let server: ServerProcess;

  before(async () => {
    server = await startServer(['--rules-dir', dir.path, '--disable-grpc']);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets`, LIVE)).status, 200);
  });
  after(async () => {
    await server.stop();
    dir.remove();
  });

  it('answers 404 for a ruleset without a shadow, and for an unknown ruleset', async () => {
    const none = await http(server.url, 'GET', `${API}/rulesets/credit/shadow`);
    assert.equal(none.status, 404);
    assert.equal(none.body.code, 'NOT_FOUND');
    assert.match(none.body.error, /has no shadow run/);
    const unknown = await http(server.url, 'PUT', `${API}/rulesets/nope/shadow`, { candidate: CANDIDATE, sample_rate: 100 });
    assert.equal(unknown.status, 404);
    assert.equal((await http(server.url, 'DELETE', `${API}/rulesets/credit/shadow`)).status, 404);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets/credit/shadow/promote`)).status, 404);
  });

  it('checks the candidate as a create does: 400 with problems, another name, bad sample_rate, 422 when its tests fail', async () => {
    const invalid = await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, {
      candidate: { config: { name: 'credit', entry_step: 'missing' }, steps: {} },
      sample_rate: 100,
    });
    assert.equal(invalid.status, 400);
    assert.ok(Array.isArray(invalid.body.problems) && invalid.body.problems.length > 0, JSON.stringify(invalid.body));
    const renamed = await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, {
      candidate: { ...CANDIDATE, config: { ...CANDIDATE.config, name: 'other' } },
      sample_rate: 100,
    });
    assert.equal(renamed.status, 400);
    assert.deepEqual(renamed.body.problems, [{ path: 'config.name', message: "must be 'credit'" }]);
    for (const rate of [0, 101, '50', null]) {
      const bad = await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: CANDIDATE, sample_rate: rate });
      assert.equal(bad.status, 400, `sample_rate ${JSON.stringify(rate)}`);
      assert.match(bad.body.error, /sample_rate/);
    }
    const failing = await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, {
      candidate: { ...CANDIDATE, tests: [{ name: 'wrong', input: { applicant: { score: 690 } }, expect: { code: 'REVIEW' } }] },
      sample_rate: 100,
    });
    assert.equal(failing.status, 422);
    assert.equal(failing.body.code, 'TESTS_FAILED');
    assert.equal(existsSync(join(dir.path, 'shadows', 'credit.json')), false, 'nothing stored');
  });

  it('runs the candidate on every live execution at 100%, after the answer, never changing it; counts, transitions, examples, metric', async () => {
    const put = await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: CANDIDATE, sample_rate: 100 });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.status, 'created');
    assert.equal(put.body.candidate_version, '1.1.0');
    // Persisted with the rules.
    const file = JSON.parse(readFileSync(join(dir.path, 'shadows', 'credit.json'), 'utf8'));
    assert.equal(file.sample_rate, 100);
    assert.equal(file.candidate.config.version, '1.1.0');
    // The live answers stay the live version's: 690 is REVIEW live, APPROVE on the candidate.
    assert.equal(await exec(server.url, 690), 'REVIEW');
    assert.equal(await exec(server.url, 750), 'APPROVE');
    assert.equal(await exec(server.url, 600), 'REVIEW');
    assert.equal(await exec(server.url, 695), 'REVIEW');
    const s = await waitFor('4 candidate runs', async () => {
      const got = await shadowOf(server.url);
      return got.executed === 4 ? got : undefined;
    });
    assert.equal(s.live_version, '1.0.0');
    assert.equal(s.candidate_version, '1.1.0');
    assert.equal(s.sample_rate, 100);
    assert.equal(s.counted_by, 'instance');
    assert.equal(s.agreed, 2);
    assert.equal(s.disagreed, 2);
    assert.equal(s.errors, 0);
    assert.deepEqual(s.transitions, [{ from: 'REVIEW', to: 'APPROVE', count: 2 }]);
    assert.deepEqual(
      s.examples.map((e: any) => [e.input.applicant.score, e.from, e.to]),
      [
        [690, 'REVIEW', 'APPROVE'],
        [695, 'REVIEW', 'APPROVE'],
      ],
    );
    assert.ok(!Number.isNaN(Date.parse(s.since)));
    const metrics = (await http(server.url, 'GET', '/metrics')).body as string;
    assert.match(metrics, /svc_shadow_executions_total\{ruleset="credit",agreement="agree"\} 2/);
    assert.match(metrics, /svc_shadow_executions_total\{ruleset="credit",agreement="disagree"\} 2/);
    assert.match(metrics, /svc_shadow_executions_total\{ruleset="credit",agreement="error"\} 0/);
    // Batch items are live executions too.
    const batch = await http(server.url, 'POST', `${API}/execute/credit/batch`, { inputs: [{ applicant: { score: 685 } }, { applicant: { score: 100 } }] });
    assert.equal(batch.status, 200);
    assert.deepEqual(
      batch.body.results.map((r: any) => r.code),
      ['REVIEW', 'REVIEW'],
    );
    await waitFor('6 candidate runs', async () => (await shadowOf(server.url)).executed === 6);
  });

  it('samples about sample_rate percent: 10% of 100 executions runs the candidate 10 times; replacing resets the counts', async () => {
    const put = await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: CANDIDATE, sample_rate: 10 });
    assert.equal(put.status, 200);
    assert.equal(put.body.status, 'updated');
    assert.equal((await shadowOf(server.url)).executed, 0, 'a replaced shadow starts counting again');
    for (let i = 0; i < 100; i++) await exec(server.url, 690);
    await waitFor('10 candidate runs', async () => (await shadowOf(server.url)).executed === 10);
    await new Promise((r) => setTimeout(r, 100));
    const s = await shadowOf(server.url);
    assert.equal(s.executed, 10);
    assert.equal(s.disagreed, 10);
  });

  it('counts a failing candidate as error (error:<REASON>)', async () => {
    const failing = {
      config: { name: 'credit', version: '2.0.0', entry_step: 'score', field_missing: 'strict' },
      steps: {
        score: { type: 'decision', branches: [{ condition: 'applicant.income > 10', next_step: 'approve' }], default_next: 'approve' },
        approve: { type: 'terminal', result: { code: 'APPROVE' } },
      },
    };
    assert.equal((await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: failing, sample_rate: 100 })).status, 200);
    assert.equal(await exec(server.url, 750), 'APPROVE');
    const s = await waitFor('1 candidate run', async () => {
      const got = await shadowOf(server.url);
      return got.executed === 1 ? got : undefined;
    });
    assert.equal(s.errors, 1);
    assert.equal(s.transitions.length, 1);
    assert.equal(s.transitions[0].from, 'APPROVE');
    assert.match(s.transitions[0].to, /^error:/);
    const metrics = (await http(server.url, 'GET', '/metrics')).body as string;
    assert.match(metrics, /svc_shadow_executions_total\{ruleset="credit",agreement="error"\} 1/);
  });

  it('keeps the shadow across a restart (counts start again)', async () => {
    assert.equal((await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: CANDIDATE, sample_rate: 100 })).status, 200);
    await server.stop();
    server = await startServer(['--rules-dir', dir.path, '--disable-grpc']);
    const s = await shadowOf(server.url);
    assert.equal(s.candidate_version, '1.1.0');
    assert.equal(s.executed, 0);
    assert.equal(await exec(server.url, 690), 'REVIEW');
    await waitFor('the reloaded shadow runs', async () => (await shadowOf(server.url)).disagreed === 1);
  });

  it('promote makes the candidate live through the normal update (history, audit) and ends the shadow', async () => {
    const res = await http(server.url, 'POST', `${API}/rulesets/credit/shadow/promote`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { status: 'promoted', name: 'credit', from_version: '1.0.0', to_version: '1.1.0' });
    assert.equal(await exec(server.url, 690), 'APPROVE');
    assert.equal((await http(server.url, 'GET', `${API}/rulesets/credit/shadow`)).status, 404);
    assert.equal(existsSync(join(dir.path, 'shadows', 'credit.json')), false);
    const versions = await http(server.url, 'GET', `${API}/rulesets/credit/versions`);
    assert.equal(versions.body.current_version, '1.1.0');
    await waitFor('the audit lines', () => server.stdout.some((l) => l['event'] === 'shadow_ended'));
    const updated = server.stdout.find((l) => l['event'] === 'rule_updated');
    assert.equal(updated?.['to_version'], '1.1.0');
    const ended = server.stdout.find((l) => l['event'] === 'shadow_ended');
    assert.equal(ended?.['reason'], 'promoted');
  });

  it('promote is gated by the candidate tests against the current callees and data: 422 keeps the live version and the shadow', async () => {
    // A candidate reading a dataset: its tests pass at PUT and fail once the dataset changes.
    assert.equal((await http(server.url, 'PUT', `${API}/data/limits`, { min: 600 })).status, 200);
    const reading = {
      config: { name: 'credit', version: '3.0.0', entry_step: 'score' },
      steps: {
        score: { type: 'decision', branches: [{ condition: 'applicant.score >= @limits.min', next_step: 'approve' }], default_next: 'review' },
        approve: { type: 'terminal', result: { code: 'APPROVE' } },
        review: { type: 'terminal', result: { code: 'REVIEW' } },
      },
      tests: [{ name: 'min', input: { applicant: { score: 650 } }, expect: { code: 'APPROVE' } }],
    };
    assert.equal((await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: reading, sample_rate: 100 })).status, 200);
    // The candidate reads the tenant's dataset when it runs in the shadow.
    assert.equal(await exec(server.url, 650), 'REVIEW');
    await waitFor('the dataset-reading candidate disagrees (min 600: APPROVE)', async () => (await shadowOf(server.url)).disagreed === 1);
    assert.equal((await http(server.url, 'PUT', `${API}/data/limits`, { min: 700 })).status, 200);
    const res = await http(server.url, 'POST', `${API}/rulesets/credit/shadow/promote`);
    assert.equal(res.status, 422);
    assert.equal(res.body.code, 'TESTS_FAILED');
    assert.equal((await http(server.url, 'GET', `${API}/rulesets/credit`)).body.config.version, '1.1.0');
    assert.equal((await shadowOf(server.url)).candidate_version, '3.0.0');
  });

  it('DELETE ends the shadow: 204, then 404, file removed, audited', async () => {
    assert.equal((await http(server.url, 'DELETE', `${API}/rulesets/credit/shadow`)).status, 204);
    assert.equal((await http(server.url, 'GET', `${API}/rulesets/credit/shadow`)).status, 404);
    assert.equal(existsSync(join(dir.path, 'shadows', 'credit.json')), false);
    await waitFor('the audit line', () => server.stdout.some((l) => l['event'] === 'shadow_ended' && l['reason'] === 'deleted'));
  });

  it('deleting the ruleset ends its shadow', async () => {
    assert.equal((await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: CANDIDATE, sample_rate: 100 })).status, 200);
    assert.equal((await http(server.url, 'DELETE', `${API}/rulesets/credit`)).status, 204);
    assert.equal(existsSync(join(dir.path, 'shadows', 'credit.json')), false);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets`, LIVE)).status, 200);
    assert.equal((await http(server.url, 'GET', `${API}/rulesets/credit/shadow`)).status, 404, 'a new ruleset of that name starts without a shadow');
    await waitFor('the audit line', () => server.stdout.some((l) => l['event'] === 'shadow_ended' && l['reason'] === 'ruleset_deleted'));
  });
});

describe('shadow runs with multi-tenancy', () => {
  const dir = tempDir('svc-shadow-mt-');
  let server: ServerProcess;
  const acme = { 'x-tenant-id': 'acme' };

  before(async () => {
    server = await startServer(['--rules-dir', dir.path, '--disable-grpc', '--multi-tenancy-enabled']);
    assert.equal((await http(server.url, 'POST', `${API}/tenants`, { id: 'acme' })).status, 201);
    for (const h of [{}, acme]) assert.equal((await http(server.url, 'POST', `${API}/rulesets`, LIVE, h)).status, 200);
  });
  after(async () => {
    await server.stop();
    dir.remove();
  });

  it("keeps a shadow in its tenant: stored under the tenant's dir, runs on that tenant's traffic only", async () => {
    assert.equal((await http(server.url, 'PUT', `${API}/rulesets/credit/shadow`, { candidate: CANDIDATE, sample_rate: 100 }, acme)).status, 200);
    assert.ok(existsSync(join(dir.path, 'tenants', 'acme', 'shadows', 'credit.json')));
    assert.equal((await http(server.url, 'GET', `${API}/rulesets/credit/shadow`)).status, 404, 'not in the default tenant');
    await exec(server.url, 690);
    await exec(server.url, 690, acme);
    await waitFor('the acme run', async () => (await shadowOf(server.url, acme)).executed === 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await shadowOf(server.url, acme)).executed, 1, 'the default tenant traffic is not shadowed');
    const metrics = (await http(server.url, 'GET', '/metrics')).body as string;
    assert.match(metrics, /svc_shadow_executions_total\{ruleset="credit",tenant="acme",agreement="disagree"\} 1/);
  });
});
