/**
 * The one contract suite every `RuleStore` implementation must pass (architecture guide, point 6):
 * read, write and subscribe for all, plus one test per optional capability (history, files).
 * The subscribe capability is also checked for every collection in change-source-contract.ts.
 * Run by memory-store.test.ts and file-store.test.ts.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { RwLock } from '../../src/store/rw-lock.js';
import { StaleRead } from '../../src/store/own-files.js';
import type { RuleRecord, RuleStore, StoreEvent } from '../../src/store/types.js';
import { makeDoc, makeRecord, rec } from './store-fixtures.js';

/** What a store factory returns: the store and how to dispose of it. */
export interface StoreUnderTest {
  readonly store: RuleStore;
  readonly cleanup: () => Promise<void>;
}

/** Builds a fresh, empty store; `lock`, when given, must be the lock the store uses. */
export type MakeStore = (options: { lock?: RwLock }) => Promise<StoreUnderTest>;

const BAD_NAMES = ['../etc/passwd', '..', '.', '.hidden', 'a/b', 'a\\b', 'a\0b', 'x'.repeat(129), '', 'a b'];

/** The optional capabilities an implementation declares; their tests run only where declared. */
export interface Capabilities {
  readonly history: boolean;
  readonly files: boolean;
}

/** Registers the contract suite for one implementation with the capabilities it declares. */
export function runStoreContract(implementation: string, capabilities: Capabilities, makeStore: MakeStore): void {
  const withHistory = capabilities.history ? it : undefined;
  const withFiles = capabilities.files ? it : undefined;
  describe(`RuleStore contract: ${implementation}`, () => {
    let sut: StoreUnderTest;
    let store: RuleStore;
    let events: StoreEvent[];

    beforeEach(async () => {
      sut = await makeStore({});
      store = sut.store;
      events = [];
      store.subscribe((e) => events.push(e));
    });
    afterEach(async () => {
      await sut.cleanup();
    });

    it('starts empty', () => {
      assert.equal(store.get('default', 'a'), undefined);
      assert.deepEqual(store.list('default'), []);
      assert.equal(store.count(), 0);
      assert.equal(store.count('default'), 0);
      assert.deepEqual(store.tenants(), []);
    });

    it('put creates, then replaces, reporting the previous record', async () => {
      const v1 = rec('a', { version: '1' });
      const v2 = rec('a', { version: '2' });
      assert.deepEqual(await store.put(v1, { origin: 'api' }), { created: true });
      assert.equal(store.get('default', 'a'), v1);
      const outcome = await store.put(v2, { origin: 'api' });
      assert.equal(outcome.created, false);
      assert.equal(outcome.previous, v1);
      assert.equal(store.get('default', 'a'), v2);
      assert.equal(store.count(), 1);
    });

    it('beforeCreate runs under the lock for a new name only, with the tenant count; throwing stores nothing', async () => {
      const seen: number[] = [];
      await store.put(rec('a'), { origin: 'api', beforeCreate: (held) => seen.push(held) });
      await store.put(rec('b'), { origin: 'api', beforeCreate: (held) => seen.push(held) });
      await store.put(rec('a', { version: '2' }), { origin: 'api', beforeCreate: (held) => seen.push(held) });
      assert.deepEqual(seen, [0, 1], 'called for the two creates, not for the update');
      const before = events.length;
      const refuse = () => {
        throw new Error('limit reached');
      };
      await assert.rejects(store.put(rec('c'), { origin: 'api', beforeCreate: refuse }), /limit reached/);
      assert.equal(store.get('default', 'c'), undefined);
      assert.equal(store.count('default'), 2);
      assert.equal(events.length, before, 'no event for a refused create');
      // An update of an existing name never asks.
      await store.put(rec('b', { version: '2' }), { origin: 'api', beforeCreate: refuse });
      assert.equal(store.get('default', 'b')?.version, '2');
      // Concurrent creates each see the count left by the ones before them.
      const counts: number[] = [];
      await Promise.all(['x', 'y', 'z'].map((n) => store.put(rec(n), { origin: 'api', beforeCreate: (held) => counts.push(held) })));
      assert.deepEqual(counts, [2, 3, 4]);
    });

    it('exclusive: a put waits until the exclusive section ends, and the section sees the store unchanged', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let seenInside = -1;
      const section = store.exclusive(async () => {
        await gate;
        seenInside = store.count();
        return 'done';
      });
      const put = store.put(rec('a'), { origin: 'api' });
      let putSettled = false;
      void put.then(() => (putSettled = true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(putSettled, false, 'the put waits for the section');
      assert.equal(store.get('default', 'a'), undefined);
      release();
      assert.equal(await section, 'done');
      assert.equal(seenInside, 0);
      assert.deepEqual(await put, { created: true });
      assert.equal(store.count(), 1);
    });

    it('list is sorted by name (code point order), count and tenants follow the content', async () => {
      for (const name of ['c', 'a', 'B', 'b']) await store.put(rec(name), { origin: 'api' });
      await store.put(rec('z', { tenant: 't1' }), { origin: 'api' });
      assert.deepEqual(
        store.list('default').map((r) => r.name),
        ['B', 'a', 'b', 'c'],
      );
      assert.equal(store.count('default'), 4);
      assert.equal(store.count('t1'), 1);
      assert.equal(store.count('nope'), 0);
      assert.equal(store.count(), 5);
      assert.deepEqual(store.tenants(), ['default', 't1']);
      await store.delete('t1', 'z', { origin: 'api' });
      assert.deepEqual(store.tenants(), ['default'], 'a tenant without records is not listed');
    });

    it('delete returns the record and emits; deleting an absent record resolves undefined without event', async () => {
      const a = rec('a');
      await store.put(a, { origin: 'api' });
      events.length = 0;
      assert.equal(await store.delete('default', 'a', { origin: 'api' }), a);
      assert.equal(store.get('default', 'a'), undefined);
      assert.deepEqual(events, [{ kind: 'ruleset.delete', tenant: 'default', name: 'a', previous: a, origin: 'api' }]);
      assert.equal(await store.delete('default', 'a', { origin: 'api' }), undefined);
      assert.equal(await store.delete('other', 'never', { origin: 'api' }), undefined);
      assert.equal(events.length, 1);
    });

    it('emits put events after applying, with previous and origin', async () => {
      const a1 = rec('a', { code: 'ONE' });
      const a2 = rec('a', { code: 'TWO' });
      let seenInListener: RuleRecord | undefined;
      store.subscribe((e) => {
        if (e.kind === 'ruleset.put') seenInListener = store.get(e.record.tenant, e.record.name);
      });
      await store.put(a1, { origin: 'api' });
      await store.put(a2, { origin: 'sync' });
      assert.equal(seenInListener, a2, 'the change is visible when the event arrives');
      assert.deepEqual(events, [
        { kind: 'ruleset.put', record: a1, previous: undefined, origin: 'api' },
        { kind: 'ruleset.put', record: a2, previous: a1, origin: 'sync' },
      ]);
    });

    it('persist:false (watcher) applies to memory and emits like any write', async () => {
      const a = rec('a');
      await store.put(a, { origin: 'watch', persist: false });
      assert.equal(store.get('default', 'a'), a);
      assert.equal(await store.delete('default', 'a', { origin: 'watch', persist: false }), a);
      assert.deepEqual(
        events.map((e) => `${e.kind}:${e.origin}`),
        ['ruleset.put:watch', 'ruleset.delete:watch'],
      );
    });

    it('unsubscribe stops delivery; a throwing listener breaks neither the store nor other listeners', async () => {
      const seen: string[] = [];
      const unsubscribe = store.subscribe((e) => seen.push(e.kind));
      store.subscribe(() => {
        throw new Error('listener failure');
      });
      const after: string[] = [];
      store.subscribe((e) => after.push(e.kind));
      await store.put(rec('a'), { origin: 'api' });
      unsubscribe();
      unsubscribe();
      await store.put(rec('b'), { origin: 'api' });
      assert.deepEqual(seen, ['ruleset.put']);
      assert.deepEqual(after, ['ruleset.put', 'ruleset.put']);
      assert.equal(store.count(), 2);
    });

    it('serializes concurrent writes in call order', async () => {
      const records = Array.from({ length: 15 }, (_, i) => rec('a', { version: String(i), code: `C${i}` }));
      const outcomes = await Promise.all(records.map((r) => store.put(r, { origin: 'api' })));
      assert.equal(outcomes[0]!.created, true);
      for (let i = 1; i < records.length; i++) {
        assert.equal(outcomes[i]!.created, false);
        assert.equal(outcomes[i]!.previous, records[i - 1], `put ${i} replaced put ${i - 1}`);
      }
      assert.equal(store.get('default', 'a'), records.at(-1));
      assert.deepEqual(
        events.map((e) => (e.kind === 'ruleset.put' ? e.record.version : 'delete')),
        records.map((r) => r.version),
      );
    });

    it('serializes a mix of puts and deletes in call order', async () => {
      const a1 = rec('a', { code: 'ONE' });
      const a2 = rec('a', { code: 'TWO' });
      const [p1, d1, p2, d2] = await Promise.all([
        store.put(a1, { origin: 'api' }),
        store.delete('default', 'a', { origin: 'api' }),
        store.put(a2, { origin: 'api' }),
        store.delete('default', 'a', { origin: 'api' }),
      ]);
      assert.deepEqual(p1, { created: true });
      assert.equal(d1, a1);
      assert.deepEqual(p2, { created: true });
      assert.equal(d2, a2);
      assert.deepEqual(
        events.map((e) => e.kind),
        ['ruleset.put', 'ruleset.delete', 'ruleset.put', 'ruleset.delete'],
      );
      assert.equal(store.count(), 0);
    });

    it('rejects invalid names and tenant ids before doing anything', async () => {
      for (const bad of BAD_NAMES) {
        await assert.rejects(
          store.put(makeRecord({ ...makeDoc('ok'), config: { name: bad, entry_step: 'end' } }), { origin: 'api' }),
          /invalid ruleset name/,
          `put name ${JSON.stringify(bad)}`,
        );
        await assert.rejects(store.put(rec('ok', { tenant: bad }), { origin: 'api' }), /invalid tenant id/, `put tenant ${JSON.stringify(bad)}`);
        await assert.rejects(store.delete('default', bad, { origin: 'api' }), /invalid ruleset name/);
        await assert.rejects(store.delete(bad, 'ok', { origin: 'api' }), /invalid tenant id/);
        const history = store.history;
        if (history) {
          await assert.rejects(history.versions('default', bad), /invalid ruleset name/);
          await assert.rejects(history.versions(bad, 'ok'), /invalid tenant id/);
          await assert.rejects(history.readVersion('default', bad, 1), /invalid ruleset name/);
          await assert.rejects(history.readVersion(bad, 'ok', 1), /invalid tenant id/);
        }
        if (store.files) {
          await assert.rejects(store.files.current('default', bad), /invalid ruleset name/);
          await assert.rejects(store.files.current(bad, 'ok'), /invalid tenant id/);
        }
        assert.equal(store.get('default', bad), undefined, 'reads never throw');
        assert.deepEqual(store.list(bad), []);
      }
      assert.equal(store.count(), 0);
      assert.deepEqual(events, []);
    });

    it('rejects a record whose config.name differs from its name', async () => {
      const record = { ...rec('a'), doc: makeDoc('b') };
      await assert.rejects(store.put(record, { origin: 'api' }), /differs from config.name/);
      assert.equal(store.count(), 0);
    });

    it('accepts names at the edge of the rule (128 chars, dots and dashes inside)', async () => {
      for (const name of ['x'.repeat(128), 'a.b-c_d', '_x', '-x', 'a..b']) {
        await store.put(rec(name), { origin: 'api' });
        assert.equal(store.get('default', name)?.name, name);
      }
    });

    it('isolates tenants: the same name in two tenants are two records', async () => {
      const d = rec('same', { code: 'DEFAULT' });
      const t = rec('same', { code: 'T1', tenant: 't1' });
      await store.put(d, { origin: 'api' });
      assert.equal(store.get('t1', 'same'), undefined);
      assert.deepEqual((await store.put(t, { origin: 'api' })).created, true);
      assert.equal(store.get('default', 'same'), d);
      assert.equal(store.get('t1', 'same'), t);
      assert.deepEqual(store.list('t1'), [t]);
      await store.delete('t1', 'same', { origin: 'api' });
      assert.equal(store.get('default', 'same'), d);
      assert.equal(store.get('t1', 'same'), undefined);
    });

    it('exposes exactly the capabilities it declares', () => {
      assert.equal(store.history !== undefined, capabilities.history, 'history');
      assert.equal(store.files !== undefined, capabilities.files, 'files');
    });

    withHistory?.('history capability: versions of an unknown ruleset are empty and readVersion is undefined', async () => {
      const history = store.history!;
      assert.deepEqual(await history.versions('default', 'nope'), []);
      assert.equal(await history.readVersion('default', 'nope', 1), undefined);
    });

    withHistory?.('history capability: a replaced record becomes version 1 of the history', async () => {
      const history = store.history!;
      await store.put(rec('a', { version: '1', code: 'ONE' }), { origin: 'api' });
      await store.put(rec('a', { version: '2', code: 'TWO' }), { origin: 'api' });
      assert.deepEqual(
        (await history.versions('default', 'a')).map((v) => [v.seq, v.version]),
        [[1, '1']],
      );
      assert.equal((await history.readVersion('default', 'a', 1))?.['config']?.version, '1');
    });

    withFiles?.('files capability: the written file is reported as own, a missing one as none', async () => {
      const files = store.files!;
      assert.equal((await files.current('default', 'a')).kind, 'none');
      await store.put(rec('a'), { origin: 'api' });
      const current = await files.current('default', 'a');
      assert.equal(current.kind, 'own');
      assert.deepEqual(
        (await files.scan()).map((f) => [f.tenant, f.name]),
        [['default', 'a']],
      );
      await store.delete('default', 'a', { origin: 'api' });
      assert.equal((await files.current('default', 'a')).kind, 'none');
    });

    withFiles?.('files capability: a watcher change whose read an own change overtook is refused (StaleRead) and changes nothing', async () => {
      const files = store.files!;
      const before = (await files.current('default', 'a')).token;
      await store.put(rec('a', { version: '1', code: 'API' }), { origin: 'api' });
      await assert.rejects(store.put(rec('a', { version: '0', code: 'OLD' }), { origin: 'watch', persist: false, expect: before }), StaleRead);
      assert.equal(store.get('default', 'a')?.version, '1');
      const fresh = (await files.current('default', 'a')).token;
      await store.delete('default', 'a', { origin: 'api' });
      await assert.rejects(store.put(rec('a', { version: '1', code: 'API' }), { origin: 'watch', persist: false, expect: fresh }), StaleRead);
      assert.equal(store.get('default', 'a'), undefined, 'the delete stays');
      const none = (await files.current('default', 'a')).token;
      await store.put(rec('a', { version: '2', code: 'API' }), { origin: 'api' });
      await assert.rejects(store.delete('default', 'a', { origin: 'watch', persist: false, expect: none }), StaleRead);
      assert.equal(store.get('default', 'a')?.version, '2', 'the create stays');
      const current = (await files.current('default', 'a')).token;
      await store.put(rec('a', { version: '3', code: 'HAND' }), { origin: 'watch', persist: false, expect: current });
      assert.equal(store.get('default', 'a')?.version, '3', 'a current token applies');
    });

    it('capabilities and rulesDir agree: files exactly when there is a rules dir', () => {
      assert.equal(store.files !== undefined, store.rulesDir !== null);
      if (store.files) assert.equal(store.files.rulesDir, store.rulesDir);
    });

    it('probe resolves on a healthy store', async () => {
      await store.probe(2000);
    });
  });

  describe(`RuleStore contract: ${implementation} (lock)`, () => {
    it('probe rejects when the lock cannot be taken in time, and succeeds once it is free', async () => {
      const lock = new RwLock('store');
      const { store, cleanup } = await makeStore({ lock });
      try {
        const release = await lock.acquireWrite();
        await assert.rejects(store.probe(30), { message: 'store lock not acquired within 30 ms' });
        // A write queued behind the held lock is not applied until the lock is free.
        const pending = store.put(rec('a'), { origin: 'api' });
        await new Promise((r) => setImmediate(r));
        assert.equal(store.get('default', 'a'), undefined);
        release();
        await pending;
        assert.ok(store.get('default', 'a'));
        await store.probe(2000);
      } finally {
        await cleanup();
      }
    });
  });
}
