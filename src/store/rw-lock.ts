/**
 * An async readers-writer lock with FIFO fairness and an optional acquire timeout.
 *
 * The store takes the write lock for every write (so writes run one at a time, in call order)
 * and the readiness probe takes a read lock with a timeout (SPEC.md "GET /health": "a read lock
 * on the rule store can be taken within 2 seconds"). Hot-path reads (`get`, `list`) are
 * synchronous and never touch this lock.
 *
 * Fairness: waiters are granted strictly in arrival order, except that consecutive readers at
 * the head of the queue are granted together. A reader arriving while a writer waits queues
 * behind that writer, so writers are never starved.
 */

/** Releases a held lock. Calling it more than once is harmless. */
export type Release = () => void;

/** Rejection of an acquire that did not succeed within its timeout. */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
}

interface Waiter {
  readonly mode: 'read' | 'write';
  readonly grant: () => void;
}

/** Async readers-writer lock (see the module comment). */
export class RwLock {
  private readers = 0;
  private writer = false;
  private readonly queue: Waiter[] = [];

  /** @param label Prefix of timeout messages, e.g. `store` → "store lock not acquired within 2000 ms". */
  constructor(private readonly label = 'lock') {}

  /** Acquires a shared lock; rejects with `LockTimeoutError` after `timeoutMs` when given. */
  acquireRead(timeoutMs?: number): Promise<Release> {
    return this.acquire('read', timeoutMs);
  }

  /** Acquires the exclusive lock; rejects with `LockTimeoutError` after `timeoutMs` when given. */
  acquireWrite(timeoutMs?: number): Promise<Release> {
    return this.acquire('write', timeoutMs);
  }

  /** Runs `fn` under a shared lock. */
  async withRead<T>(fn: () => Promise<T> | T, timeoutMs?: number): Promise<T> {
    const release = await this.acquireRead(timeoutMs);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Runs `fn` under the exclusive lock. */
  async withWrite<T>(fn: () => Promise<T> | T, timeoutMs?: number): Promise<T> {
    const release = await this.acquireWrite(timeoutMs);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Current state, for tests and diagnostics. */
  state(): { readers: number; writer: boolean; waiting: number } {
    return { readers: this.readers, writer: this.writer, waiting: this.queue.length };
  }

  private acquire(mode: 'read' | 'write', timeoutMs?: number): Promise<Release> {
    return new Promise<Release>((resolve, reject) => {
      if (this.queue.length === 0 && this.compatible(mode)) {
        resolve(this.take(mode));
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        mode,
        grant: () => {
          if (timer !== undefined) clearTimeout(timer);
          resolve(this.take(mode));
        },
      };
      this.queue.push(waiter);
      if (timeoutMs !== undefined) {
        timer = setTimeout(
          () => {
            const at = this.queue.indexOf(waiter);
            if (at < 0) return; // already granted
            this.queue.splice(at, 1);
            reject(new LockTimeoutError(`${this.label} lock not acquired within ${timeoutMs} ms`));
            // A writer leaving the head of the queue may unblock the readers behind it.
            this.drain();
          },
          Math.max(0, timeoutMs),
        );
      }
    });
  }

  private compatible(mode: 'read' | 'write'): boolean {
    return mode === 'read' ? !this.writer : !this.writer && this.readers === 0;
  }

  private take(mode: 'read' | 'write'): Release {
    if (mode === 'read') this.readers++;
    else this.writer = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (mode === 'read') this.readers--;
      else this.writer = false;
      this.drain();
    };
  }

  private drain(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (!this.compatible(head.mode)) return;
      this.queue.shift();
      head.grant();
    }
  }
}
