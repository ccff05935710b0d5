/**
 * The kept tick-object shape (src/transport/tick-shape.ts): the object it keeps must have the
 * very hidden class of node's tick objects, or it keeps nothing of theirs alive. V8's own
 * predicate says whether it does, also after full garbage collections.
 */
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pinTickShape } from '../../../src/transport/tick-shape.js';

/** A tick object as `process.nextTick` makes it (taken through a short-lived init hook). */
function tickObject(): object {
  let found: object | null = null;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'TickObject' && found === null) found = resource as object;
    },
  }).enable();
  process.nextTick(() => {});
  hook.disable();
  assert.ok(found !== null, 'no tick object seen');
  return found;
}

test("the kept object has the hidden class of node's tick objects, before and after full collections", () => {
  setFlagsFromString('--allow-natives-syntax');
  setFlagsFromString('--expose-gc');
  const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
  const gc = runInNewContext('gc') as () => void;
  const kept = pinTickShape();
  assert.ok(kept !== null, 'the async-id symbols were not found on an AsyncResource');
  assert.equal(pinTickShape(), kept, 'one object per process');
  assert.equal(sameMap(kept, tickObject()), true);
  for (let i = 0; i < 3; i++) {
    gc();
    assert.equal(sameMap(kept, tickObject()), true, `after collection ${i + 1}`);
  }
  // A control: an object of another shape (the keys in another order) has another class.
  const [a, t] = Object.getOwnPropertySymbols(kept);
  assert.equal(sameMap({ callback: null, args: undefined, [a!]: 0, [t!]: 0 }, tickObject()), false);
});
