/**
 * `FileStore`: the rule store of persistent mode (`--rules-dir`). Layout in `layout.ts`.
 *
 * Reads are synchronous from memory. Writes run one at a time under the write lock and follow
 * one order so that a failure never leaves memory ahead of disk:
 *
 * 1. (update) save the replaced document as the next history entry,
 * 2. write `<name>.json` atomically (the commit point; on failure the entry of step 1 is removed
 *    and the promise rejects with memory unchanged),
 * 3. remove `<name>.yaml|.yml|.svc` siblings, prune history to `maxVersions`,
 * 4. swap the in-memory record and emit the event.
 *
 * Capabilities: read, write, subscribe, `history` and `files` (reconcile from disk,
 * `rule-files.ts`: the current file of a ruleset by format precedence, and echo suppression of
 * the files this store wrote, by the fingerprint the atomic write returns). A change from the
 * watcher carries the token of its read (`WriteOptions.expect`), checked under the write lock:
 * one that this store's own change of the file has overtaken throws `StaleRead` (./own-files.ts).
 *
 * NOTE (DECISIONS.md 4): after a persisted put, `<name>.json` is the only current file of the
 * ruleset: a `.yaml`/`.yml`/`.svc` it was loaded from is removed so that the next start does not
 * find two files for one name. Failures in step 3 happen after the commit point and are logged.
 */
import { mkdirSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { RulesetDoc } from '../ruleset/model.js';
import { readRuleFileSync } from '../signing/index.js';
import { atomicWrite, fsyncDir, type FileFingerprint } from './atomic-write.js';
import { storeEmitter, type Emitter, type StoreLogger } from './emitter.js';
import { appendHistory, listHistory, pruneHistory, readHistoryDoc, serializeDoc, versionLabel, type HistoryFile } from './history.js';
import {
  HEALTH_PROBE_FILE,
  RULE_FILE_EXTENSIONS,
  TENANTS_FILE,
  assertValidName,
  assertValidTenant,
  historyDir,
  isReservedName,
  isoFromUnixSeconds,
  rulePath,
  tenantDir,
} from './layout.js';
import { RecordMap, assertStorableRecord } from './record-map.js';
import { RwLock } from './rw-lock.js';
import { DiskRuleFiles } from './rule-files.js';
import { scanRulesDir, type SkippedEntry } from './scan.js';
import { removeStaleTempFiles } from './temp-sweep.js';
import type {
  LoadReport,
  PrepareFile,
  PutOutcome,
  RuleHistory,
  RuleRecord,
  RuleStore,
  StoreEvent,
  StoreListener,
  VersionEntry,
  WriteOptions,
} from './types.js';

/** Default of `--max-versions` (SPEC.md "Limits"). */
export const DEFAULT_MAX_VERSIONS = 10;

/** Options of `FileStore`. */
export interface FileStoreOptions {
  readonly rulesDir: string;
  /** History entries kept per ruleset, oldest removed first; 0 keeps none. Default 10. */
  readonly maxVersions?: number;
  readonly logger?: StoreLogger;
  /** The lock to use; tests inject one to hold it. Default: a new lock. */
  readonly lock?: RwLock;
  /** Clock in ms (history timestamps). Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Remove the temp files of interrupted writes at the first load (./temp-sweep.ts). Default
   * true; false for an instance that does not own the dir (a reader sharing a writer's dir,
   * whose write in progress has a temp file that looks the same).
   */
  readonly sweepTempFiles?: boolean;
}

/** File-backed `RuleStore` (see the module comment). */
export class FileStore implements RuleStore, RuleHistory {
  readonly rulesDir: string;
  readonly maxVersions: number;
  /** History capability: this store keeps version history. */
  readonly history: RuleHistory = this;
  /** Reconcile-from-disk capability (./rule-files.ts), told about every file this store writes or removes. */
  readonly files: DiskRuleFiles;

  private readonly records = new RecordMap();
  private readonly emitter: Emitter<StoreEvent>;
  private readonly lock: RwLock;
  private readonly logger: StoreLogger | undefined;
  /** Whether the stale temp files were removed (first load only). */
  private swept: boolean;
  private readonly now: () => number;

  /** Creates the rules dir when missing (mkdir -p); throws when that fails. */
  constructor(options: FileStoreOptions) {
    const maxVersions = options.maxVersions ?? DEFAULT_MAX_VERSIONS;
    if (!Number.isSafeInteger(maxVersions) || maxVersions < 0) {
      throw new Error(`maxVersions must be a non-negative integer, got ${maxVersions}`);
    }
    this.rulesDir = resolve(options.rulesDir);
    this.maxVersions = maxVersions;
    this.logger = options.logger;
    this.emitter = storeEmitter(options.logger);
    this.lock = options.lock ?? new RwLock('store');
    this.now = options.now ?? Date.now;
    this.swept = options.sweepTempFiles === false;
    this.files = new DiskRuleFiles(this.rulesDir, this.now);
    mkdirSync(this.rulesDir, { recursive: true });
  }

  /**
   * Loads every rule file (all tenants) and replaces the in-memory content with them.
   * Broken files are skipped, logged and reported; nothing here is fatal. No events are emitted.
   */
  async load(prepare: PrepareFile): Promise<LoadReport> {
    return this.lock.withWrite(async () => {
      await mkdir(this.rulesDir, { recursive: true });
      // NOTE (EXTENSIONS.md 6 "Files"): temp files of writes interrupted before this start are
      // removed by the first load, before this store writes anything.
      if (!this.swept) {
        this.swept = true;
        const removed = await removeStaleTempFiles(this.rulesDir);
        if (removed.length > 0) this.logger?.warn({ removed: removed.length, rules_dir: this.rulesDir }, 'removed temp files left by interrupted writes');
      }
      const scan = await scanRulesDir(this.rulesDir);
      const skipped: SkippedEntry[] = [...scan.skipped];
      const loaded: RuleRecord[] = [];
      for (let i = 0; i < scan.files.length; i++) {
        const file = scan.files[i]!;
        // NOTE (start time, bench/NOTES.md "Many rulesets"): read synchronously, about 20 us
        // a file against 120-150 us of CPU with fs/promises' readFile (four thread-pool trips
        // and their promises). The loop yields to the event loop every LOAD_SLICE files. A
        // file over the rule-file limit is refused from its size, unread.
        if (i > 0 && i % LOAD_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
        try {
          const bytes = readRuleFileSync(file.path);
          const record = prepare({ tenant: file.tenant, name: file.name, path: file.path, bytes });
          if (record.name !== file.name) {
            throw new Error(`ruleset name ${JSON.stringify(record.name)} differs from the file name ${JSON.stringify(file.name)}`);
          }
          if (record.tenant !== file.tenant) {
            throw new Error(`tenant ${JSON.stringify(record.tenant)} differs from the directory tenant ${JSON.stringify(file.tenant)}`);
          }
          assertStorableRecord(record);
          loaded.push(record);
        } catch (err) {
          skipped.push({ path: file.path, reason: errorMessage(err) });
        }
      }
      for (const entry of skipped) this.logger?.warn(entry, 'rule file skipped');
      this.records.replaceAll(loaded);
      return { loaded: loaded.length, skipped };
    });
  }

  get(tenant: string, name: string): RuleRecord | undefined {
    return this.records.get(tenant, name);
  }

  list(tenant: string): RuleRecord[] {
    return this.records.list(tenant);
  }

  count(tenant?: string): number {
    return this.records.count(tenant);
  }

  tenants(): string[] {
    return this.records.tenants();
  }

  async put(record: RuleRecord, options: WriteOptions): Promise<PutOutcome> {
    assertStorableRecord(record);
    if (isReservedName(record.tenant, record.name)) {
      throw new Error(`ruleset name "${record.name}" is reserved in the default tenant (${TENANTS_FILE} is the tenant registry)`);
    }
    return this.lock.withWrite(async () => {
      this.files.own.check(options.expect);
      const previous = this.records.get(record.tenant, record.name);
      if (!previous && options.beforeCreate) options.beforeCreate(this.records.count(record.tenant));
      if (options.persist !== false) await this.persistPut(record, previous);
      this.records.set(record);
      this.emitter.emit({ kind: 'ruleset.put', record, previous, origin: options.origin });
      return previous ? { created: false, previous } : { created: true };
    });
  }

  exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.lock.withWrite(fn);
  }

  async delete(tenant: string, name: string, options: WriteOptions): Promise<RuleRecord | undefined> {
    assertValidTenant(tenant);
    assertValidName(name);
    return this.lock.withWrite(async () => {
      this.files.own.check(options.expect);
      const previous = this.records.get(tenant, name);
      if (!previous) return undefined;
      if (options.persist !== false) await this.persistDelete(tenant, name);
      this.records.delete(tenant, name);
      this.emitter.emit({ kind: 'ruleset.delete', tenant, name, previous, origin: options.origin });
      return previous;
    });
  }

  async versions(tenant: string, name: string): Promise<VersionEntry[]> {
    const dir = historyDir(this.rulesDir, tenant, name);
    return this.lock.withRead(async () => {
      const files = this.kept(await listHistory(dir));
      const entries: VersionEntry[] = [];
      for (const file of files.reverse()) {
        try {
          const doc = await readHistoryDoc(file);
          entries.push({ seq: file.seq, version: versionLabel(doc), timestamp: isoFromUnixSeconds(file.unixSeconds) });
        } catch (err) {
          // NOTE: an unreadable history file is left out of the list rather than failing it.
          this.logger?.warn({ path: file.path, err }, 'history entry unreadable; not listed');
        }
      }
      return entries;
    });
  }

  async readVersion(tenant: string, name: string, seq: number): Promise<RulesetDoc | undefined> {
    const dir = historyDir(this.rulesDir, tenant, name);
    if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
    return this.lock.withRead(async () => {
      const file = this.kept(await listHistory(dir)).find((f) => f.seq === seq);
      if (!file) return undefined;
      try {
        return await readHistoryDoc(file);
      } catch (err) {
        throw new Error(`history entry ${seq} of ruleset "${name}" is unreadable: ${errorMessage(err)}`, { cause: err });
      }
    });
  }

  /**
   * The newest `maxVersions` history files (sorted by seq ascending). NOTE: a crash between
   * saving the replaced version and pruning leaves one entry too many until the rule's next
   * write prunes it; reads never show it, so `--max-versions` holds for every answer.
   */
  private kept(files: HistoryFile[]): HistoryFile[] {
    return this.maxVersions === 0 ? [] : files.slice(-this.maxVersions);
  }

  /** Takes the read lock within `timeoutMs`, then writes `<rules-dir>/.health_probe` atomically. */
  async probe(timeoutMs: number): Promise<void> {
    const release = await this.lock.acquireRead(timeoutMs);
    try {
      const path = join(this.rulesDir, HEALTH_PROBE_FILE);
      try {
        await atomicWrite(path, `${new Date(this.now()).toISOString()}\n`);
      } catch (err) {
        throw new Error(`rules dir not writable: cannot write ${path}: ${errorMessage(err)}`, { cause: err });
      }
    } finally {
      release();
    }
  }

  subscribe(listener: StoreListener): () => void {
    return this.emitter.subscribe(listener);
  }

  /** Steps 1-3 of a put (see the module comment). */
  private async persistPut(record: RuleRecord, previous: RuleRecord | undefined): Promise<void> {
    const { tenant, name } = record;
    const hdir = historyDir(this.rulesDir, tenant, name);
    const target = rulePath(this.rulesDir, tenant, name, '.json');
    let saved: HistoryFile | undefined;
    let written: FileFingerprint;
    try {
      await mkdir(tenantDir(this.rulesDir, tenant), { recursive: true });
      if (previous && this.maxVersions > 0) {
        saved = await appendHistory(hdir, storedDoc(previous), Math.floor(this.now() / 1000));
      }
      written = await atomicWrite(target, serializeDoc(storedDoc(record)));
    } catch (err) {
      this.files.own.failed(target);
      if (saved) await rm(saved.path, { force: true }).catch(() => undefined);
      throw new Error(`cannot save ruleset "${name}" (tenant "${tenant}"): ${errorMessage(err)}`, { cause: err });
    }
    this.files.wrote(target, written);
    await this.afterCommit(tenant, name, 'cannot remove a superseded rule file', () => this.removeCurrentFiles(tenant, name, '.json'));
    await this.afterCommit(tenant, name, 'cannot prune history', () => pruneHistory(hdir, this.maxVersions));
  }

  /** Removes the current file(s) (the commit point), then the history directory. */
  private async persistDelete(tenant: string, name: string): Promise<void> {
    const key = this.files.key(tenant, name);
    try {
      await this.removeCurrentFiles(tenant, name);
      this.files.own.changed(key, undefined);
    } catch (err) {
      this.files.own.failed(key);
      throw new Error(`cannot delete ruleset "${name}" (tenant "${tenant}"): ${errorMessage(err)}`, { cause: err });
    }
    const hdir = historyDir(this.rulesDir, tenant, name);
    await this.afterCommit(tenant, name, 'cannot remove history', () => rm(hdir, { recursive: true, force: true }));
  }

  /**
   * Removes `<name>.<ext>` for every rule format except `keep`.
   * NOTE: delete removes every format, not only the loaded one: a shadowed `.yaml` left behind
   * would bring a deleted ruleset back at the next start.
   */
  private async removeCurrentFiles(tenant: string, name: string, keep?: string): Promise<void> {
    for (const ext of RULE_FILE_EXTENSIONS) {
      if (ext !== keep) await rm(rulePath(this.rulesDir, tenant, name, ext), { force: true });
    }
    await fsyncDir(tenantDir(this.rulesDir, tenant)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err; // tenant dir never created (memory-only puts)
    });
  }

  /** Runs a clean-up step after the commit point: failures are logged, not thrown. */
  private async afterCommit(tenant: string, name: string, what: string, step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
    } catch (err) {
      this.logger?.warn({ tenant, name, err }, `${what}; continuing`);
    }
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The document as written to disk: the record's doc plus its `_signature`, when it has one. */
function storedDoc(record: RuleRecord): RulesetDoc {
  return record.signature ? { ...record.doc, _signature: record.signature } : record.doc;
}

/** Rule files `load` reads and prepares between two yields to the event loop. */
const LOAD_SLICE = 64;
