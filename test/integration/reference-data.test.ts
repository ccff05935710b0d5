/**
 * Reference data through the real built server over HTTP (EXTENSIONS.md 3 "Reference data"):
 * `PUT/GET/DELETE /api/v1/data/:name` and `GET /api/v1/data`, persisted as
 * `<rules-dir>/data/<name>.json` and read back after a restart, `--max-data-bytes`, the audit
 * lines, executions / batch / eval / tests / filter reading `@name.path` (a missing dataset reads
 * as null; strict mode: 500 naming it), a change taking effect for the next execution, tenant
 * scoping (multi-tenancy: `<rules-dir>/tenants/<id>/data/`), and a reader refusing writes.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const API = '/api/v1';

const RULES = {
  config: { name: 'screen', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      branches: [{ condition: 'user.country in @high_risk.countries', next_step: 'review' }],
      default_next: 'ok',
    },
    review: { type: 'terminal', result: { code: 'REVIEW' }, output: { limit: '@limits.review' } },
    ok: { type: 'terminal', result: { code: 'OK' }, output: { limit: '@limits.standard' } },
  },
};

const STRICT = {
  config: { name: 'strict_screen', entry_step: 'check', field_missing: 'strict' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.country in @blocked.countries', next_step: 'no' }], default_next: 'yes' },
    no: { type: 'terminal', result: { code: 'NO' } },
    yes: { type: 'terminal', result: { code: 'YES' } },
  },
};

/** Waits until `pred` holds (audit lines reach stdout once per event-loop turn); fails after 5 s. */
async function until(pred: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !pred(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(pred(), 'condition not met within 5 s');
}

const HIGH_RISK = { countries: ['KP', 'IR'] };
const LIMITS = { review: 100, standard: 5000 };

describe('reference data with --rules-dir', () => {
  const dir = tempDir('svc-data-');
  let server: ServerProcess;

  before(async () => {
    server = await startServer(['--rules-dir', dir.path, '--max-data-bytes', '200']);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets`, RULES)).status, 200);
    assert.equal((await http(server.url, 'POST', `${API}/rulesets`, STRICT)).status, 200);
  });

  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('a missing dataset reads as null before any PUT (lenient)', async () => {
    const res = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'IR' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.code, 'OK');
    assert.deepEqual(res.body.output, { limit: null });
  });

  it('strict mode: a missing dataset is an evaluation error naming it', async () => {
    const res = await http(server.url, 'POST', `${API}/execute/strict_screen`, { input: { user: { country: 'IR' } } });
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.match(res.body.error as string, /dataset '@blocked' does not exist/);
  });

  it('PUT creates, then updates; GET answers the document; the list has names, sizes, versions', async () => {
    const created = await http(server.url, 'PUT', `${API}/data/high_risk`, { countries: ['KP'] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.status, 'created');
    const updated = await http(server.url, 'PUT', `${API}/data/high_risk`, HIGH_RISK);
    assert.equal(updated.body.status, 'updated');
    assert.equal(updated.body.bytes, JSON.stringify(HIGH_RISK).length);
    assert.match(updated.body.version as string, /^[0-9a-f]{16}$/);
    assert.notEqual(updated.body.version, created.body.version);
    assert.equal((await http(server.url, 'PUT', `${API}/data/limits`, LIMITS)).status, 200);

    const got = await http(server.url, 'GET', `${API}/data/high_risk`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, HIGH_RISK);
    const list = await http(server.url, 'GET', `${API}/data`);
    assert.deepEqual(list.body, [
      { name: 'high_risk', bytes: updated.body.bytes, version: updated.body.version },
      { name: 'limits', bytes: JSON.stringify(LIMITS).length, version: list.body[1].version },
    ]);
    await until(() => server.stdout.filter((l) => l['event'] === 'data_put' && l['data_name'] === 'high_risk').length === 2);
    const audit = server.stdout.filter((l) => l['event'] === 'data_put' && l['data_name'] === 'high_risk');
    assert.deepEqual(
      audit.map((l) => l['created']),
      [true, false],
    );
    assert.equal(audit[1]!['version'], updated.body.version);
  });

  it('executions, batches, tests and /eval read @name.path', async () => {
    const hit = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'IR' } }, trace: true });
    assert.equal(hit.body.code, 'REVIEW', JSON.stringify(hit.body));
    assert.deepEqual(hit.body.output, { limit: 100 });
    const batch = await http(server.url, 'POST', `${API}/execute/screen/batch`, { inputs: [{ user: { country: 'KP' } }, { user: { country: 'FR' } }] });
    assert.deepEqual(
      batch.body.results.map((r: { code: string }) => r.code),
      ['REVIEW', 'OK'],
    );
    const evald = await http(server.url, 'POST', `${API}/eval`, { expression: 'c in @high_risk.countries', context: { c: 'KP' } });
    assert.deepEqual(evald.body, { result: true, parsed: '(in c @high_risk.countries)' });
    const tests = await http(server.url, 'POST', `${API}/rulesets/screen/test`, {
      tests: [{ name: 'ir', input: { user: { country: 'IR' } }, expect: { code: 'REVIEW' } }],
    });
    assert.equal(tests.status, 200, JSON.stringify(tests.body));
    assert.equal(tests.body.passed, 1, JSON.stringify(tests.body));
  });

  it('a filter treats the dataset as known values, and follows a change', async () => {
    const first = await http(server.url, 'POST', `${API}/rulesets/screen/filter`, {
      known_input: {},
      target_results: ['REVIEW'],
      field_mapping: { 'user.country': 'country' },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const text = JSON.stringify(first.body);
    assert.match(text, /KP/);
    assert.match(text, /IR/);
    assert.equal((await http(server.url, 'PUT', `${API}/data/high_risk`, { countries: ['CU'] })).status, 200);
    const second = JSON.stringify(
      (
        await http(server.url, 'POST', `${API}/rulesets/screen/filter`, {
          known_input: {},
          target_results: ['REVIEW'],
          field_mapping: { 'user.country': 'country' },
        })
      ).body,
    );
    assert.match(second, /CU/);
    assert.doesNotMatch(second, /KP/);
    const now = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'CU' } } });
    assert.equal(now.body.code, 'REVIEW', 'the next execution reads the new content');
    assert.equal((await http(server.url, 'PUT', `${API}/data/high_risk`, HIGH_RISK)).status, 200);
  });

  it('is persisted atomically as <rules-dir>/data/<name>.json', () => {
    const path = join(dir.path, 'data', 'high_risk.json');
    assert.ok(existsSync(path));
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), HIGH_RISK);
  });

  it('--max-data-bytes: a larger dataset is 413 PAYLOAD_TOO_LARGE naming the flag, and nothing changes', async () => {
    const big = { countries: Array.from({ length: 60 }, (_, i) => `C${i}`) };
    const res = await http(server.url, 'PUT', `${API}/data/high_risk`, big);
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
    assert.match(res.body.error as string, /--max-data-bytes/);
    assert.deepEqual((await http(server.url, 'GET', `${API}/data/high_risk`)).body, HIGH_RISK);
  });

  it('bad names are 400, unknown datasets 404, a missing body 400', async () => {
    assert.equal((await http(server.url, 'PUT', `${API}/data/${encodeURIComponent('.hidden')}`, {})).status, 400);
    const missing = await http(server.url, 'GET', `${API}/data/none`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
    assert.equal((await http(server.url, 'DELETE', `${API}/data/none`)).status, 404);
    const nobody = await http(server.url, 'PUT', `${API}/data/x`);
    assert.equal(nobody.status, 400, JSON.stringify(nobody.body));
  });

  it('survives a restart: the files are read back at start', async () => {
    await server.stop();
    server = await startServer(['--rules-dir', dir.path, '--max-data-bytes', '200']);
    assert.deepEqual((await http(server.url, 'GET', `${API}/data/high_risk`)).body, HIGH_RISK);
    const res = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'KP' } } });
    assert.equal(res.body.code, 'REVIEW');
    assert.deepEqual(res.body.output, { limit: 100 });
  });

  it('DELETE removes the dataset and its file; it then reads as null', async () => {
    const res = await http(server.url, 'DELETE', `${API}/data/limits`);
    assert.equal(res.status, 204);
    assert.ok(!existsSync(join(dir.path, 'data', 'limits.json')));
    await until(() => server.stdout.some((l) => l['event'] === 'data_deleted' && l['data_name'] === 'limits'));
    const exec = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'FR' } } });
    assert.deepEqual(exec.body.output, { limit: null });
    await server.stop();
    server = await startServer(['--rules-dir', dir.path]);
    assert.equal((await http(server.url, 'GET', `${API}/data/limits`)).status, 404);
  });
});

describe('reference data per tenant (multi-tenancy)', () => {
  const dir = tempDir('svc-data-mt-');
  let server: ServerProcess;
  const as = (tenant: string) => ({ 'X-Tenant-ID': tenant });

  before(async () => {
    server = await startServer(['--multi-tenancy-enabled', '--rules-dir', dir.path]);
    for (const id of ['alpha', 'beta']) assert.equal((await http(server.url, 'POST', `${API}/tenants`, { id })).status, 201);
    for (const id of ['alpha', 'beta']) assert.equal((await http(server.url, 'POST', `${API}/rulesets`, RULES, as(id))).status, 200);
  });

  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('each tenant reads its own datasets; files live in its tenant directory', async () => {
    assert.equal((await http(server.url, 'PUT', `${API}/data/high_risk`, { countries: ['KP'] }, as('alpha'))).status, 200);
    assert.equal((await http(server.url, 'PUT', `${API}/data/high_risk`, { countries: ['FR'] }, as('beta'))).status, 200);
    const a = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'KP' } } }, as('alpha'));
    const b = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'KP' } } }, as('beta'));
    assert.equal(a.body.code, 'REVIEW');
    assert.equal(b.body.code, 'OK');
    assert.deepEqual((await http(server.url, 'GET', `${API}/data`, undefined, as('default'))).body, []);
    assert.equal((await http(server.url, 'GET', `${API}/data/high_risk`, undefined, as('default'))).status, 404);
    assert.deepEqual(JSON.parse(readFileSync(join(dir.path, 'tenants', 'alpha', 'data', 'high_risk.json'), 'utf8')), { countries: ['KP'] });
    await until(() => server.stdout.some((l) => l['event'] === 'data_put' && l['tenant_id'] === 'beta'));
    const unknown = await http(server.url, 'PUT', `${API}/data/x`, {}, as('nobody'));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'TENANT_NOT_FOUND');
  });

  it("reloads every tenant's datasets at start", async () => {
    await server.stop();
    server = await startServer(['--multi-tenancy-enabled', '--rules-dir', dir.path]);
    assert.deepEqual((await http(server.url, 'GET', `${API}/data/high_risk`, undefined, as('beta'))).body, { countries: ['FR'] });
    const b = await http(server.url, 'POST', `${API}/execute/screen`, { input: { user: { country: 'FR' } } }, as('beta'));
    assert.equal(b.body.code, 'REVIEW');
  });
});

describe('reference data on a reader', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer(['--role', 'reader']);
  });
  after(async () => {
    await server?.stop();
  });

  it('refuses writes with 409 READ_ONLY and answers reads', async () => {
    const put = await http(server.url, 'PUT', `${API}/data/x`, {});
    assert.equal(put.status, 409, JSON.stringify(put.body));
    assert.equal(put.body.code, 'READ_ONLY');
    assert.equal((await http(server.url, 'DELETE', `${API}/data/x`)).status, 409);
    assert.deepEqual((await http(server.url, 'GET', `${API}/data`)).body, []);
  });
});
