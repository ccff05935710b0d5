/**
 * Stored tests through the façade and the HTTP adapter (EXTENSIONS.md 2 "Tests"): a create or
 * update whose tests fail is 422 TESTS_FAILED with `failures` and leaves no trace (no stored
 * version, no audit line, no change on the stream the sync publisher reads, nothing on disk);
 * tests travel with the ruleset (GET, history, rollback); `POST /api/v1/rulesets/:name/test`
 * runs the stored tests or the body's with coverage; strict documents answer 400 with the
 * did-you-mean problem.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Change } from '../../../src/store/change.js';
import { ageRules, makeHarness, type Harness } from './harness.js';

const API = '/api/v1';

const ADULT_TEST = { name: 'adult', input: { user: { age: 30 } }, expect: { code: 'ADULT', output: { tier: 'full' }, path: 'check -> adult' } };
const MINOR_TEST = { name: 'minor', input: { user: { age: 3 } }, expect: { code: 'MINOR', message: 'too young' } };

function withTests(tests: unknown[], options: { version?: string; adultCode?: string } = {}): Record<string, unknown> {
  return { ...ageRules('age', options), tests };
}

describe('stored tests: the create/update gate', () => {
  let h: Harness;
  const changes: Change[] = [];
  before(async () => {
    h = await makeHarness({ rulesDir: true });
    h.service.subscribe((c) => void changes.push(c));
  });
  after(() => h.close());

  it('a ruleset whose tests pass is stored; the answer stays exactly {status, name}', async () => {
    const r = await h.request('POST', `${API}/rulesets`, withTests([ADULT_TEST, MINOR_TEST]));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'created', name: 'age' });
    // The tests are part of the stored document.
    const got = await h.request('GET', `${API}/rulesets/age`);
    assert.deepEqual(got.body.tests, [ADULT_TEST, MINOR_TEST]);
  });

  it('an update whose tests fail is 422 TESTS_FAILED and nothing is stored, audited or published', async () => {
    const before = {
      doc: (await h.request('GET', `${API}/rulesets/age`)).body,
      versions: (await h.request('GET', `${API}/rulesets/age/versions`)).body,
      file: readFileSync(join(h.rulesDir!, 'age.json'), 'utf8'),
      audit: h.auditLines().length,
      changes: changes.length,
    };
    // 2.0.0 renames the adult code: the stored tests now fail on the new content.
    const r = await h.request('POST', `${API}/rulesets`, withTests([ADULT_TEST, MINOR_TEST], { version: '2.0.0', adultCode: 'GROWN' }));
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'TESTS_FAILED');
    assert.match(r.body.error, /1 of 2 tests failed: 'adult'/);
    assert.deepEqual(r.body.failures, [
      {
        name: 'adult',
        expected: ADULT_TEST.expect,
        actual: { code: 'GROWN', message: 'grown up', output: { tier: 'full' }, path: 'check -> adult' },
      },
    ]);
    assert.deepEqual((await h.request('GET', `${API}/rulesets/age`)).body, before.doc);
    assert.deepEqual((await h.request('GET', `${API}/rulesets/age/versions`)).body, before.versions);
    assert.equal(readFileSync(join(h.rulesDir!, 'age.json'), 'utf8'), before.file);
    assert.equal(h.auditLines().length, before.audit, 'no audit line');
    assert.equal(changes.length, before.changes, 'no change on the stream');
    assert.equal((await h.request('POST', `${API}/execute/age`, { input: { user: { age: 30 } } })).body.code, 'ADULT');
  });

  it('a create whose tests fail stores nothing', async () => {
    const doc = { ...withTests([{ ...MINOR_TEST, expect: { code: 'CHILD' } }]), config: { name: 'fresh', entry_step: 'check' } };
    const r = await h.request('POST', `${API}/rulesets`, doc);
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'TESTS_FAILED');
    assert.equal((await h.request('GET', `${API}/rulesets/fresh`)).status, 404);
  });

  it('an execution error in a test is a failure with actual {error, code}', async () => {
    const doc = withTests([{ name: 'strict miss', input: {}, expect: { code: 'MINOR' } }], { version: '3.0.0' });
    (doc['config'] as Record<string, unknown>)['field_missing'] = 'strict';
    const r = await h.request('POST', `${API}/rulesets`, doc);
    assert.equal(r.status, 422);
    assert.equal(r.body.failures[0].actual.code, 'EVALUATION_ERROR');
    assert.match(r.body.failures[0].actual.error, /user\.age/);
  });

  it('tests travel with history: an update keeps them, rollback restores the old ones', async () => {
    const r = await h.request('POST', `${API}/rulesets`, withTests([MINOR_TEST], { version: '4.0.0' }));
    assert.equal(r.status, 200);
    assert.deepEqual((await h.request('GET', `${API}/rulesets/age`)).body.tests, [MINOR_TEST]);
    const rb = await h.request('POST', `${API}/rulesets/age/rollback`, { seq: 1 });
    assert.equal(rb.status, 200);
    assert.deepEqual((await h.request('GET', `${API}/rulesets/age`)).body.tests, [ADULT_TEST, MINOR_TEST]);
  });

  it('a document with a misspelt key is 400 with the suggestion; nothing is stored', async () => {
    const doc = ageRules('typo') as { steps: Record<string, Record<string, unknown>> };
    doc.steps['check']!['defualt_next'] = doc.steps['check']!['default_next'];
    delete doc.steps['check']!['default_next'];
    const r = await h.request('POST', `${API}/rulesets`, doc);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'BAD_REQUEST');
    assert.deepEqual(r.body.problems, [{ path: 'steps.check.defualt_next', message: "unknown key (did you mean 'default_next'?)" }]);
    assert.equal((await h.request('GET', `${API}/rulesets/typo`)).status, 404);
  });
});

describe('POST /api/v1/rulesets/:name/test', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
    assert.equal((await h.request('POST', `${API}/rulesets`, withTests([ADULT_TEST]))).status, 200);
    assert.equal((await h.request('POST', `${API}/rulesets`, ageRules('bare'))).status, 200);
  });
  after(() => h.close());

  it('runs the stored tests and answers results and coverage', async () => {
    const r = await h.request('POST', `${API}/rulesets/age/test`, {});
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      passed: 1,
      failed: 0,
      results: [
        {
          name: 'adult',
          passed: true,
          expected: ADULT_TEST.expect,
          actual: { code: 'ADULT', message: 'grown up', output: { tier: 'full' }, path: 'check -> adult' },
        },
      ],
      coverage: {
        steps: { covered: 2, total: 3, missing: ['steps.minor'] },
        branches: { covered: 1, total: 2, missing: ['steps.check.default_next'] },
        terminals: { covered: 1, total: 2, missing: ['steps.minor'] },
      },
    });
  });

  it('a request without a body runs the stored tests too', async () => {
    const r = await h.request('POST', `${API}/rulesets/age/test`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.passed, 1);
  });

  it('runs the tests of the body against the stored version, failures included (200: a report)', async () => {
    const r = await h.request('POST', `${API}/rulesets/bare/test`, { tests: [MINOR_TEST, { ...ADULT_TEST, expect: { code: 'MINOR' } }] });
    assert.equal(r.status, 200);
    assert.equal(r.body.passed, 1);
    assert.equal(r.body.failed, 1);
    assert.deepEqual(r.body.results[1].actual.code, 'ADULT');
    assert.deepEqual(r.body.coverage.branches, { covered: 2, total: 2, missing: [] });
  });

  it('a ruleset without tests answers an empty report', async () => {
    const r = await h.request('POST', `${API}/rulesets/bare/test`, {});
    assert.equal(r.status, 200);
    assert.equal(r.body.passed, 0);
    assert.deepEqual(r.body.results, []);
    assert.equal(r.body.coverage.steps.covered, 0);
  });

  it('tests of a bad shape are 400 with their problems; an unknown ruleset 404', async () => {
    const bad = await h.request('POST', `${API}/rulesets/age/test`, { tests: [{ name: 'x', input: {}, expect: { cod: 'A' } }] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
    assert.deepEqual(bad.body.problems, [
      { path: 'tests[0].expect.cod', message: "unknown key (did you mean 'code'?)" },
      { path: 'tests[0].expect.code', message: 'required' },
    ]);
    const other = await h.request('POST', `${API}/rulesets/age/test`, { test: [] });
    assert.equal(other.status, 400);
    assert.equal((await h.request('POST', `${API}/rulesets/nope/test`, {})).status, 404);
  });
});
