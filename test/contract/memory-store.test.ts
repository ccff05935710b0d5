/** Runs the store contract suite against `MemoryStore`, plus its memory-only specifics. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '../../src/store/memory-store.js';
import { rec } from './store-fixtures.js';
import { runStoreContract } from './store-contract.js';

runStoreContract('MemoryStore', async ({ lock }) => ({
  store: new MemoryStore(lock ? { lock } : {}),
  cleanup: async () => undefined,
}));

describe('MemoryStore specifics', () => {
  it('keeps no history: versions are empty and readVersion is undefined after updates', async () => {
    const store = new MemoryStore();
    await store.put(rec('a', { version: '1' }), { origin: 'api' });
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    assert.deepEqual(await store.versions('default', 'a'), []);
    assert.equal(await store.readVersion('default', 'a', 1), undefined);
    assert.equal(store.mode, 'memory');
    assert.equal(store.rulesDir, null);
    assert.deepEqual(await store.load(() => assert.fail('nothing to load')), { loaded: 0, skipped: [] });
  });
});
