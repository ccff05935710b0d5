/**
 * Shared rules dir with the file watcher only: a writer and readers on one
 * directory, no broker. Rules written by the writer, files edited by hand and bursts of file
 * changes reach the readers; broken files are skipped while the old version keeps serving; a
 * writer does not reload its own writes; polling works where native events do not.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, logsWith, ruleset, sameState, servedVersion, waitFor } from '../helpers/sync-cluster.js';

describe('file watcher on a shared rules dir', () => {
  const cluster = new SyncCluster();
  let dir: string;
  let writer: ServerProcess;
  let reader: ServerProcess;

  before(async () => {
    dir = cluster.dir('svc-shared-');
    writer = await cluster.start(['--role', 'writer', '--rules-dir', dir, '--watch-rules']);
    reader = await cluster.start(['--role', 'reader', '--rules-dir', dir, '--watch-rules', '--writer-addr', writer.url]);
    await Promise.all([writer, reader].map((p) => p.waitForLog((l) => l['msg'] === 'rule watcher ready')));
  });
  after(() => cluster.dispose());

  const file = (name: string) => join(dir, `${name}.json`);

  it('serves a rule the writer wrote, soon after the write', async (t) => {
    const started = Date.now();
    assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('shared', '1.0.0'))).status, 200);
    await waitFor('the reader to serve the new rule', async () => (await servedVersion(reader.url, 'shared')) === '1.0.0', 10_000, 10);
    t.diagnostic(`writer to reader through the watcher: ${Date.now() - started} ms`);
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('shared', '1.1.0'));
    await waitFor('the update', async () => (await servedVersion(reader.url, 'shared')) === '1.1.0', 10_000, 10);
    await http(writer.url, 'DELETE', '/api/v1/rulesets/shared');
    await waitFor('the delete', async () => (await servedVersion(reader.url, 'shared')) === null, 10_000, 10);
    const health = (await http(reader.url, 'GET', '/health')).body;
    assert.equal(health.sync.mode, 'watcher');
    assert.equal(health.sync.connected, null);
    assert.equal(health.sync.watcher.mode, 'native');
    assert.match(health.sync.last_event_at, /^\d{4}-/);
  });

  it('does not reload the writer’s own writes on the writer', async () => {
    const watcher = async () => (await http(writer.url, 'GET', '/health')).body.sync.watcher;
    const before = await watcher();
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('own', '1.0.0'));
    await waitFor('the reader', async () => (await servedVersion(reader.url, 'own')) === '1.0.0');
    await waitFor('the writer watcher to handle its own write', async () => (await watcher()).batches > before.batches);
    const now = await watcher();
    assert.ok(now.own_writes_skipped > before.own_writes_skipped, 'recognised as its own write');
    assert.equal(now.reloaded, before.reloaded, 'not reloaded');
    assert.deepEqual(
      logsWith(writer, 'rule reloaded from file').filter((l) => l['name'] === 'own'),
      [],
    );
  });

  it('reloads a rule file edited by hand, on the reader and on the writer', async () => {
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('manual', '1.0.0'));
    await waitFor('the reader', async () => (await servedVersion(reader.url, 'manual')) === '1.0.0');
    writeFileSync(file('manual'), JSON.stringify(ruleset('manual', 'edited-by-hand')));
    for (const p of [reader, writer]) {
      await waitFor(`${p.url} to reload the edit`, async () => (await servedVersion(p.url, 'manual')) === 'edited-by-hand');
    }
  });

  it('skips a broken file and keeps serving the loaded version', async () => {
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('fragile', '1.0.0'));
    await waitFor('the reader', async () => (await servedVersion(reader.url, 'fragile')) === '1.0.0');
    writeFileSync(file('fragile'), '{"config": {"name": "fragile"');
    await waitFor('the warning', () =>
      logsWith(reader, 'rule file skipped; the loaded version keeps serving').some((l) => String(l['path']).endsWith('fragile.json')),
    );
    assert.equal(await servedVersion(reader.url, 'fragile'), '1.0.0');
    assert.equal((await http(reader.url, 'POST', '/api/v1/execute/fragile', { input: {} })).body.code, 'OK');
  });

  it('applies a burst of 50 file changes in batched reloads (usually one, at most three)', async () => {
    for (let i = 0; i < 50; i++) await http(writer.url, 'POST', '/api/v1/rulesets', ruleset(`burst${i}`, 'b1'));
    await waitFor('the 50 rules on the reader', async () => (await servedVersion(reader.url, 'burst49')) === 'b1');
    await waitFor('the reader to settle', async () => {
      const before = reader.logs.length;
      await new Promise((r) => setTimeout(r, 600));
      return reader.logs.length === before;
    });
    const mark = reader.logs.length;
    for (let i = 0; i < 50; i++) writeFileSync(file(`burst${i}`), JSON.stringify(ruleset(`burst${i}`, 'b2')));
    await waitFor('the burst on the reader', async () => {
      for (let i = 0; i < 50; i += 7) if ((await servedVersion(reader.url, `burst${i}`)) !== 'b2') return false;
      return (await servedVersion(reader.url, 'burst49')) === 'b2';
    });
    const reloads = reader.logs.slice(mark).filter((l) => l['msg'] === 'rule files reloaded');
    // NOTE: batched means far fewer reloads than files (without the debounce: 50). Usually one;
    // on a loaded machine the 50 writes can span more than the 200 ms debounce and split the
    // burst in two or three, so the count is bounded rather than pinned (seen: 5 + 45).
    assert.ok(reloads.length >= 1 && reloads.length <= 3, `a few batched reloads, got ${JSON.stringify(reloads)}`);
    const total = (key: string): number => reloads.reduce((n, l) => n + Number(l[key]), 0);
    assert.equal(total('batch'), 50);
    assert.equal(total('applied'), 50);
    // The writer's own watcher reloads the same hand edits on its own schedule: wait for it too.
    await waitFor('the writer and the reader to serve the same rules', () => sameState(writer.url, reader.url), 15_000, 100);
  });

  it('polls when polling is forced', async () => {
    const poller = await cluster.start(['--role', 'reader', '--rules-dir', dir, '--watch-rules', '--watch-poll', '--watch-poll-interval-ms', '100']);
    // /health shows the sync state from the server's first answer, also while the watcher starts.
    const early = (await http(poller.url, 'GET', '/health')).body;
    assert.equal(early.sync?.mode, 'watcher', `sync block from the first answer: ${JSON.stringify(early)}`);
    assert.equal(early.sync.watcher?.mode, 'polling');
    await poller.waitForLog((l) => l['msg'] === 'rule watcher ready');
    const health = (await http(poller.url, 'GET', '/health')).body;
    assert.equal(health.sync.watcher.mode, 'polling');
    assert.equal(health.sync.watcher.ready, true);
    writeFileSync(file('polled'), JSON.stringify(ruleset('polled', 'p1')));
    await waitFor('the polling reader to load the new file', async () => (await servedVersion(poller.url, 'polled')) === 'p1');
    writeFileSync(file('polled'), JSON.stringify(ruleset('polled', 'p2')));
    await waitFor('the polling reader to reload it', async () => (await servedVersion(poller.url, 'polled')) === 'p2');
  });
});
