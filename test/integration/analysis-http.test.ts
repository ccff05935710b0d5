/**
 * Analysis over HTTP against the real `svc-server` process (EXTENSIONS.md 2 "Analysis"): a clean
 * ruleset's create answer is exactly `{status, name}`; one with findings carries `warnings` (a
 * witness executes to the no-match error through the real execute route); `GET .../analysis`
 * answers `{warnings}` of the stored version; `config.strict: true` turns warnings into a 400
 * with problems and stores nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const API = '/api/v1';

function clean(name: string): Record<string, unknown> {
  return {
    config: { name, entry_step: 'age' },
    steps: {
      age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'adult' }], default_next: 'minor' },
      adult: { type: 'terminal', result: { code: 'ADULT' } },
      minor: { type: 'terminal', result: { code: 'MINOR' } },
    },
  };
}

function flawed(name: string, strict?: boolean): Record<string, unknown> {
  return {
    config: { name, entry_step: 'age', ...(strict === undefined ? {} : { strict }) },
    steps: {
      age: {
        type: 'decision',
        branches: [
          { condition: 'user.age >= 18', next_step: 'adult' },
          { condition: 'user.age >= 65', next_step: 'adult' },
        ],
      },
      adult: { type: 'terminal', result: { code: 'ADULT' } },
      legacy: { type: 'terminal', result: { code: 'LEGACY' } },
    },
  };
}

describe('analysis over HTTP (real server)', () => {
  let server: ServerProcess | undefined;
  let url = '';

  before(async () => {
    server = await startServer(['--disable-grpc']);
    url = server.url;
  });

  after(async () => {
    await server?.stop('SIGKILL');
  });

  it('a clean ruleset: the create answer is exactly {status, name}; analysis is empty', async () => {
    const r = await http(url, 'POST', `${API}/rulesets`, clean('clean'));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'created', name: 'clean' });
    const a = await http(url, 'GET', `${API}/rulesets/clean/analysis`);
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, { warnings: [] });
  });

  it('a flawed ruleset: warnings in the create answer, the same from GET analysis; the witness really fails', async () => {
    const r = await http(url, 'POST', `${API}/rulesets`, flawed('flawed'));
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'created');
    const codes = r.body.warnings.map((w: { code: string; path: string }) => `${w.code} ${w.path}`);
    assert.deepEqual(codes, ['DEAD_BRANCH steps.age.branches[1]', 'NO_MATCH_POSSIBLE steps.age', 'UNREACHABLE_STEP steps.legacy']);
    const noMatch = r.body.warnings.find((w: { code: string }) => w.code === 'NO_MATCH_POSSIBLE');
    assert.ok(noMatch.witness, 'a witness');
    const ex = await http(url, 'POST', `${API}/execute/flawed`, { input: noMatch.witness });
    // SPEC's execution error answer for a decision without a true branch and without default.
    assert.equal(ex.status, 500, JSON.stringify(ex.body));
    assert.match(ex.body.error, /^step 'age': no branch condition is true and there is no default_next/);
    const a = await http(url, 'GET', `${API}/rulesets/flawed/analysis`);
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, { warnings: r.body.warnings });
  });

  it('an update that fixes the findings answers without a warnings key', async () => {
    const r = await http(url, 'POST', `${API}/rulesets`, clean('flawed'));
    assert.deepEqual(r.body, { status: 'updated', name: 'flawed' });
    assert.deepEqual((await http(url, 'GET', `${API}/rulesets/flawed/analysis`)).body, { warnings: [] });
  });

  it('config.strict: warnings are 400 problems and nothing is stored', async () => {
    const r = await http(url, 'POST', `${API}/rulesets`, flawed('strict', true));
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'BAD_REQUEST');
    assert.deepEqual(
      r.body.problems.map((p: { path: string }) => p.path),
      ['steps.age.branches[1]', 'steps.age', 'steps.legacy'],
    );
    assert.match(r.body.problems[0].message, /^DEAD_BRANCH: /);
    assert.equal((await http(url, 'GET', `${API}/rulesets/strict`)).status, 404);
    // strict and clean: stored as usual, strict: false keeps warnings as warnings
    assert.deepEqual((await http(url, 'POST', `${API}/rulesets`, { ...clean('strict'), config: { name: 'strict', entry_step: 'age', strict: true } })).body, {
      status: 'created',
      name: 'strict',
    });
    const lax = await http(url, 'POST', `${API}/rulesets`, flawed('lax', false));
    assert.equal(lax.status, 200);
    assert.equal(lax.body.warnings.length, 3);
  });

  it('GET analysis of an unknown ruleset is 404', async () => {
    const r = await http(url, 'GET', `${API}/rulesets/nothing/analysis`);
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'NOT_FOUND');
  });
});
