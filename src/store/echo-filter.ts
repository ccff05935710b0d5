/**
 * Echo suppression of the file watcher (SPEC.md 8: "A writer suppresses reloading of its own
 * writes"), owned by the file store: when it writes a rule file it records the file's
 * fingerprint (inode, size, mtime), as returned by the atomic write itself (no extra lookup
 * under the write lock). When the watcher later asks for that path with the same fingerprint,
 * the change is its own echo and is not reloaded. A hand edit, or another
 * process's write, changes the fingerprint (an atomic write even gets a new inode), so it is
 * reloaded. Entries expire after `ttlMs` so the map stays small.
 */
import type { FileFingerprint } from './atomic-write.js';

export type { FileFingerprint } from './atomic-write.js';

/** Options of `EchoFilter`. */
export interface EchoFilterOptions {
  /** Clock in ms (expiry). */
  readonly clock: { now(): number };
  /** How long an own write is remembered. Default 60 s (far above the 200 ms debounce). */
  readonly ttlMs?: number;
}

/** Remembers the fingerprints of the files this instance wrote (see the module comment). */
export class EchoFilter {
  private readonly own = new Map<string, { key: string; expiresAt: number }>();
  private readonly ttlMs: number;
  private prunedAt = 0;

  constructor(private readonly options: EchoFilterOptions) {
    this.ttlMs = options.ttlMs ?? 60_000;
  }

  /** Number of remembered writes (expired ones included until the next prune). */
  get size(): number {
    return this.own.size;
  }

  /** Records that this instance just wrote `path` with fingerprint `fp`. */
  remember(path: string, fp: FileFingerprint): void {
    this.prune();
    this.own.set(path, { key: fingerprintKey(fp), expiresAt: this.options.clock.now() + this.ttlMs });
  }

  /** Records that this instance removed `path`. */
  forget(path: string): void {
    this.own.delete(path);
  }

  /** True when `path` with fingerprint `fp` is this instance's own, unexpired write. */
  isEcho(path: string, fp: FileFingerprint): boolean {
    const entry = this.own.get(path);
    if (!entry) return false;
    if (entry.expiresAt <= this.options.clock.now()) {
      this.own.delete(path);
      return false;
    }
    return entry.key === fingerprintKey(fp);
  }

  /** Drops expired entries, at most once per half TTL (keeps `remember` O(1) on average). */
  private prune(): void {
    const now = this.options.clock.now();
    if (now - this.prunedAt < this.ttlMs / 2) return;
    this.prunedAt = now;
    for (const [path, entry] of this.own) if (entry.expiresAt <= now) this.own.delete(path);
  }
}

function fingerprintKey(fp: FileFingerprint): string {
  return `${fp.ino}:${fp.size}:${fp.mtimeMs}`;
}
