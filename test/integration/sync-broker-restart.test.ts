/**
 * Reader restarts and bootstrap. A memory-only reader restarted with the same
 * instance id while writes continue catches up, loses nothing, applies nothing twice, and
 * still serves the rules it held before that nobody touched while it was down. A reader
 * started fresh serves every live rule, including rules whose last change is older than
 * anything the stream still holds (the test gives the stream a 2 s max age, so every original
 * event expires; only the writer's re-publication keeps them reachable).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadNatsApi } from '../../src/sync/nats-api.js';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, logsWith, ruleset, sameState, servedVersion, waitConnected, waitFor } from '../helpers/sync-cluster.js';

describe('broker sync: reader restart while writes continue', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('catches up without losing or re-applying anything, and keeps the untouched rules', async () => {
    await cluster.startNats();
    const writer = await cluster.writer(['--rules-dir', cluster.dir(), '--instance-id', 'restart-writer']);
    let reader = await cluster.reader(['--instance-id', 'restart-reader']);
    await Promise.all([waitConnected(writer), waitConnected(reader)]);

    for (let i = 0; i < 20; i++) await http(writer.url, 'POST', '/api/v1/rulesets', ruleset(`keep${i}`, 'k1'));
    await waitFor('the untouched rules on the reader', async () => (await servedVersion(reader.url, 'keep19')) === 'k1');

    // Writes go on in the background for the whole test: hot rules change, new ones come and go.
    let n = 0;
    let stopWrites = false;
    const writes = (async () => {
      while (!stopWrites) {
        n++;
        const res =
          n % 6 === 5
            ? await http(writer.url, 'DELETE', `/api/v1/rulesets/new${n - 3}`)
            : await http(writer.url, 'POST', '/api/v1/rulesets', ruleset(n % 2 ? `hot${n % 4}` : `new${n}`, `w${n}`));
        assert.ok(res.status === 200 || res.status === 204 || res.status === 404, `write ${n}: ${res.status}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    await waitFor('some writes', () => n > 20);
    await cluster.stop(reader);
    const whileDown = n;
    await waitFor('writes while the reader is down', () => n > whileDown + 40);
    reader = await cluster.reader(['--instance-id', 'restart-reader']);
    await waitFor('more writes after the restart', () => n > whileDown + 80);
    stopWrites = true;
    await writes;

    await waitFor('the restarted reader to converge', () => sameState(writer.url, reader.url), 60_000, 200);
    for (let i = 0; i < 20; i++) assert.equal(await servedVersion(reader.url, `keep${i}`), 'k1', `keep${i} still served`);

    assert.ok(logsWith(reader, 'resuming the durable sync consumer from its last ack').length >= 1, 'the durable consumer resumed');
    const applied = logsWith(reader, 'sync event applied').map((l) => `${l['type']} ${l['name']} ${l['version'] ?? ''} ${l['seq']}`);
    const perVersion = new Map<string, number>();
    for (const l of logsWith(reader, 'sync event applied')) {
      const key = `${l['type']} ${l['name']} ${l['version'] ?? ''}`;
      perVersion.set(key, (perVersion.get(key) ?? 0) + 1);
    }
    const twice = [...perVersion].filter(([k, count]) => count > 1 && k.startsWith('RulePut'));
    assert.deepEqual(twice, [], `no ruleset version applied twice (applied: ${applied.join(', ')})`);
    const seqs = logsWith(reader, 'sync event applied').map((l) => l['seq']);
    assert.equal(new Set(seqs).size, seqs.length, 'no stream message applied twice');
  });
});

describe('broker sync: a fresh reader and rules older than the stream', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('serves every live rule of the writer, whatever the age of its last change', async () => {
    const nats = await cluster.startNats();
    // The test creates the stream itself with a 2 s max age; the writer keeps an existing stream's limits.
    const loaded = await loadNatsApi();
    assert.ok(loaded.ok, `the NATS client must be installed for broker sync: ${loaded.ok ? '' : loaded.reason}`);
    const nc = await loaded.api.connect({ servers: nats.url });
    const jsm = await loaded.api.jetstreamManager(nc);
    await jsm.streams.add({ name: 'svc-rules', subjects: ['svc.rules.>'], max_age: 2_000_000_000 });

    const writer = await cluster.writer(['--rules-dir', cluster.dir(), '--instance-id', 'aging-writer', '--republish-interval-secs', '1']);
    await waitConnected(writer);
    for (const name of ['ancient', 'old']) await http(writer.url, 'POST', '/api/v1/rulesets', ruleset(name, 'from-long-ago'));
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('gone'));
    await http(writer.url, 'DELETE', '/api/v1/rulesets/gone');
    const firstSeq = (await jsm.streams.info('svc-rules')).state.last_seq;

    // Let every original event expire.
    await waitFor('the original events to expire', async () => (await jsm.streams.info('svc-rules')).state.first_seq > firstSeq, 30_000, 200);
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('recent', 'now'));

    let fresh: ServerProcess | undefined;
    try {
      fresh = await cluster.reader(['--instance-id', `fresh-${Date.now()}`]);
      await waitFor('the fresh reader to serve the writer state', () => sameState(writer.url, fresh!.url), 30_000, 200);
      assert.equal(await servedVersion(fresh.url, 'ancient'), 'from-long-ago');
      assert.equal(await servedVersion(fresh.url, 'old'), 'from-long-ago');
      assert.equal(await servedVersion(fresh.url, 'gone'), null);
      assert.equal(await servedVersion(fresh.url, 'recent'), 'now');
    } finally {
      await nc.close();
    }
  });
});
