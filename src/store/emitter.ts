/**
 * Event fan-out, the one emitter of the code base (rule store, tenant registry): listeners are
 * called synchronously, in subscription order, after a change is applied. A throwing listener
 * is reported to `onListenerError` and ignored so it can never break a write or starve the
 * listeners after it.
 */
import type { Logger } from '../log.js';
import type { StoreEvent } from './types.js';

/** The part of the logger the store uses. */
export type StoreLogger = Pick<Logger, 'warn'>;

/** Called with the error of a throwing listener and the event it was given. */
export type ListenerErrorHandler<E> = (err: unknown, event: E) => void;

/** Listener registry with safe emission. */
export class Emitter<E> {
  private readonly listeners = new Set<(event: E) => void>();

  constructor(private readonly onListenerError?: ListenerErrorHandler<E>) {}

  /** Adds a listener; returns its unsubscribe function (idempotent). */
  subscribe(listener: (event: E) => void): () => void {
    // Wrap so that subscribing the same function twice gives two independent subscriptions.
    const entry = (event: E): void => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Calls every listener with `event`; errors go to `onListenerError` and are swallowed. */
  emit(event: E): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError?.(err, event);
      }
    }
  }
}

/** The emitter of a rule store: a throwing listener is logged as `store listener threw; ignored`. */
export function storeEmitter(logger: StoreLogger | undefined): Emitter<StoreEvent> {
  // NOTE: the log line keeps its `event: put|delete` field (log lines are part of the interface).
  return new Emitter<StoreEvent>((err, event) =>
    logger?.warn({ err, event: event.kind === 'ruleset.put' ? 'put' : 'delete' }, 'store listener threw; ignored'),
  );
}
