/**
 * Shadow runs across a fleet with real processes (EXTENSIONS.md 4 "Shadow runs", docs/changing-rules.md):
 * a writer and two readers over this test's own nats-server. A shadow put on the writer
 * (`ShadowPut` on `{prefix}.{tenant}.shadow.{name}`) shadows the traffic sent to the readers,
 * each counting its own; readers refuse shadow writes (409 READ_ONLY); a reader started later
 * catches up; promote on the writer makes the candidate live on the readers and ends the shadow
 * there (`RulePut`, then `ShadowDeleted`); delete ends it everywhere.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, logsWith, ruleset, waitConnected, waitFor } from '../helpers/sync-cluster.js';

const API = '/api/v1';
const LIVE = ruleset('pricing', '1.0.0', 'OLD');
const CANDIDATE = ruleset('pricing', '2.0.0', 'NEW');

async function exec(url: string): Promise<string> {
  const res = await http(url, 'POST', `${API}/execute/pricing`, { input: { n: 1 } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.code as string;
}

async function shadowOn(url: string): Promise<{ status: number; body: any }> {
  return http(url, 'GET', `${API}/rulesets/pricing/shadow`);
}

describe('shadow runs through the broker', () => {
  const cluster = new SyncCluster();
  let writer: ServerProcess;
  let r1: ServerProcess;
  let r2: ServerProcess;
  let r1Dir: string;

  before(async () => {
    await cluster.startNats();
    writer = await cluster.writer(['--rules-dir', cluster.dir(), '--instance-id', 'shadow-writer']);
    r1Dir = cluster.dir();
    [r1, r2] = await Promise.all([
      cluster.reader(['--instance-id', 'shadow-r1', '--writer-addr', writer.url, '--rules-dir', r1Dir]),
      cluster.reader(['--instance-id', 'shadow-r2']),
    ]);
    await Promise.all([writer, r1, r2].map((p) => waitConnected(p)));
    assert.equal((await http(writer.url, 'POST', `${API}/rulesets`, LIVE)).status, 200);
    for (const r of [r1, r2]) await waitFor('the ruleset on the reader', async () => (await exec(r.url).catch(() => '')) === 'OLD');
  });
  after(() => cluster.dispose());

  it('a shadow put on the writer shadows the traffic sent to the readers; each reader counts its own', async () => {
    const put = await http(writer.url, 'PUT', `${API}/rulesets/pricing/shadow`, { candidate: CANDIDATE, sample_rate: 100 });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    for (const r of [r1, r2]) await waitFor('the shadow on the reader', async () => (await shadowOn(r.url)).status === 200);
    for (let i = 0; i < 3; i++) assert.equal(await exec(r1.url), 'OLD', 'the live answer is unchanged');
    assert.equal(await exec(r2.url), 'OLD');
    const s1 = await waitFor('3 runs on r1', async () => {
      const s = (await shadowOn(r1.url)).body;
      return s.executed === 3 ? s : undefined;
    });
    assert.equal(s1.disagreed, 3);
    assert.deepEqual(s1.transitions, [{ from: 'OLD', to: 'NEW', count: 3 }]);
    assert.equal(s1.candidate_version, '2.0.0');
    await waitFor('1 run on r2', async () => (await shadowOn(r2.url)).body.executed === 1);
    // Per instance: the writer served no traffic.
    assert.equal((await shadowOn(writer.url)).body.executed, 0);
    const applied = logsWith(r1, 'sync event applied').filter((l) => l['type'] === 'ShadowPut');
    assert.ok(applied.length >= 1 && applied.every((l) => l['kind'] === 'shadow'), JSON.stringify(applied));
    const health = (await http(r1.url, 'GET', '/health')).body;
    assert.ok(health.sync.broker.applied_by_kind.shadow >= 1, JSON.stringify(health.sync.broker));
    // The reader with its own rules dir keeps the shadow on disk.
    assert.ok(existsSync(join(r1Dir, 'shadows', 'pricing.json')));
  });

  it('readers refuse shadow writes with 409 READ_ONLY', async () => {
    for (const [method, path, body] of [
      ['PUT', `${API}/rulesets/pricing/shadow`, { candidate: CANDIDATE, sample_rate: 50 }],
      ['DELETE', `${API}/rulesets/pricing/shadow`, undefined],
      ['POST', `${API}/rulesets/pricing/shadow/promote`, undefined],
    ] as const) {
      const res = await http(r2.url, method, path, body);
      assert.equal(res.status, 409, `${method} ${path}`);
      assert.equal(res.body.code, 'READ_ONLY');
    }
  });

  it('a reader started later catches up with the shadow', async () => {
    const late = await cluster.reader(['--instance-id', 'shadow-late']);
    await waitConnected(late);
    await waitFor('the shadow on the late reader', async () => (await shadowOn(late.url)).status === 200);
    assert.equal(await exec(late.url), 'OLD');
    await waitFor('1 run on the late reader', async () => (await shadowOn(late.url)).body.executed === 1);
    await cluster.stop(late);
  });

  it('a replaced shadow (new sample rate) reaches the readers', async () => {
    assert.equal((await http(writer.url, 'PUT', `${API}/rulesets/pricing/shadow`, { candidate: CANDIDATE, sample_rate: 50 })).status, 200);
    for (const r of [r1, r2]) await waitFor('the new rate on the reader', async () => (await shadowOn(r.url)).body.sample_rate === 50);
    for (let i = 0; i < 4; i++) await exec(r2.url);
    await waitFor('2 of 4 runs on r2', async () => (await shadowOn(r2.url)).body.executed === 2);
  });

  it('promote on the writer makes the candidate live on the readers and ends the shadow there', async () => {
    const res = await http(writer.url, 'POST', `${API}/rulesets/pricing/shadow/promote`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const r of [r1, r2]) {
      await waitFor('the promoted version on the reader', async () => (await exec(r.url)) === 'NEW');
      await waitFor('the shadow ended on the reader', async () => (await shadowOn(r.url)).status === 404);
    }
    assert.equal(existsSync(join(r1Dir, 'shadows', 'pricing.json')), false);
  });

  it('DELETE on the writer ends the shadow on the readers', async () => {
    assert.equal((await http(writer.url, 'PUT', `${API}/rulesets/pricing/shadow`, { candidate: LIVE, sample_rate: 100 })).status, 200);
    for (const r of [r1, r2]) await waitFor('the shadow on the reader', async () => (await shadowOn(r.url)).status === 200);
    assert.equal((await http(writer.url, 'DELETE', `${API}/rulesets/pricing/shadow`)).status, 204);
    for (const r of [r1, r2]) await waitFor('the shadow gone from the reader', async () => (await shadowOn(r.url)).status === 404);
  });
});

describe('shadow runs through a shared rules dir (file watcher, no broker)', () => {
  const cluster = new SyncCluster();
  let dir: string;
  let writer: ServerProcess;
  let reader: ServerProcess;

  before(async () => {
    dir = cluster.dir('svc-shadow-shared-');
    writer = await cluster.start(['--role', 'writer', '--rules-dir', dir, '--watch-rules']);
    reader = await cluster.start(['--role', 'reader', '--rules-dir', dir, '--watch-rules', '--writer-addr', writer.url]);
    await Promise.all([writer, reader].map((p) => p.waitForLog((l) => l['msg'] === 'rule watcher ready')));
    assert.equal((await http(writer.url, 'POST', `${API}/rulesets`, LIVE)).status, 200);
    await waitFor('the ruleset on the reader', async () => (await exec(reader.url).catch(() => '')) === 'OLD', 10_000);
  });
  after(() => cluster.dispose());

  it('a shadow put on the writer shadows the reader’s traffic; DELETE ends it there; the writer skips its own file', async () => {
    const put = await http(writer.url, 'PUT', `${API}/rulesets/pricing/shadow`, { candidate: CANDIDATE, sample_rate: 100 });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    await waitFor('the shadow on the reader', async () => (await shadowOn(reader.url)).status === 200, 10_000);
    for (let i = 0; i < 2; i++) assert.equal(await exec(reader.url), 'OLD', 'the live answer is unchanged');
    await waitFor('the reader runs the candidate', async () => (await shadowOn(reader.url)).body.executed > 0, 10_000);
    assert.ok(logsWith(reader, 'shadow reloaded from file').length >= 1);
    assert.equal((await http(writer.url, 'DELETE', `${API}/rulesets/pricing/shadow`)).status, 204);
    await waitFor('the shadow ends on the reader', async () => (await shadowOn(reader.url)).status === 404, 10_000);
    assert.equal(await exec(reader.url), 'OLD');
    const w = (await http(writer.url, 'GET', '/health')).body.sync.watcher;
    assert.ok(w.shadows.own_writes_skipped >= 1, `the writer does not reload its own shadow writes: ${JSON.stringify(w)}`);
    assert.equal(w.shadows.reloaded, 0);
  });

  it('a broken shadow file is logged and skipped; the loaded shadow keeps running', async () => {
    assert.equal((await http(writer.url, 'PUT', `${API}/rulesets/pricing/shadow`, { candidate: CANDIDATE, sample_rate: 100 })).status, 200);
    await waitFor('the shadow on the reader', async () => (await shadowOn(reader.url)).status === 200, 10_000);
    writeFileSync(join(dir, 'shadows', 'pricing.json'), '{"candidate": ');
    await waitFor(
      'the warning',
      () => logsWith(reader, 'shadow file skipped; the loaded version keeps serving').some((l) => String(l['path']).endsWith('pricing.json')),
      10_000,
    );
    assert.equal((await shadowOn(reader.url)).status, 200);
  });
});
