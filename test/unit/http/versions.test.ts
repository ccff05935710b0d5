/** HTTP routes: GET /rulesets/:name/versions and POST /rulesets/:name/rollback (SPEC.md "Versioning"). */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ageRules, assertError, makeHarness, type Harness } from './harness.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('versions and rollback (memory store)', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
    await h.request('POST', '/api/v1/rulesets', ageRules('mem', { version: '1.0.0' }));
    await h.request('POST', '/api/v1/rulesets', ageRules('mem', { version: '2.0.0' }));
  });
  after(() => h.close());

  it('versions is {name, current_version, versions: []}', async () => {
    const r = await h.request('GET', '/api/v1/rulesets/mem/versions');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { name: 'mem', current_version: '2.0.0', versions: [] });
  });

  it('rollback is 400 saying rollback is not available in memory-only mode; nothing changes', async () => {
    assertError(await h.request('POST', '/api/v1/rulesets/mem/rollback', { seq: 1 }), 400, 'BAD_REQUEST', /rollback is not available in memory-only mode/);
    const list = await h.request('GET', '/api/v1/rulesets');
    assert.equal(list.body[0].version, '2.0.0');
  });

  it('unknown ruleset: versions and rollback are 404', async () => {
    assertError(await h.request('GET', '/api/v1/rulesets/nope/versions'), 404, 'NOT_FOUND');
    assertError(await h.request('POST', '/api/v1/rulesets/nope/rollback', { seq: 1 }), 404, 'NOT_FOUND');
  });
});

describe('versions and rollback (file store)', () => {
  let h: Harness;
  let dir: string;
  before(async () => {
    h = await makeHarness({ rulesDir: true });
    dir = h.rulesDir as string;
    for (const [version, adultCode] of [
      ['1.0.0', 'ADULT_V1'],
      ['2.0.0', 'ADULT_V2'],
      ['3.0.0', 'ADULT_V3'],
    ] as const) {
      const r = await h.request('POST', '/api/v1/rulesets', ageRules('loan', { version, adultCode }));
      assert.equal(r.status, 200, r.text);
    }
  });
  after(() => h.close());

  const adultCode = async () => (await h.request('POST', '/api/v1/execute/loan', { input: { user: { age: 50 } } })).body.code;

  it('versions lists the replaced versions newest first as {seq, version, timestamp}', async () => {
    const r = await h.request('GET', '/api/v1/rulesets/loan/versions');
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'loan');
    assert.equal(r.body.current_version, '3.0.0');
    assert.deepEqual(
      r.body.versions.map((v: { seq: number; version: string }) => [v.seq, v.version]),
      [
        [2, '2.0.0'],
        [1, '1.0.0'],
      ],
    );
    for (const v of r.body.versions) {
      assert.deepEqual(Object.keys(v).sort(), ['seq', 'timestamp', 'version']);
      assert.match(v.timestamp, ISO_UTC);
      assert.ok(Math.abs(Date.parse(v.timestamp) - Date.now()) < 5 * 60_000, 'timestamp is about now');
    }
  });

  it('rollback restores that content, adds a history entry and keeps the replaced one', async () => {
    assert.equal(await adultCode(), 'ADULT_V3');
    const r = await h.request('POST', '/api/v1/rulesets/loan/rollback', { seq: 1 });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'rolled_back', name: 'loan', from_version: '3.0.0', to_version: '1.0.0' });
    // the running ruleset and GET both have the v1 content
    assert.equal(await adultCode(), 'ADULT_V1');
    const got = await h.request('GET', '/api/v1/rulesets/loan');
    assert.deepEqual(got.body, ageRules('loan', { version: '1.0.0', adultCode: 'ADULT_V1' }));
    // on disk too
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'loan.json'), 'utf8')), ageRules('loan', { version: '1.0.0', adultCode: 'ADULT_V1' }));
    // history: the replaced 3.0.0 is a new entry, the restored seq 1 stays
    const v = await h.request('GET', '/api/v1/rulesets/loan/versions');
    assert.equal(v.body.current_version, '1.0.0');
    assert.deepEqual(
      v.body.versions.map((e: { seq: number; version: string }) => [e.seq, e.version]),
      [
        [3, '3.0.0'],
        [2, '2.0.0'],
        [1, '1.0.0'],
      ],
    );
    const files = readdirSync(join(dir, '.versions', 'loan')).sort();
    assert.equal(files.length, 3);
    for (const f of files) assert.match(f, /^v[123]_\d+\.json$/);
    // and the replaced content can be rolled back to again
    const again = await h.request('POST', '/api/v1/rulesets/loan/rollback', { seq: 3 });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { status: 'rolled_back', name: 'loan', from_version: '1.0.0', to_version: '3.0.0' });
    assert.equal(await adultCode(), 'ADULT_V3');
  });

  it('an unknown seq is 404 and changes nothing', async () => {
    const before = (await h.request('GET', '/api/v1/rulesets/loan')).body;
    assertError(await h.request('POST', '/api/v1/rulesets/loan/rollback', { seq: 99 }), 404, 'NOT_FOUND', /99/);
    assert.deepEqual((await h.request('GET', '/api/v1/rulesets/loan')).body, before);
  });

  it('a bad seq is 400 (missing, string, zero, negative, fraction, body not an object)', async () => {
    for (const body of [{}, { seq: '1' }, { seq: 0 }, { seq: -1 }, { seq: 1.5 }, { seq: null }]) {
      assertError(await h.request('POST', '/api/v1/rulesets/loan/rollback', body), 400, 'BAD_REQUEST', /seq/);
    }
    assertError(await h.request('POST', '/api/v1/rulesets/loan/rollback', [1]), 400, 'BAD_REQUEST');
  });

  it('unknown ruleset is 404 for versions and rollback', async () => {
    assertError(await h.request('GET', '/api/v1/rulesets/nope/versions'), 404, 'NOT_FOUND');
    assertError(await h.request('POST', '/api/v1/rulesets/nope/rollback', { seq: 1 }), 404, 'NOT_FOUND');
  });
});
