/**
 * The file-system watcher under `RuleWatcher`: a small interface (so unit tests drive events by
 * hand) and its chokidar implementation, watching the rules dir, `tenants/<id>/` and the data
 * directories `data/` and `tenants/<id>/data/` (depth 3; `isIgnoredPath` keeps the rest out).
 * The 200 ms debounce is ours (`Batcher`), not chokidar's.
 */
import { watch as chokidarWatch } from 'chokidar';

/** What the watcher needs from a file-system watcher (chokidar's `FSWatcher` fits). */
export interface FsWatcherLike {
  on(event: 'all', listener: (event: string, path: string) => void): unknown;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  /**
   * Watches more paths. The watcher gives it the files it found by re-reading a new directory:
   * chokidar did not see them land (it reads a new directory before it watches it), and it
   * reports the removal only of entries it knows.
   */
  add?(paths: string[]): unknown;
  close(): Promise<void>;
}

/** Options given to a file-system watcher factory. */
export interface FsWatchOptions {
  readonly usePolling: boolean;
  readonly interval: number;
  readonly ignored: (path: string) => boolean;
}

/** Creates a file-system watcher on a directory. */
export type CreateFsWatcher = (dir: string, options: FsWatchOptions) => FsWatcherLike;

/** chokidar, watching the rules dir, `tenants/<id>/` and the data directories. */
export const chokidarWatcher: CreateFsWatcher = (dir, o) => {
  const w = chokidarWatch(dir, {
    ignoreInitial: true,
    persistent: true,
    depth: 3,
    usePolling: o.usePolling,
    interval: o.interval,
    binaryInterval: o.interval,
    ignored: (path: string) => o.ignored(path),
  });
  return w as unknown as FsWatcherLike;
};
