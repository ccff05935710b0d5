/**
 * The rules-dir watcher (`--watch-rules`, SPEC.md 8): native file-system events through
 * chokidar, batched by our 200 ms debounce (`Batcher`); polling every 30 s when native events
 * are unavailable (the watcher switches by itself when the native watcher fails with a
 * resource or support error) or when polling is forced (`--watch-poll`, interval
 * `--watch-poll-interval-ms`). Each batch is applied by `FileReconciler`.
 *
 * Echo suppression: the file store remembers the fingerprint of every rule file it writes, and
 * says so when the watcher asks for that file (`RuleFiles.current`: own); those are not
 * reloaded. Scans and the format precedence are the file store's too (`RuleFiles`).
 *
 * In multi-tenancy mode `tenants.json` is watched too and handed to `onTenantsFileChanged`
 * (the hook for the tenant registry).
 *
 * Data files (`data/<name>.json`, `tenants/<id>/data/<name>.json`: reference data) are watched
 * when the target synchronizes datasets, batched with the rules and applied by the same
 * reconciler (`reconcileData`, docs/data-sync.md). Shadow files (`shadows/<name>.json`,
 * `tenants/<id>/shadows/<name>.json`: shadow runs) are always watched, the same way
 * (`reconcileShadow`: `shadow.put` on add or change, `shadow.delete` on unlink).
 *
 * New directories (`tenants/`, `tenants/<id>/`): chokidar reads a new directory and only then
 * watches it, so a file that lands in between (the store's first write to a new tenant:
 * mkdir, then temp file, fsync, rename) gets no event at all. So for every new directory the
 * watcher reports, it re-reads the tenant directories concerned when the batch is applied
 * (after the debounce: by then chokidar watches them) and reconciles the rule and data files
 * there; a new data directory is re-read the same way.
 */
import { dirname, join } from 'node:path';
import { scanDataFiles } from '../store/data-files.js';
import { scanShadowFiles, shadowPath } from '../store/shadow-store.js';
import { classifyRulePath, isIgnoredPath } from '../store/rule-paths.js';
import { DEFAULT_TENANT, type RuleFiles } from '../store/types.js';
import { TENANTS_DIR, tenantDir } from '../store/layout.js';
import { Batcher } from './batcher.js';
import { errorText } from './broker-link.js';
import { realClock, type SyncClock } from './clock.js';
import { chokidarWatcher, type CreateFsWatcher, type FsWatcherLike } from './fs-watcher.js';
import { FileReconciler } from './file-reconciler.js';
import type { SyncTarget } from './sync-types.js';
import type { Logger } from '../log.js';

export type { CreateFsWatcher, FsWatcherLike, FsWatchOptions } from './fs-watcher.js';

/** The 200 ms debounce of SPEC.md "Limits". */
export const WATCH_DEBOUNCE_MS = 200;

/** Errors of the native watcher after which polling takes over. */
const NATIVE_UNAVAILABLE = new Set(['ENOSPC', 'EMFILE', 'ENFILE', 'ENOSYS', 'ENOTSUP', 'EOPNOTSUPP', 'EPERM', 'EACCES']);

/** Options of `RuleWatcher`. */
export interface RuleWatcherOptions {
  readonly rulesDir: string;
  readonly target: SyncTarget;
  readonly logger: Logger;
  readonly clock?: SyncClock;
  /** Default 200 ms. */
  readonly debounceMs?: number;
  /** Force polling. */
  readonly poll: boolean;
  /** Polling interval (ms). */
  readonly pollIntervalMs: number;
  /** Watch `tenants.json` (multi-tenancy mode). */
  readonly watchTenantsFile: boolean;
  /** `--max-data-bytes`: data files over `maxDataFileBytes` of it are refused before reading. */
  readonly maxDataBytes?: number;
  /** Hook for a changed tenant registry; default: logged. */
  readonly onTenantsFileChanged?: () => void | Promise<void>;
  /** Files modified after this time (ms since the epoch) are re-checked once the watcher is ready. */
  readonly recheckSince?: number;
  /** Injectable for tests; default chokidar. */
  readonly createFsWatcher?: CreateFsWatcher;
}

/** Watcher state for `/health`. */
export interface WatcherStatus {
  readonly mode: 'native' | 'polling';
  readonly ready: boolean;
  readonly batches: number;
  /** Totals since start: rules reloaded, removed, skipped as own writes, and broken files skipped. */
  readonly reloaded: number;
  readonly removed: number;
  readonly own_writes_skipped: number;
  readonly failed: number;
  /** The same counts for data files (only when datasets are synchronized). */
  readonly data?: { readonly reloaded: number; readonly removed: number; readonly own_writes_skipped: number; readonly failed: number };
  /** The same counts for shadow files. */
  readonly shadows: { readonly reloaded: number; readonly removed: number; readonly own_writes_skipped: number; readonly failed: number };
  readonly last_reload_at: string | null;
}

const TENANTS_KEY = '\u0000tenants';
/** Prefix of the keys of new directories to re-read (`dirKey`). */
const DIR_KEY = '\u0000dir\u0000';
/** Prefix of the keys of data files (`dataKey`). */
const DATA_KEY = '\u0000data\u0000';
/** Prefix of the keys of new data directories to re-read (`dataDirKey`). */
const DATA_DIR_KEY = '\u0000datadir\u0000';
/** Prefix of the keys of shadow files (`shadowKey`). */
const SHADOW_KEY = '\u0000shadow\u0000';
/** Prefix of the keys of new shadows directories to re-read (`shadowDirKey`). */
const SHADOW_DIR_KEY = '\u0000shadowdir\u0000';

/** The rules-dir watcher (see the module comment). */
export class RuleWatcher {
  private readonly clock: SyncClock;
  /** The file store's reconcile-from-disk capability. */
  private readonly files: RuleFiles;
  private readonly batcher: Batcher<string>;
  private readonly reconciler: FileReconciler;
  private fsw: FsWatcherLike | undefined;
  private mode: 'native' | 'polling';
  private ready = false;
  private batches = 0;
  private readonly totals = FileReconciler.counts();
  private lastReloadAt: number | null = null;
  private closed = false;

  /** Throws when the target's store has no rules dir (no `files` capability). */
  constructor(private readonly options: RuleWatcherOptions) {
    const files = options.target.files;
    if (!files) throw new Error('the rules-dir watcher needs a store with a rules dir');
    this.files = files;
    this.clock = options.clock ?? realClock;
    this.mode = options.poll ? 'polling' : 'native';
    this.reconciler = new FileReconciler(files, options.target, options.logger, options.rulesDir, options.maxDataBytes);
    this.batcher = new Batcher<string>({
      clock: this.clock,
      debounceMs: options.debounceMs ?? WATCH_DEBOUNCE_MS,
      flush: (batch) => this.flush(batch),
      onError: (err) => options.logger.warn({ err: errorText(err) }, 'rule reload batch failed'),
    });
  }

  /** Starts watching; resolves once the initial scan of the watcher is done. */
  async start(): Promise<void> {
    await this.open(this.mode);
    await this.recheck(this.options.recheckSince ?? this.clock.now());
  }

  /** State for `/health`. */
  status(): WatcherStatus {
    return {
      mode: this.mode,
      ready: this.ready,
      batches: this.batches,
      reloaded: this.totals.applied,
      removed: this.totals.removed,
      own_writes_skipped: this.totals.own,
      failed: this.totals.failed,
      ...(this.options.target.syncsData
        ? {
            data: {
              reloaded: this.totals.data_applied,
              removed: this.totals.data_removed,
              own_writes_skipped: this.totals.data_own,
              failed: this.totals.data_failed,
            },
          }
        : {}),
      shadows: {
        reloaded: this.totals.shadow_applied,
        removed: this.totals.shadow_removed,
        own_writes_skipped: this.totals.shadow_own,
        failed: this.totals.shadow_failed,
      },
      last_reload_at: this.lastReloadAt === null ? null : new Date(this.lastReloadAt).toISOString(),
    };
  }

  /** Applies pending changes now (tests). */
  flushNow(): Promise<void> {
    return this.batcher.flushNow();
  }

  /** Stops watching. */
  async close(): Promise<void> {
    this.closed = true;
    await this.batcher.close();
    await this.fsw?.close();
  }

  private async open(mode: 'native' | 'polling'): Promise<void> {
    const { rulesDir, logger } = this.options;
    const create = this.options.createFsWatcher ?? chokidarWatcher;
    this.mode = mode;
    this.ready = false;
    let fsw: FsWatcherLike;
    try {
      fsw = create(rulesDir, {
        usePolling: mode === 'polling',
        interval: this.options.pollIntervalMs,
        ignored: (path) => isIgnoredPath(rulesDir, path),
      });
    } catch (err) {
      if (mode === 'native') return this.fallBack(err);
      throw err;
    }
    this.fsw = fsw;
    const ready = new Promise<void>((resolve) => {
      fsw.on('ready', resolve);
      this.clock.setTimeout(resolve, 10_000); // never block the start on a stuck scan
    });
    fsw.on('all', (event, path) => {
      if (this.fsw === fsw) this.onFsEvent(event, path);
    });
    fsw.on('error', (err) => {
      if (this.fsw === fsw) this.onError(err);
    });
    await ready;
    if (this.fsw !== fsw || this.closed) return;
    this.ready = true;
    logger.info({ rules_dir: rulesDir, mode, interval_ms: mode === 'polling' ? this.options.pollIntervalMs : null }, 'rule watcher ready');
  }

  private onError(err: unknown): void {
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (this.mode === 'native' && code && NATIVE_UNAVAILABLE.has(code)) {
      void this.fallBack(err);
      return;
    }
    this.options.logger.warn({ err: errorText(err), code }, 'rule watcher error');
  }

  /** Replaces the native watcher by a polling one. */
  private async fallBack(err: unknown): Promise<void> {
    if (this.closed || this.mode === 'polling') return;
    const since = this.clock.now() - 1000;
    this.options.logger.warn(
      { err: errorText(err), interval_ms: this.options.pollIntervalMs },
      'native file events unavailable; the rule watcher falls back to polling',
    );
    const old = this.fsw;
    this.fsw = undefined;
    this.mode = 'polling';
    await old?.close().catch(() => undefined);
    await this.open('polling');
    await this.recheck(since);
  }

  private onFsEvent(event: string, path: string): void {
    const what = classifyRulePath(this.options.rulesDir, path);
    switch (what.kind) {
      case 'rule':
        this.batcher.add(ruleKey(what.tenant, what.name));
        return;
      case 'tenants-root':
        if (event === 'addDir') this.batcher.add(dirKey(''));
        return;
      case 'tenant-dir':
        if (event === 'addDir') this.batcher.add(dirKey(what.tenant));
        else if (event === 'unlinkDir') {
          for (const name of this.reconciler.namesInMemory(what.tenant)) this.batcher.add(ruleKey(what.tenant, name));
          for (const name of this.reconciler.dataInMemory(what.tenant)) this.batcher.add(dataKey(what.tenant, name));
          for (const name of this.reconciler.shadowsInMemory(what.tenant)) this.batcher.add(shadowKey(what.tenant, name));
        }
        return;
      case 'shadow':
        this.batcher.add(shadowKey(what.tenant, what.name));
        return;
      case 'shadow-dir':
        if (event === 'addDir') this.batcher.add(shadowDirKey(what.tenant));
        else if (event === 'unlinkDir') for (const name of this.reconciler.shadowsInMemory(what.tenant)) this.batcher.add(shadowKey(what.tenant, name));
        return;
      case 'data':
        if (this.options.target.syncsData) this.batcher.add(dataKey(what.tenant, what.name));
        return;
      case 'data-dir':
        if (!this.options.target.syncsData) return;
        if (event === 'addDir') this.batcher.add(dataDirKey(what.tenant));
        else if (event === 'unlinkDir') for (const name of this.reconciler.dataInMemory(what.tenant)) this.batcher.add(dataKey(what.tenant, name));
        return;
      case 'tenants-file':
        if (this.options.watchTenantsFile) this.batcher.add(TENANTS_KEY);
        return;
      case 'other':
        return;
    }
  }

  /** Queues the rules whose files changed after `since`, and those in memory without a file. */
  private async recheck(since: number): Promise<void> {
    let scan;
    try {
      scan = await this.files.scan();
    } catch (err) {
      this.options.logger.warn({ err: errorText(err) }, 'cannot scan the rules dir');
      return;
    }
    const onDisk = new Set<string>();
    for (const file of scan) {
      const key = ruleKey(file.tenant, file.name);
      onDisk.add(key);
      if (file.mtimeMs >= since) this.batcher.add(key);
    }
    if (this.options.target.syncsData) {
      try {
        for (const file of (await scanDataFiles(this.options.rulesDir)).files) {
          const key = dataKey(file.tenant, file.name);
          onDisk.add(key);
          if (file.mtimeMs >= since) this.batcher.add(key);
        }
      } catch (err) {
        this.options.logger.warn({ err: errorText(err) }, 'cannot scan the data files of the rules dir');
      }
    }
    try {
      for (const file of await scanShadowFiles(this.options.rulesDir)) {
        const key = shadowKey(file.tenant, file.name);
        onDisk.add(key);
        if (file.mtimeMs >= since) this.batcher.add(key);
      }
    } catch (err) {
      this.options.logger.warn({ err: errorText(err) }, 'cannot scan the shadow files of the rules dir');
    }
    for (const entry of this.options.target.snapshot()) {
      if (entry.kind === 'tenant.put') continue;
      const key =
        entry.kind === 'data.put'
          ? dataKey(entry.record.tenant, entry.record.name)
          : entry.kind === 'shadow.put'
            ? shadowKey(entry.record.tenant, entry.record.name)
            : ruleKey(entry.record.tenant, entry.record.name);
      if (!onDisk.has(key)) this.batcher.add(key);
    }
  }

  private async flush(queued: ReadonlySet<string>): Promise<void> {
    const counts = FileReconciler.counts();
    const batch = await this.expandDirs(queued);
    for (const key of batch) {
      if (this.closed) return;
      if (key === TENANTS_KEY) {
        await this.tenantsFileChanged();
        continue;
      }
      const data = key.startsWith(DATA_KEY);
      const shadow = key.startsWith(SHADOW_KEY);
      const [tenant, name] = (data ? key.slice(DATA_KEY.length) : shadow ? key.slice(SHADOW_KEY.length) : key).split('\u0000') as [string, string];
      try {
        if (data) await this.reconciler.reconcileData(tenant, name, counts);
        else if (shadow) await this.reconciler.reconcileShadow(tenant, name, counts);
        else await this.reconciler.reconcile(tenant, name, counts);
      } catch (err) {
        if (data) counts.data_failed++;
        else if (shadow) counts.shadow_failed++;
        else counts.failed++;
        const what = data ? 'data file reload failed' : shadow ? 'shadow file reload failed' : 'rule reload failed';
        this.options.logger.warn({ tenant, name, err: errorText(err) }, what);
      }
    }
    this.batches++;
    for (const k of Object.keys(counts) as Array<keyof typeof counts>) this.totals[k] += counts[k];
    this.lastReloadAt = this.clock.now();
    const changed =
      counts.applied +
      counts.removed +
      counts.failed +
      counts.data_applied +
      counts.data_removed +
      counts.data_failed +
      counts.shadow_applied +
      counts.shadow_removed +
      counts.shadow_failed;
    const log = changed > 0 ? this.options.logger.info : this.options.logger.debug;
    log.call(this.options.logger, { batch: batch.size, ...counts }, 'rule files reloaded');
  }

  /**
   * Replaces the keys of new directories by the rules found in them now (see the module
   * comment); other keys keep their order.
   */
  private async expandDirs(queued: ReadonlySet<string>): Promise<ReadonlySet<string>> {
    const dirs = [...queued].filter((key) => key.startsWith(DIR_KEY));
    const dataDirs = [...queued].filter((key) => key.startsWith(DATA_DIR_KEY));
    const shadowDirs = [...queued].filter((key) => key.startsWith(SHADOW_DIR_KEY));
    if (dirs.length === 0 && dataDirs.length === 0 && shadowDirs.length === 0) return queued;
    const all = dirs.includes(dirKey(''));
    const tenants = new Set(dirs.map((key) => key.slice(DIR_KEY.length)));
    const found: string[] = [];
    /** The files of `found` (chokidar is told to watch them: see `FsWatcherLike.add`). */
    const paths: string[] = [];
    if (dirs.length > 0) {
      try {
        for (const file of await this.files.scan()) {
          if (file.tenant !== DEFAULT_TENANT && (all || tenants.has(file.tenant))) {
            found.push(ruleKey(file.tenant, file.name));
            paths.push(file.path);
          }
        }
      } catch (err) {
        this.options.logger.warn({ err: errorText(err) }, 'cannot scan the rules dir');
      }
    }
    if (this.options.target.syncsData) {
      // Data directories of new tenant directories, and new data directories.
      const dataTenants = new Set(dataDirs.map((key) => key.slice(DATA_DIR_KEY.length)));
      try {
        for (const file of (await scanDataFiles(this.options.rulesDir)).files) {
          const inNewTenant = file.tenant !== DEFAULT_TENANT && (all || tenants.has(file.tenant));
          if (inNewTenant || dataTenants.has(file.tenant)) {
            found.push(dataKey(file.tenant, file.name));
            paths.push(file.path);
          }
        }
      } catch (err) {
        this.options.logger.warn({ err: errorText(err) }, 'cannot scan the data files of the rules dir');
      }
    }
    // Shadows directories of new tenant directories, and new shadows directories.
    const shadowTenants = new Set(shadowDirs.map((key) => key.slice(SHADOW_DIR_KEY.length)));
    try {
      for (const file of await scanShadowFiles(this.options.rulesDir)) {
        const inNewTenant = file.tenant !== DEFAULT_TENANT && (all || tenants.has(file.tenant));
        if (inNewTenant || shadowTenants.has(file.tenant)) {
          found.push(shadowKey(file.tenant, file.name));
          paths.push(shadowPath(this.options.rulesDir, file.tenant, file.name));
        }
      }
    } catch (err) {
      this.options.logger.warn({ err: errorText(err) }, 'cannot scan the shadow files of the rules dir');
    }
    const out = new Set<string>();
    for (const key of queued) {
      if (!key.startsWith(DIR_KEY) && !key.startsWith(DATA_DIR_KEY) && !key.startsWith(SHADOW_DIR_KEY)) out.add(key);
    }
    for (const key of found) out.add(key);
    // NOTE: without this, a file that landed while chokidar read its new directory is unknown to
    // chokidar, which then reports nothing when it is deleted (the deleted shadow, rule or dataset
    // would stay loaded). Watching it explicitly makes its removal an event. The directories
    // holding them, and the new tenant directories, are watched explicitly too: a directory made
    // while chokidar read its parent can be missed the same way, and then no file that lands in
    // it later is reported (seen under load: a rule written into such a tenant directory never
    // reached a reader on the shared dir).
    const dirsToWatch = new Set<string>();
    for (const path of paths) dirsToWatch.add(dirname(path));
    if (all) dirsToWatch.add(join(this.options.rulesDir, TENANTS_DIR));
    for (const tenant of tenants) if (tenant !== '') dirsToWatch.add(tenantDir(this.options.rulesDir, tenant));
    paths.push(...dirsToWatch);
    if (paths.length > 0) {
      try {
        this.fsw?.add?.(paths);
      } catch (err) {
        this.options.logger.warn({ err: errorText(err) }, 'cannot watch the files of a new directory');
      }
    }
    return out;
  }

  private async tenantsFileChanged(): Promise<void> {
    try {
      if (this.options.onTenantsFileChanged) await this.options.onTenantsFileChanged();
      else this.options.logger.info({}, 'tenants.json changed (no tenant registry is wired to reload it)');
    } catch (err) {
      this.options.logger.warn({ err: errorText(err) }, 'tenants.json reload failed; the loaded tenants keep serving');
    }
  }
}

function ruleKey(tenant: string, name: string): string {
  return `${tenant}\u0000${name}`;
}

/** Key of a data file. */
function dataKey(tenant: string, name: string): string {
  return `${DATA_KEY}${tenant}\u0000${name}`;
}

/** Key of a shadow file. */
function shadowKey(tenant: string, name: string): string {
  return `${SHADOW_KEY}${tenant}\u0000${name}`;
}

/** Key of a new shadows directory of a tenant to re-read. */
function shadowDirKey(tenant: string): string {
  return `${SHADOW_DIR_KEY}${tenant}`;
}

/** Key of a new data directory of a tenant to re-read. */
function dataDirKey(tenant: string): string {
  return `${DATA_DIR_KEY}${tenant}`;
}

/** Key of a new tenant directory to re-read (`DIR_KEY` alone: `tenants/` and every tenant in it). */
function dirKey(tenant: string): string {
  return `${DIR_KEY}${tenant}`;
}
