/**
 * Multi-tenancy with sync, real processes: tenants created, changed and deleted on a
 * writer reach readers through the broker (`TenantConfigChanged` on `{prefix}.tenants`, rules
 * on `{prefix}.{tenant}.{name}`), also a reader that starts later (bootstrap); and through the
 * file watcher on a shared rules dir (`tenants.json` and `tenants/<id>/`).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, ruleset, waitConnected, waitFor } from '../helpers/sync-cluster.js';

const MT = '--multi-tenancy-enabled';
const as = (tenant: string) => ({ 'x-tenant-id': tenant });

/** The tenant record an instance serves, or null (404). */
async function tenantOn(url: string, id: string): Promise<Record<string, unknown> | null> {
  const res = await http(url, 'GET', `/api/v1/tenants/${id}`);
  return res.status === 200 ? (res.body as Record<string, unknown>) : null;
}

/** The code a tenant's ruleset answers on an instance, or the error code. */
async function codeOn(url: string, tenant: string, name: string): Promise<string> {
  const res = await http(url, 'POST', `/api/v1/execute/${name}`, { input: {} }, as(tenant));
  return String(res.body?.code);
}

describe('tenants through the broker', () => {
  const cluster = new SyncCluster();
  let writer: ServerProcess;
  let reader: ServerProcess;
  let readerDir: string;

  before(async () => {
    await cluster.startNats();
    writer = await cluster.writer([MT, '--rules-dir', cluster.dir(), '--instance-id', 'mt-writer']);
    readerDir = cluster.dir();
    reader = await cluster.reader([MT, '--rules-dir', readerDir, '--instance-id', 'mt-reader', '--writer-addr', writer.url]);
    await Promise.all([writer, reader].map((p) => waitConnected(p)));
  });
  after(() => cluster.dispose());

  it('a tenant created on the writer appears on the reader, with its rules, isolated', async () => {
    assert.equal((await http(reader.url, 'GET', '/api/v1/rulesets', undefined, as('acme'))).body.code, 'TENANT_NOT_FOUND');
    assert.equal((await http(writer.url, 'POST', '/api/v1/tenants', { id: 'acme', qps_limit: 1000 })).status, 201);
    await waitFor('the tenant on the reader', async () => (await tenantOn(reader.url, 'acme'))?.['qps_limit'] === 1000);
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('pricing', '1.0.0', 'ACME'), as('acme'));
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('pricing', '1.0.0', 'DEFAULT'));
    await waitFor('the acme rule on the reader', async () => (await codeOn(reader.url, 'acme', 'pricing')) === 'ACME');
    await waitFor('the default rule on the reader', async () => (await codeOn(reader.url, 'default', 'pricing')) === 'DEFAULT');
    // The reader with its own rules dir keeps both on disk.
    assert.equal(JSON.parse(readFileSync(join(readerDir, 'tenants', 'acme', 'pricing.json'), 'utf8')).steps.t.result.code, 'ACME');
    await waitFor('tenants.json on the reader', () => existsSync(join(readerDir, 'tenants.json')));
    assert.deepEqual(
      JSON.parse(readFileSync(join(readerDir, 'tenants.json'), 'utf8')).tenants.map((t: { id: string }) => t.id),
      ['acme'],
    );
    // Tenant writes are refused on the reader.
    assert.equal((await http(reader.url, 'POST', '/api/v1/tenants', { id: 'nope' })).status, 409);
  });

  it('updates and deletions propagate; a disabled tenant is 404 on the reader', async () => {
    await http(writer.url, 'PUT', '/api/v1/tenants/acme', { enabled: false });
    await waitFor('disabled on the reader', async () => (await tenantOn(reader.url, 'acme'))?.['enabled'] === false);
    assert.equal(await codeOn(reader.url, 'acme', 'pricing'), 'TENANT_NOT_FOUND');
    await http(writer.url, 'PUT', '/api/v1/tenants/acme', { enabled: true });
    await http(writer.url, 'DELETE', '/api/v1/rulesets/pricing', undefined, as('acme'));
    assert.equal((await http(writer.url, 'DELETE', '/api/v1/tenants/acme')).status, 204);
    await waitFor('deleted on the reader', async () => (await tenantOn(reader.url, 'acme')) === null);
    assert.equal(await codeOn(reader.url, 'default', 'pricing'), 'DEFAULT', 'the default tenant kept its rule');
  });

  it('a reader that starts later learns every tenant (bootstrap), not only the last event', async () => {
    for (const id of ['t1', 't2', 't3']) await http(writer.url, 'POST', '/api/v1/tenants', { id, max_rulesets: 5 });
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('r', '1.0.0', 'T2'), as('t2'));
    await waitFor('t3 on the first reader', async () => (await tenantOn(reader.url, 't3')) !== null);
    const late = await cluster.reader([MT, '--instance-id', 'mt-late-reader']);
    await waitConnected(late);
    await waitFor('every tenant on the late reader', async () => {
      const ids = ((await http(late.url, 'GET', '/api/v1/tenants')).body as Array<{ id: string }>).map((t) => t.id);
      return JSON.stringify(ids) === JSON.stringify(['default', 't1', 't2', 't3']);
    });
    await waitFor('the t2 rule on the late reader', async () => (await codeOn(late.url, 't2', 'r')) === 'T2');
    assert.equal((await tenantOn(late.url, 't1'))?.['max_rulesets'], 5);
  });
});

describe('tenants through the file watcher on a shared rules dir', () => {
  const cluster = new SyncCluster();
  let dir: string;
  let writer: ServerProcess;
  let reader: ServerProcess;

  before(async () => {
    dir = cluster.dir('svc-mt-shared-');
    writer = await cluster.start([MT, '--role', 'writer', '--rules-dir', dir, '--watch-rules']);
    reader = await cluster.start([MT, '--role', 'reader', '--rules-dir', dir, '--watch-rules', '--writer-addr', writer.url]);
    await Promise.all([writer, reader].map((p) => p.waitForLog((l) => l['msg'] === 'rule watcher ready')));
  });
  after(() => cluster.dispose());

  it('a tenant created on the writer appears on the reader, and so do its rules under tenants/<id>/', async () => {
    assert.equal((await http(writer.url, 'POST', '/api/v1/tenants', { id: 'globex', name: 'Globex' })).status, 201);
    await waitFor('the tenant on the reader', async () => (await tenantOn(reader.url, 'globex'))?.['name'] === 'Globex', 15_000);
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('pricing', '1.0.0', 'GLOBEX'), as('globex'));
    await waitFor('the globex rule on the reader', async () => (await codeOn(reader.url, 'globex', 'pricing')) === 'GLOBEX', 15_000);
    assert.equal(await codeOn(reader.url, 'default', 'pricing'), 'NOT_FOUND', 'not in the default tenant');
  });

  it('later edits by hand in tenants/<id>/, a dir made after the watchers started, are reloaded by both', async () => {
    // tenants/ and tenants/globex/ did not exist when the watchers started (the previous test's
    // first write made them): edits there must still be seen, not wait for a restart.
    assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('quotes', '1.0.0', 'Q1'), as('globex'))).status, 200);
    await waitFor('quotes on the reader', async () => (await codeOn(reader.url, 'globex', 'quotes')) === 'Q1', 15_000);
    const file = join(dir, 'tenants', 'globex', 'quotes.json');
    writeFileSync(file, JSON.stringify(ruleset('quotes', '2.0.0', 'Q2_EDITED')));
    for (const p of [writer, reader]) {
      await waitFor(`the edit on ${p.url}`, async () => (await codeOn(p.url, 'globex', 'quotes')) === 'Q2_EDITED', 15_000);
    }
    writeFileSync(`${file}.tmp`, JSON.stringify(ruleset('quotes', '3.0.0', 'Q3_RENAMED')));
    renameSync(`${file}.tmp`, file);
    for (const p of [writer, reader]) {
      await waitFor(`the renamed-in file on ${p.url}`, async () => (await codeOn(p.url, 'globex', 'quotes')) === 'Q3_RENAMED', 15_000);
    }
  });

  it('a rule file put under tenants/<id>/ before the tenant exists is served once the tenant is created', async () => {
    mkdirSync(join(dir, 'tenants', 'hooli'), { recursive: true });
    writeFileSync(join(dir, 'tenants', 'hooli', 'pricing.json'), JSON.stringify(ruleset('pricing', '1.0.0', 'HOOLI')));
    assert.equal((await http(writer.url, 'POST', '/api/v1/tenants', { id: 'hooli' })).status, 201);
    for (const p of [writer, reader]) {
      await waitFor(`the hooli rule on ${p.url}`, async () => (await codeOn(p.url, 'hooli', 'pricing')) === 'HOOLI', 15_000);
    }
  });

  it('tenants.json edited by hand is reloaded by both; a broken file keeps the loaded tenants serving', async () => {
    const file = join(dir, 'tenants.json');
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.tenants.push({ id: 'initech', name: 'Initech', enabled: true, qps_limit: null, burst: null, execution_timeout_ms: null, max_rulesets: 1 });
    writeFileSync(file, JSON.stringify(doc));
    for (const p of [writer, reader]) {
      await waitFor(`initech on ${p.url}`, async () => (await tenantOn(p.url, 'initech'))?.['max_rulesets'] === 1, 15_000);
    }
    writeFileSync(file, '{"tenants": [');
    await reader.waitForLog((l) => /tenants\.json reload failed/.test(String(l['msg'])), 15_000);
    assert.equal((await tenantOn(reader.url, 'globex'))?.['name'], 'Globex', 'still served');
    assert.equal(await codeOn(reader.url, 'globex', 'pricing'), 'GLOBEX');
  });
});
