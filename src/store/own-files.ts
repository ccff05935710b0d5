/**
 * The one record of this instance's own changes to the files of a rules dir (rule files,
 * datasets, shadows), shared by the stores that write them and read by the file watcher. It
 * answers the watcher's two questions (docs/decisions.md "Echo on the watcher"):
 *
 * - **Echo** (SPEC.md 8: "A writer suppresses reloading of its own writes"): does the file hold
 *   exactly what this instance last wrote there? Each store records a marker of what it wrote
 *   (the fingerprint the atomic write returned for a rule file, the content version for a
 *   dataset or a shadow); the watcher compares the file it finds with it and skips its own write
 *   without applying it.
 * - **Stale read**: the watcher reads a file, and this instance's own change of that file (an API
 *   put or delete) lands before what was read is applied. The read is then older than the change
 *   and must not be put over it (the file already holds the change, whose own event is skipped as
 *   echo, so memory and disk would stay apart). The watcher takes a `FileToken` before it looks
 *   at the file; the store checks it under the lock that serializes its writes
 *   (`isCurrent`) and refuses a change whose token an own change of the file has overtaken
 *   (`StaleRead`); the watcher then reads the file again. A read is never dropped: what it
 *   finds the second time (the own change, or a hand edit made since) is applied or skipped as
 *   echo like any other.
 *
 * Each path's entry holds a sequence number drawn from one counter, bumped at every own change
 * that lands (or fails: conservative, a read then is retried). Entries expire after `ttlMs`; the
 * counter's value at the last prune (`floor`) stands for every path without an entry, so a token
 * can never match again after a change of its path, pruned or not.
 */

/** What the watcher holds while it reads a file: the path and its change count at the start. */
export interface FileToken {
  readonly path: string;
  readonly seq: number;
}

/** Thrown by a store (under its write lock) for a watcher change whose token is no longer current. */
export class StaleRead extends Error {
  constructor(readonly path: string) {
    super(`stale read of ${path}: this instance changed the file since`);
    this.name = 'StaleRead';
  }
}

/** Options of `OwnFiles`. */
export interface OwnFilesOptions {
  /** Clock in ms (expiry). */
  readonly clock: { now(): number };
  /** How long an own change is remembered. Default 60 s (far above the watcher's 200 ms debounce). */
  readonly ttlMs?: number;
}

interface Entry {
  readonly seq: number;
  /** What this instance's last change left in the file; undefined after a removal. */
  readonly marker: string | undefined;
  readonly expiresAt: number;
}

/** See the module comment. */
export class OwnFiles {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private counter = 0;
  private floor = 0;
  private prunedAt = 0;

  constructor(private readonly options: OwnFilesOptions) {
    this.ttlMs = options.ttlMs ?? 60_000;
  }

  /** Number of remembered paths (expired ones included until the next prune). */
  get size(): number {
    return this.entries.size;
  }

  /** Taken by the watcher before it looks at `path`. */
  token(path: string): FileToken {
    return { path, seq: this.entries.get(path)?.seq ?? this.floor };
  }

  /** True when no own change of the token's path has landed (or failed) since it was taken. */
  isCurrent(token: FileToken): boolean {
    return (this.entries.get(token.path)?.seq ?? this.floor) === token.seq;
  }

  /** Throws `StaleRead` unless `token` (when given) is current. Stores call it under their write lock. */
  check(token: FileToken | undefined): void {
    if (token !== undefined && !this.isCurrent(token)) throw new StaleRead(token.path);
  }

  /** An own change of `path` landed: the file now holds what `marker` names (undefined: it was removed). */
  changed(path: string, marker: string | undefined): void {
    this.prune();
    this.entries.set(path, { seq: ++this.counter, marker, expiresAt: this.options.clock.now() + this.ttlMs });
  }

  /** An own change of `path` failed: the file may or may not have changed; a read begun before is stale. */
  failed(path: string): void {
    const previous = this.entries.get(path);
    this.entries.set(path, { seq: ++this.counter, marker: previous?.marker, expiresAt: this.options.clock.now() + this.ttlMs });
  }

  /** True when `path` holds what this instance's last, unexpired change of it wrote (`marker`). */
  isOwn(path: string, marker: string): boolean {
    const entry = this.entries.get(path);
    return entry !== undefined && entry.marker === marker && entry.expiresAt > this.options.clock.now();
  }

  /** Drops expired entries, at most once per half TTL (keeps `changed` O(1) on average). */
  private prune(): void {
    const now = this.options.clock.now();
    if (now - this.prunedAt < this.ttlMs / 2) return;
    this.prunedAt = now;
    let dropped = false;
    for (const [path, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(path);
        dropped = true;
      }
    }
    // NOTE: a token of a dropped path was taken at its seq or earlier; the floor is at least that
    // seq, and equal only when nothing changed anywhere since, so no stale token becomes current.
    if (dropped) this.floor = this.counter;
  }
}
