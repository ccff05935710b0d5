/**
 * Judging a change before it is live (EXTENSIONS.md 4) through the HTTP adapter, in process:
 * drafts (validate, execute, filter, test) answer as the stored routes do and store nothing;
 * the structural diff between seqs of the history, "current" and documents (the behaviour
 * seam); impact over inputs with its limits; permissions with authentication on; bad bodies
 * are 400, never 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuthGuard, JwtVerifier, parseKeysFile } from '../../../src/auth/index.js';
import { bearer, makeSigningKey, makeTestKey, signToken, jwksOf } from '../../helpers/auth-jwt.js';
import { codeRules, makeTenancyHarness, type TenancyHarness } from '../tenancy/harness.js';
import { ageRules, assertError, makeHarness, type Harness, type Reply } from './harness.js';

const DRAFT = '/api/v1/draft';

/** The age rules with a test, an input schema and a threshold to change. */
function loan(threshold = 18, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const doc = ageRules('loan') as { config: Record<string, unknown>; steps: Record<string, any> };
  doc.steps['check'].branches[0].condition = `user.age >= ${threshold}`;
  return {
    ...doc,
    config: {
      ...doc.config,
      input_schema: { type: 'object', properties: { user: { type: 'object', properties: { age: { type: 'integer' } } } } },
      ...extra,
    },
    tests: [{ name: 'adult', input: { user: { age: 40 } }, expect: { code: 'ADULT' } }],
  };
}

/** A JSON answer without its timings (`duration_us`, also in trace steps). */
function untimed(text: string): unknown {
  return JSON.parse(text, (key, value: unknown) => (key === 'duration_us' ? 0 : value));
}

describe('drafts', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
    assert.equal((await h.request('POST', '/api/v1/rulesets', loan())).status, 200);
  });
  after(() => h.close());

  it('validate: a valid document, its warnings, problems of an invalid one (200), strict warnings are problems', async () => {
    const ok = await h.request('POST', `${DRAFT}/validate`, { ruleset: loan() });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { valid: true, problems: [], warnings: [] });

    const unreachable = loan();
    (unreachable['steps'] as Record<string, unknown>)['orphan'] = { type: 'terminal', result: { code: 'LOST' } };
    const warned = await h.request('POST', `${DRAFT}/validate`, { ruleset: unreachable });
    assert.equal(warned.body.valid, true);
    assert.deepEqual(
      warned.body.warnings.map((w: { code: string; path: string }) => [w.code, w.path]),
      [['UNREACHABLE_STEP', 'steps.orphan']],
    );

    const broken = loan();
    (broken['steps'] as Record<string, any>)['check'].branches[0].condition = 'user.age >=';
    const bad = await h.request('POST', `${DRAFT}/validate`, { ruleset: broken });
    assert.equal(bad.status, 200);
    assert.equal(bad.body.valid, false);
    assert.deepEqual(
      bad.body.problems.map((p: { path: string }) => p.path),
      ['steps.check.branches[0].condition'],
    );
    assert.deepEqual(bad.body.warnings, []);

    const strict = await h.request('POST', `${DRAFT}/validate`, {
      ruleset: { ...unreachable, config: { ...(unreachable['config'] as object), strict: true } },
    });
    assert.equal(strict.body.valid, false);
    assert.match(strict.body.problems[0].message, /^UNREACHABLE_STEP: /);

    const notObject = await h.request('POST', `${DRAFT}/validate`, { ruleset: [1] });
    assert.deepEqual(notObject.body, { valid: false, problems: [{ path: 'ruleset', message: 'must be a JSON object with config and steps' }], warnings: [] });
  });

  it('execute: the stored execute answer (plain and traced), input schema checked, same errors', async () => {
    for (const trace of [false, true]) {
      for (const age of [40, 12]) {
        const stored = await h.request('POST', '/api/v1/execute/loan', { input: { user: { age } }, trace });
        const draft = await h.request('POST', `${DRAFT}/execute`, { ruleset: loan(), input: { user: { age } }, trace });
        assert.equal(draft.status, 200, draft.text);
        assert.deepEqual(untimed(draft.text), untimed(stored.text));
      }
    }
    const changed = await h.request('POST', `${DRAFT}/execute`, { ruleset: loan(10), input: { user: { age: 12 } } });
    assert.equal(changed.body.code, 'ADULT', 'the draft runs, not the stored version');

    const invalid = assertError(await h.request('POST', `${DRAFT}/execute`, { ruleset: loan(), input: { user: { age: 'x' } } }), 400, 'INPUT_INVALID');
    assert.deepEqual(invalid['problems'], [{ path: 'user.age', message: 'must be integer' }]);
    const storedInvalid = await h.request('POST', '/api/v1/execute/loan', { input: { user: { age: 'x' } } });
    assert.deepEqual(invalid, storedInvalid.body);

    const noBranch = {
      ...loan(),
      steps: { ...(loan()['steps'] as object), check: { type: 'decision', branches: [{ condition: 'user.age > 1', next_step: 'adult' }] } },
    };
    assertError(await h.request('POST', `${DRAFT}/execute`, { ruleset: noBranch, input: { user: { age: 0 } } }), 500, 'INTERNAL_ERROR', /no branch/i);
  });

  it('execute: "now" is the time now() reads', async () => {
    const dated = {
      config: { name: 'dated', entry_step: 'd' },
      steps: {
        d: { type: 'decision', branches: [{ condition: 'now() >= date("2030-01-01")', next_step: 'later' }], default_next: 'sooner' },
        later: { type: 'terminal', result: { code: 'LATER' } },
        sooner: { type: 'terminal', result: { code: 'SOONER' } },
      },
    };
    assert.equal((await h.request('POST', `${DRAFT}/execute`, { ruleset: dated, input: {}, now: '2031-05-01T00:00:00Z' })).body.code, 'LATER');
    assert.equal((await h.request('POST', `${DRAFT}/execute`, { ruleset: dated, input: {}, now: '2029-05-01T00:00:00Z' })).body.code, 'SOONER');
    assertError(await h.request('POST', `${DRAFT}/execute`, { ruleset: dated, input: {}, now: 'soon' }), 400, 'BAD_REQUEST', /now must be/);
  });

  it('an invalid document is 400 with problems, as a create answers', async () => {
    const broken = loan();
    (broken['steps'] as Record<string, any>)['check'].branches[0].next_step = 'nowhere';
    const create = assertError(await h.request('POST', '/api/v1/rulesets', broken), 400, 'BAD_REQUEST');
    for (const [route, body] of [
      ['execute', { ruleset: broken, input: {} }],
      ['filter', { ruleset: broken, known_input: {}, target_results: ['ADULT'] }],
      ['test', { ruleset: broken }],
    ] as const) {
      const e = assertError(await h.request('POST', `${DRAFT}/${route}`, body), 400, 'BAD_REQUEST', /^invalid ruleset: /);
      assert.deepEqual(e, create, route);
    }
  });

  it('filter: the stored filter answer; a bad filter request is 400', async () => {
    const request = { known_input: {}, target_results: ['ADULT'], field_mapping: { 'user.age': 'age' } };
    const stored = await h.request('POST', '/api/v1/rulesets/loan/filter', request);
    const draft = await h.request('POST', `${DRAFT}/filter`, { ruleset: loan(), ...request });
    assert.equal(draft.status, 200, draft.text);
    assert.deepEqual(draft.body, stored.body);
    assert.match(JSON.stringify(await h.request('POST', `${DRAFT}/filter`, { ruleset: loan(21), ...request }).then((r) => r.body)), /21/);
    assertError(await h.request('POST', `${DRAFT}/filter`, { ruleset: loan(), known_input: {} }), 400, 'BAD_REQUEST', /target_results/);
    assertError(
      await h.request('POST', `${DRAFT}/filter`, { ruleset: loan(), known_input: { user: { age: 'x' } }, target_results: ['ADULT'] }),
      400,
      'INPUT_INVALID',
    );
  });

  it("test: the document's own tests or the body's, as POST .../test answers; failures are 200", async () => {
    const stored = await h.request('POST', '/api/v1/rulesets/loan/test', {});
    const draft = await h.request('POST', `${DRAFT}/test`, { ruleset: loan() });
    assert.equal(draft.status, 200, draft.text);
    assert.deepEqual(draft.body, stored.body);
    assert.equal(draft.body.passed, 1);

    const failing = await h.request('POST', `${DRAFT}/test`, { ruleset: loan(50) });
    assert.equal(failing.status, 200);
    assert.equal(failing.body.failed, 1, 'a failing test is a report, not a refusal');

    const tests = [{ name: 'minor', input: { user: { age: 3 } }, expect: { code: 'MINOR' } }];
    const body = await h.request('POST', `${DRAFT}/test`, { ruleset: loan(), tests });
    assert.deepEqual(
      body.body.results.map((r: { name: string; passed: boolean }) => [r.name, r.passed]),
      [['minor', true]],
    );
    assertError(await h.request('POST', `${DRAFT}/test`, { ruleset: loan(), extra: 1 }), 400, 'BAD_REQUEST', /unknown key 'extra'/);
    assertError(await h.request('POST', `${DRAFT}/test`, { ruleset: loan(), tests: [{ name: 'x' }] }), 400, 'BAD_REQUEST', /invalid tests/);
  });

  it('nothing is stored, audited or put in history', async () => {
    const linesBefore = h.auditLines().length;
    await h.request('POST', `${DRAFT}/validate`, { ruleset: ageRules('draft-only') });
    await h.request('POST', `${DRAFT}/execute`, { ruleset: ageRules('draft-only'), input: {} });
    await h.request('POST', `${DRAFT}/test`, { ruleset: ageRules('draft-only') });
    await h.request('POST', `${DRAFT}/filter`, { ruleset: ageRules('draft-only'), known_input: {}, target_results: ['ADULT'] });
    assert.deepEqual(
      (await h.request('GET', '/api/v1/rulesets')).body.map((r: { name: string }) => r.name),
      ['loan'],
    );
    assert.equal(h.auditLines().length, linesBefore, 'no audit line for a draft');
    assert.equal((await h.request('GET', '/api/v1/rulesets/loan')).body.steps.check.branches[0].condition, 'user.age >= 18');
  });

  it('bad bodies are 400, never 500', async () => {
    for (const route of ['validate', 'execute', 'filter', 'test']) {
      for (const body of ['[1, 2]', '"text"', '{}', '{"ruleset":', 'null']) {
        const r = await h.request('POST', `${DRAFT}/${route}`, body);
        assert.equal(r.status, 400, `${route} ${body}: ${r.status} ${r.text}`);
        assert.equal(r.body.code, 'BAD_REQUEST');
      }
    }
    assertError(await h.request('GET', `${DRAFT}/validate`), 405, 'METHOD_NOT_ALLOWED');
    assert.equal((await h.request('GET', '/api/v1/rulesets/loan/diff')).headers['allow'], 'POST');
    assertError(await h.request('POST', `${DRAFT}/nothing`, { ruleset: loan() }), 404, 'NOT_FOUND');
    assertError(await h.request('POST', `${DRAFT}/execute`, { ruleset: loan() }), 400, 'BAD_REQUEST', /input is required/);
    assertError(await h.request('POST', `${DRAFT}/execute`, { ruleset: loan(), input: [1] }), 400, 'BAD_REQUEST', /input must be a JSON object/);
    assertError(await h.request('POST', `${DRAFT}/execute`, { ruleset: loan(), input: {}, trace: 'yes' }), 400, 'BAD_REQUEST', /trace must be a boolean/);
  });
});

describe('structural diff', () => {
  let h: Harness;
  const v2 = loan(21, { version: '2.0.0' });
  before(async () => {
    h = await makeHarness({ rulesDir: true });
    assert.equal((await h.request('POST', '/api/v1/rulesets', loan())).status, 200);
    assert.equal((await h.request('POST', '/api/v1/rulesets', v2)).status, 200);
  });
  after(() => h.close());

  it('between a seq of the history and the current version, either way', async () => {
    const versions = (await h.request('GET', '/api/v1/rulesets/loan/versions')).body.versions;
    assert.deepEqual(
      versions.map((v: { seq: number }) => v.seq),
      [1],
    );
    const r = await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 1, to: 'current' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.changes, [
      { op: 'change', path: 'config.version', from: '1.0.0', to: '2.0.0' },
      { op: 'change', path: 'steps.check.branches[0].condition', from: 'user.age >= 18', to: 'user.age >= 21' },
    ]);
    // The behavioural diff: the ages 18, 19 and 20 change outcome; its witness shows one of them.
    const behavior = r.body.behavior as { equivalent: boolean; exact: boolean; regions: Array<{ witness: { user: { age: number } } | null }> };
    assert.equal(behavior.equivalent, false);
    assert.equal(behavior.exact, true);
    assert.ok(behavior.regions.length >= 1);
    for (const region of behavior.regions) {
      const age = region.witness?.user.age;
      assert.ok(age !== undefined && age >= 18 && age < 21, JSON.stringify(region));
    }
    const back = await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 'current', to: 1 });
    assert.deepEqual(
      back.body.changes.map((c: { from: unknown; to: unknown }) => [c.from, c.to]),
      [
        ['2.0.0', '1.0.0'],
        ['user.age >= 21', 'user.age >= 18'],
      ],
    );
    const same = (await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 'current', to: 'current' })).body;
    assert.deepEqual(same.changes, []);
    assert.deepEqual(same.behavior, { equivalent: true, exact: true, regions: [], truncated: false });
  });

  it('a document on either side; an invalid one is 400 with problems naming the side', async () => {
    const doc = loan(21, { version: '2.0.0' });
    (doc['steps'] as Record<string, unknown>)['review'] = { type: 'terminal', result: { code: 'REVIEW' } };
    const r = await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 'current', to: doc });
    assert.deepEqual(r.body.changes, [{ op: 'add', path: 'steps.review', to: { type: 'terminal', result: { code: 'REVIEW' } } }]);
    const broken = loan();
    (broken['config'] as Record<string, unknown>)['entry_step'] = 'nope';
    const e = assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 1, to: broken }), 400, 'BAD_REQUEST', /^invalid ruleset \(to\): /);
    assert.deepEqual(
      (e['problems'] as Array<{ path: string }>).map((p) => p.path),
      ['config.entry_step'],
    );
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: broken, to: 1 }), 400, 'BAD_REQUEST', /^invalid ruleset \(from\): /);
  });

  it('an unknown seq is 404, an unknown ruleset 404; bad sides and bodies are 400', async () => {
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 99, to: 'current' }), 404, 'NOT_FOUND', /version 99 of ruleset 'loan' not found/);
    assertError(await h.request('POST', '/api/v1/rulesets/nope/diff', { from: 1, to: 'current' }), 404, 'NOT_FOUND', /ruleset 'nope' not found/);
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 0, to: 'current' }), 400, 'BAD_REQUEST', /seq must be a positive integer/);
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 1.5, to: 'current' }), 400, 'BAD_REQUEST', /seq must be a positive integer/);
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { to: 'current' }), 400, 'BAD_REQUEST', /from is required/);
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 'latest', to: 'current' }), 400, 'BAD_REQUEST', /from must be a version seq/);
    assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', { from: 1, to: [1] }), 400, 'BAD_REQUEST', /to must be/);
    for (const body of ['[1]', '"x"', '{"from":']) {
      assertError(await h.request('POST', '/api/v1/rulesets/loan/diff', body), 400, 'BAD_REQUEST');
    }
  });

  it('a seq without history (memory-only mode) is 400', async () => {
    const mem = await makeHarness();
    try {
      await mem.request('POST', '/api/v1/rulesets', loan());
      assertError(await mem.request('POST', '/api/v1/rulesets/loan/diff', { from: 1, to: 'current' }), 400, 'BAD_REQUEST', /memory-only/);
      assert.equal((await mem.request('POST', '/api/v1/rulesets/loan/diff', { from: 'current', to: loan(30) })).body.changes.length, 1);
    } finally {
      await mem.close();
    }
  });

  it('behavior: the seam answers what the behavioural diff gives, on the two compiled versions', async () => {
    const seen: string[] = [];
    const wired = await makeHarness({
      behavior: (from, to) => {
        seen.push(`${from.version}->${to.version}`);
        return { equivalent: from.doc === to.doc, exact: true, regions: [], truncated: false };
      },
    });
    try {
      await wired.request('POST', '/api/v1/rulesets', loan());
      const r = await wired.request('POST', '/api/v1/rulesets/loan/diff', { from: 'current', to: loan(30, { version: '3.0.0' }) });
      assert.deepEqual(r.body.behavior, { equivalent: false, exact: true, regions: [], truncated: false });
      assert.deepEqual(seen, ['1.0.0->3.0.0']);
    } finally {
      await wired.close();
    }
  });
});

describe('impact', () => {
  let h: Harness;
  const inputs = [{ user: { age: 19 } }, { user: { age: 20 } }, { user: { age: 40 } }, { user: { age: 5 } }];
  before(async () => {
    h = await makeHarness({ rulesDir: true, maxBatchSize: 5 });
    await h.request('POST', '/api/v1/rulesets', loan(21));
    await h.request('POST', '/api/v1/rulesets', loan(18, { version: '2.0.0' }));
  });
  after(() => h.close());

  it('a candidate document: changed inputs counted by transition, with examples', async () => {
    const r = await h.request('POST', '/api/v1/rulesets/loan/impact', { candidate: loan(21), inputs });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, {
      total: 4,
      changed: 2,
      errors: 0,
      transitions: [{ from: 'ADULT', to: 'MINOR', count: 2 }],
      examples: [
        { input: inputs[0], from: 'ADULT', to: 'MINOR' },
        { input: inputs[1], from: 'ADULT', to: 'MINOR' },
      ],
    });
  });

  it('a candidate from the history ({seq}); failures are error:<REASON> outcomes', async () => {
    const r = await h.request('POST', '/api/v1/rulesets/loan/impact', { candidate: { seq: 1 }, inputs: [...inputs.slice(0, 3), { user: { age: 'x' } }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.changed, 2);
    assert.equal(r.body.errors, 1);
    assert.deepEqual(r.body.transitions, [{ from: 'ADULT', to: 'MINOR', count: 2 }], 'both reject the bad input alike: no change');
    assertError(await h.request('POST', '/api/v1/rulesets/loan/impact', { candidate: { seq: 7 }, inputs }), 404, 'NOT_FOUND', /version 7/);
  });

  it('more inputs than --max-batch-size is the batch-size error', async () => {
    const six = Array.from({ length: 6 }, () => ({ user: { age: 1 } }));
    const e = assertError(await h.request('POST', '/api/v1/rulesets/loan/impact', { candidate: loan(), inputs: six }), 400, 'BAD_REQUEST');
    const batch = await h.request('POST', '/api/v1/execute/loan/batch', { inputs: six });
    assert.equal(e['error'], batch.body.error);
  });

  it('bad bodies are 400: inputs, candidate, body shape; unknown ruleset 404', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ candidate: loan() }, /inputs is required/],
      [{ candidate: loan(), inputs: {} }, /inputs must be an array/],
      [{ candidate: loan(), inputs: [] }, /must not be empty/],
      [{ candidate: loan(), inputs: [{}, 3] }, /inputs\[1\] must be a JSON object/],
      [{ inputs }, /candidate is required/],
      [{ candidate: 'v2', inputs }, /candidate must be/],
      [{ candidate: { seq: 'one' }, inputs }, /seq must be a positive integer/],
      [{ candidate: { config: {} }, inputs }, /^invalid ruleset \(candidate\): /],
    ];
    for (const [body, message] of cases) assertError(await h.request('POST', '/api/v1/rulesets/loan/impact', body), 400, 'BAD_REQUEST', message);
    for (const body of ['[]', 'true', '{"candidate"']) assertError(await h.request('POST', '/api/v1/rulesets/loan/impact', body), 400, 'BAD_REQUEST');
    assertError(await h.request('POST', '/api/v1/rulesets/nope/impact', { candidate: loan(), inputs }), 404, 'NOT_FOUND');
  });
});

describe('permissions with authentication on', () => {
  let h: Harness;
  let noRole: string;
  const executor = makeTestKey('exec', 'executor');
  const viewer = makeTestKey('view', 'viewer');
  const editor = makeTestKey('edit', 'editor');
  before(async () => {
    const signing = await makeSigningKey('ES256');
    const guard = new AuthGuard();
    guard.setKeys(parseKeysFile(JSON.stringify({ keys: [executor.record, viewer.record, editor.record] })));
    guard.setJwt(new JwtVerifier(jwksOf([signing]), { roleClaim: 'svc_role', tenantsClaim: 'svc_tenants' }));
    noRole = await signToken(signing, { sub: 'nobody', role: 'superuser' });
    h = await makeHarness({ auth: { guard, publicMetrics: false } });
    assert.equal((await h.request('POST', '/api/v1/rulesets', loan(), { authorization: bearer(editor.key) })).status, 200);
  });
  after(() => h.close());

  const call = (path: string, body: unknown, credential?: string): Promise<Reply> =>
    h.request('POST', path, body, credential === undefined ? {} : { authorization: bearer(credential) });

  const ROUTES: Array<[string, unknown, 'execute' | 'read']> = [
    [`${DRAFT}/validate`, { ruleset: loan() }, 'execute'],
    [`${DRAFT}/execute`, { ruleset: loan(), input: { user: { age: 3 } } }, 'execute'],
    [`${DRAFT}/filter`, { ruleset: loan(), known_input: {}, target_results: ['ADULT'] }, 'execute'],
    [`${DRAFT}/test`, { ruleset: loan() }, 'execute'],
    ['/api/v1/rulesets/loan/impact', { candidate: loan(30), inputs: [{ user: { age: 25 } }] }, 'read'],
    ['/api/v1/rulesets/loan/diff', { from: 'current', to: loan(30) }, 'read'],
  ];

  it('a credential without execute gets 403 on the drafts; without read 403 on the diff and impact', async () => {
    for (const [path, body, need] of ROUTES) {
      const refused = assertError(await call(path, body, noRole), 403, 'FORBIDDEN');
      assert.equal(refused['missing_permission'], need, path);
      const asExecutor = await call(path, body, executor.key);
      if (need === 'read') assertError(asExecutor, 403, 'FORBIDDEN', /"read"/);
      else assert.equal(asExecutor.status, 200, `${path} as executor: ${asExecutor.text}`);
      assert.equal((await call(path, body, viewer.key)).status, 200, `${path} as viewer`);
      assertError(await call(path, body), 401, 'UNAUTHENTICATED');
    }
  });
});

describe('tenant scoping (multi-tenancy on)', () => {
  let t: TenancyHarness;
  before(async () => {
    t = await makeTenancyHarness({ rulesDir: true });
    for (const id of ['alpha', 'beta']) assert.equal((await t.request('POST', '/api/v1/tenants', { id })).status, 201);
    await t.request('POST', '/api/v1/rulesets', codeRules('shared', 'A'), 'alpha');
    await t.request('POST', '/api/v1/rulesets', codeRules('shared', 'A2', '2.0.0'), 'alpha');
    await t.request('POST', '/api/v1/rulesets', codeRules('shared', 'B'), 'beta');
  });
  after(() => t.close());

  it("diff and impact read the caller tenant's ruleset and history only", async () => {
    const alpha = await t.request('POST', '/api/v1/rulesets/shared/diff', { from: 1, to: 'current' }, 'alpha');
    assert.deepEqual(
      alpha.body.changes.map((c: { path: string }) => c.path),
      ['config.version', 'steps.done.result.code', 'steps.done.result.message'],
    );
    const beta = await t.request('POST', '/api/v1/rulesets/shared/diff', { from: 1, to: 'current' }, 'beta');
    assert.equal(beta.status, 404, 'beta has no history of its own');
    assert.equal(beta.body.code, 'NOT_FOUND');
    assert.equal((await t.request('POST', '/api/v1/rulesets/shared/diff', { from: 'current', to: 'current' }, 'default')).status, 404);
    const impact = await t.request('POST', '/api/v1/rulesets/shared/impact', { candidate: codeRules('shared', 'B'), inputs: [{ x: 2 }] }, 'beta');
    assert.deepEqual(impact.body.transitions, [], "beta's current version answers B already");
    const fromAlpha = await t.request('POST', '/api/v1/rulesets/shared/impact', { candidate: codeRules('shared', 'B'), inputs: [{ x: 2 }] }, 'alpha');
    assert.deepEqual(fromAlpha.body.transitions, [{ from: 'A2', to: 'B', count: 1 }]);
  });

  it('drafts need a known tenant; an unknown one is 404 TENANT_NOT_FOUND on every new route', async () => {
    assert.equal((await t.request('POST', `${DRAFT}/validate`, { ruleset: codeRules('d', 'D') }, 'beta')).body.valid, true);
    const routes: Array<[string, unknown]> = [
      [`${DRAFT}/validate`, { ruleset: codeRules('d', 'D') }],
      [`${DRAFT}/execute`, { ruleset: codeRules('d', 'D'), input: { x: 1 } }],
      [`${DRAFT}/filter`, { ruleset: codeRules('d', 'D'), known_input: {}, target_results: ['D'] }],
      [`${DRAFT}/test`, { ruleset: codeRules('d', 'D') }],
      ['/api/v1/rulesets/shared/diff', { from: 'current', to: 'current' }],
      ['/api/v1/rulesets/shared/impact', { candidate: codeRules('shared', 'B'), inputs: [{ x: 2 }] }],
    ];
    for (const [path, body] of routes) {
      const r = await t.request('POST', path, body, 'nope');
      assert.equal(r.status, 404, path);
      assert.equal(r.body.code, 'TENANT_NOT_FOUND', path);
    }
  });
});
