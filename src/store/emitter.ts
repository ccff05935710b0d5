/**
 * Event fan-out of the stores: listeners are called synchronously, in subscription order, after
 * a change is applied. A throwing listener is logged and ignored so it can never break a write
 * or starve the listeners after it.
 */
import type { StoreEvent, StoreListener } from './types.js';

/** The part of a logger (pino-compatible) the store uses. */
export interface StoreLogger {
  warn(obj: object, msg: string): void;
}

/** Listener registry with safe emission. */
export class StoreEmitter {
  private readonly listeners = new Set<StoreListener>();

  constructor(private readonly logger?: StoreLogger) {}

  /** Adds a listener; returns its unsubscribe function (idempotent). */
  subscribe(listener: StoreListener): () => void {
    // Wrap so that subscribing the same function twice gives two independent subscriptions.
    const entry: StoreListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Calls every listener with `event`; errors are logged and swallowed. */
  emit(event: StoreEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.logger?.warn({ err, event: event.type }, 'store listener threw; ignored');
      }
    }
  }
}
