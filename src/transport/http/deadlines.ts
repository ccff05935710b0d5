/**
 * Body-read deadlines of the HTTP adapter with one timer for all pending reads.
 *
 * A per-request `setTimeout` / `clearTimeout` pair cost about 1.2 us of a 50 us request in the
 * profile (timer list insert, libuv clock, unref bookkeeping). Every read of one server has the
 * same timeout, so deadlines arrive in the order the reads start: a FIFO list with ONE timer
 * armed for the oldest pending deadline gives the same 408s at the same moments, for the cost of
 * linking one small node per request; a finished read unlinks its node at once.
 */

/** A pending read: `cancel()` when it finished first. */
export interface Deadline {
  cancel(): void;
}

/** A queued deadline: a node of the queue's doubly linked list. */
class Entry implements Deadline {
  prev: Entry | null = null;
  next: Entry | null = null;

  constructor(
    readonly at: number,
    /** Null once cancelled or fired. */
    public fire: (() => void) | null,
    private readonly queue: DeadlineQueue,
  ) {}

  cancel(): void {
    if (this.fire === null) return;
    this.fire = null;
    this.queue.unlink(this);
  }
}

/**
 * The deadlines of one timeout length, oldest first.
 * NOTE (speed, bench/NOTES.md): a finished read leaves the list at once (O(1) unlink), so nothing of
 * a request outlives it; an array of marked entries kept thousands of finished entries alive
 * across young-generation collections, which made every scavenge copy them.
 */
export class DeadlineQueue {
  private head: Entry | null = null;
  private tail: Entry | null = null;
  private size = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly onTimer = (): void => this.expire();

  constructor(
    private readonly timeoutMs: number,
    /** Monotonic clock in ms (injectable for tests). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Calls `fire` in `timeoutMs` unless the returned deadline is cancelled first. */
  add(fire: () => void): Deadline {
    const entry = new Entry(this.now() + this.timeoutMs, fire, this);
    const tail = this.tail;
    if (tail === null) this.head = entry;
    else {
      tail.next = entry;
      entry.prev = tail;
    }
    this.tail = entry;
    this.size++;
    // NOTE: an armed timer is due no later than this entry (same timeout, earlier start); when it
    // fires for an entry already gone it re-arms for the oldest one left.
    if (this.timer === null) this.arm(entry.at);
    return entry;
  }

  /** Deadlines still waiting. */
  get pending(): number {
    return this.size;
  }

  /** Removes `e` from the list (Entry.cancel and expiry). */
  unlink(e: Entry): void {
    const { prev, next } = e;
    if (prev === null) this.head = next;
    else prev.next = next;
    if (next === null) this.tail = prev;
    else next.prev = prev;
    e.prev = null;
    e.next = null;
    this.size--;
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.onTimer, Math.max(0, at - this.now()));
    // NOTE: the sockets of pending reads keep the process alive, not this timer.
    this.timer.unref();
  }

  /** Fires every due deadline, oldest first, then re-arms for the next one. */
  private expire(): void {
    this.timer = null;
    const now = this.now();
    let e = this.head;
    while (e !== null && e.at <= now) {
      const fire = e.fire;
      e.fire = null;
      this.unlink(e);
      if (fire !== null) fire();
      e = this.head;
    }
    if (this.head !== null && this.timer === null) this.arm(this.head.at);
  }
}
