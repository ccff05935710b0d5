/**
 * Broker outage: the broker stops in the middle of 100 writes and comes back; the
 * writer keeps serving writes meanwhile, buffers the events in order and publishes them on
 * reconnect, and every reader (memory-only and persistent) converges to the writer's exact state.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { http } from '../helpers/server-process.js';
import { SyncCluster, ruleset, sameState, waitConnected, waitFor } from '../helpers/sync-cluster.js';

describe('broker sync: broker down during 100 writes', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('every reader converges to the writer state after the broker comes back', async () => {
    const nats = await cluster.startNats();
    const writer = await cluster.writer(['--rules-dir', cluster.dir(), '--instance-id', 'outage-writer']);
    const readers = await Promise.all([
      cluster.reader(['--instance-id', 'outage-mem']),
      cluster.reader(['--instance-id', 'outage-disk', '--rules-dir', cluster.dir()]),
    ]);
    await Promise.all([writer, ...readers].map((p) => waitConnected(p)));

    // 100 writes: creates, updates (some keep their label), deletes and rollbacks.
    const write = async (i: number) => {
      const name = `r${i % 17}`;
      let res;
      if (i % 10 === 7) {
        res = await http(writer.url, 'DELETE', `/api/v1/rulesets/${name}`);
        assert.ok(res.status === 204 || res.status === 404, `write ${i}: ${res.status}`);
      } else if (i % 10 === 9) {
        const versions = await http(writer.url, 'GET', `/api/v1/rulesets/${name}/versions`);
        const seq = versions.status === 200 ? versions.body.versions.at(-1)?.seq : undefined;
        if (seq !== undefined) {
          res = await http(writer.url, 'POST', `/api/v1/rulesets/${name}/rollback`, { seq });
          assert.equal(res.status, 200, `write ${i} (rollback): ${JSON.stringify(res.body)}`);
        }
      } else {
        const version = i % 5 === 0 ? 'same-label' : `v${i}`;
        res = await http(writer.url, 'POST', '/api/v1/rulesets', ruleset(name, version, `C${i}`));
        assert.equal(res.status, 200, `write ${i}: ${JSON.stringify(res.body)}`);
      }
    };

    for (let i = 0; i < 30; i++) await write(i);
    await nats.stop();
    await waitFor('the writer to notice the outage', async () => (await http(writer.url, 'GET', '/health')).body.sync.connected === false);
    for (let i = 30; i < 80; i++) await write(i);
    const during = (await http(writer.url, 'GET', '/health')).body.sync;
    assert.equal(during.connected, false);
    assert.ok(during.broker.pending > 0, 'events are buffered while the broker is down');
    for (const r of readers) assert.equal((await http(r.url, 'GET', '/api/v1/rulesets')).status, 200, 'readers keep serving');

    await nats.restart();
    for (let i = 80; i < 100; i++) await write(i);

    for (const r of readers) {
      await waitFor(`${r.url} to converge`, () => sameState(writer.url, r.url), 60_000, 200);
    }
    const after = (await http(writer.url, 'GET', '/health')).body.sync;
    assert.equal(after.connected, true);
    assert.equal(after.broker.pending, 0);
  });
});
