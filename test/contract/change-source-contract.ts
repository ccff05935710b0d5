/**
 * The contract of the subscribe capability (`ChangeSource`, store/change.ts), shared by every
 * collection that emits the one change stream: the rule stores (memory, file) and the tenants
 * collection (the tenant registry, with or without `tenants.json`). Each implementation says how
 * to make one change; the suite checks delivery, order, origin and listener isolation.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Change, ChangeListener } from '../../src/store/change.js';
import type { Origin } from '../../src/store/types.js';

/** A collection under test: its change source and how to change it. */
export interface ChangeSourceUnderTest<C extends Change> {
  subscribe(listener: ChangeListener<C>): () => void;
  /** Creates or replaces item `i` (origin `origin`); resolves once applied. */
  put(i: number, origin: Origin): Promise<void>;
  /** Deletes item `i`; resolves once applied. */
  remove(i: number, origin: Origin): Promise<void>;
  /** The key of item `i` as the change names it (`name` of a ruleset, `id` of a tenant). */
  readonly keyOf: (change: C) => string;
  /** The key of item `i`. */
  readonly key: (i: number) => string;
  /** Whether item `i` is visible in the collection now. */
  has(i: number): boolean;
  cleanup(): Promise<void>;
}

/** Registers the subscribe-capability contract for one implementation. */
export function runChangeSourceContract<C extends Change>(implementation: string, make: () => Promise<ChangeSourceUnderTest<C>>): void {
  describe(`ChangeSource contract: ${implementation}`, () => {
    let sut: ChangeSourceUnderTest<C>;
    beforeEach(async () => {
      sut = await make();
    });
    afterEach(() => sut.cleanup());

    it('emits one change per write, in order, after it is applied, with its origin', async () => {
      const seen: Array<[string, string, Origin, boolean]> = [];
      sut.subscribe((c) => {
        const i = Number(sut.keyOf(c).replace(/^\D+/, ''));
        seen.push([c.kind, sut.keyOf(c), c.origin, sut.has(i)]);
      });
      await sut.put(1, 'api');
      await sut.put(2, 'sync');
      await sut.remove(1, 'watch');
      assert.deepEqual(
        seen.map(([kind, key, origin, visible]) => [kind.split('.')[1], key, origin, visible]),
        [
          ['put', sut.key(1), 'api', true],
          ['put', sut.key(2), 'sync', true],
          ['delete', sut.key(1), 'watch', false],
        ],
      );
    });

    it('unsubscribe stops delivery (idempotent); one function subscribed twice is delivered twice', async () => {
      const seen: string[] = [];
      const listener: ChangeListener<C> = (c) => seen.push(sut.keyOf(c));
      const off = sut.subscribe(listener);
      sut.subscribe(listener);
      await sut.put(1, 'api');
      off();
      off();
      await sut.put(2, 'api');
      assert.deepEqual(seen, [sut.key(1), sut.key(1), sut.key(2)]);
    });

    it('a throwing listener breaks neither the write nor the listeners after it', async () => {
      const after: string[] = [];
      sut.subscribe(() => {
        throw new Error('listener failure');
      });
      sut.subscribe((c) => after.push(sut.keyOf(c)));
      await sut.put(1, 'api');
      assert.equal(sut.has(1), true);
      assert.deepEqual(after, [sut.key(1)]);
    });
  });
}
