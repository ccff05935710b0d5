/**
 * Keeps one object of the shape of node's tick objects (what `process.nextTick` queues) alive
 * for the life of the process.
 *
 * NOTE (speed, bench/NOTES.md "Eighth session"): V8 keeps the hidden classes of an object shape
 * only while some object has them (its map transitions are weak). A tick object lives for one
 * turn of the event loop, so a full garbage collection that finds none drops their classes and
 * the next tick objects get new ones; after a few such collections the sites of the object
 * literal in node's `nextTick` have seen too many classes and stay megamorphic, and from then on
 * every tick object is built by V8's runtime. node makes about six ticks per HTTP request (body
 * stream, response, socket write); measured on the bench machine, about two of three server
 * processes ended up in that state (13 of 20 starts), costing them about 2 us of CPU per request
 * and up to a fifth of their throughput; with one live object of the same shape, 0 of 6.
 *
 * The shape is node's own: the two async-id symbols (taken from a public `AsyncResource`, which
 * carries the same ones), then `callback` and `args`, written as an object literal exactly like
 * node's. With another node whose tick objects differ, the object is merely unused.
 */
import { AsyncResource } from 'node:async_hooks';

/** The kept object (one per process); exported for the test that compares its hidden class. */
let pinned: object | null = null;

/** Keeps the tick-object shape alive (idempotent); returns the object it keeps, or null when the symbols are not found. */
export function pinTickShape(): object | null {
  if (pinned !== null) return pinned;
  const symbols = Object.getOwnPropertySymbols(new AsyncResource('svc', { requireManualDestroy: true }));
  const asyncId = symbols.find((s) => s.description === 'async_id_symbol');
  const triggerAsyncId = symbols.find((s) => s.description === 'trigger_async_id_symbol');
  if (asyncId === undefined || triggerAsyncId === undefined) return null;
  // NOTE: the same literal form as node's tick object (lib/internal/process/task_queues.js), so
  // that it takes the same chain of hidden classes; small integers as node's async ids are.
  pinned = { [asyncId]: 0, [triggerAsyncId]: 0, callback: pinTickShape, args: undefined };
  return pinned;
}
