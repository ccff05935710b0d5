/** Runs the store contract suite against `MemoryStore`, plus its memory-only specifics. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { RuleStore } from '../../src/store/types.js';
import { rec } from './store-fixtures.js';
import { runStoreContract } from './store-contract.js';

runStoreContract('MemoryStore', { history: false, files: false }, async ({ lock }) => ({
  store: new MemoryStore(lock ? { lock } : {}),
  cleanup: async () => undefined,
}));

describe('MemoryStore specifics', () => {
  it('keeps no history and has no files: neither capability is present, even after updates', async () => {
    const store: RuleStore = new MemoryStore();
    await store.put(rec('a', { version: '1' }), { origin: 'api' });
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    assert.equal(store.history, undefined);
    assert.equal(store.files, undefined);
    assert.equal(store.rulesDir, null);
    assert.deepEqual(await store.load(() => assert.fail('nothing to load')), { loaded: 0, skipped: [] });
  });
});
