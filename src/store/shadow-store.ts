/**
 * Shadow runs (EXTENSIONS.md 4 "Shadow runs"), held in memory and, with a rules directory,
 * persisted with the rules as
 *
 * ```
 * <dir>/shadows/<name>.json                  the shadow of ruleset <name> of the default tenant
 * <dir>/tenants/<id>/shadows/<name>.json     the same for any other tenant
 * ```
 *
 * holding `{candidate, sample_rate, since}` (./shadow-record.ts). The rule file scan ignores these
 * directories (no rule extension); the watcher reads them (./rule-paths.ts, src/sync/watcher.ts). Every file is written with the one atomic
 * writer before memory changes and read back at start (`load`); writes are serialized. Every
 * applied change is emitted on the one change stream (`shadow.put` / `shadow.delete`, ./change.ts).
 * Own writes and deletes are recorded in the rules dir's record of own changes (./own-files.ts,
 * shared with the rule store) for the watcher: its echo check, and the token a change from the
 * watcher carries, refused (`StaleRead`) when an own change of the file overtook its read.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isValidRulesetName } from '../ruleset/model.js';
import { readRuleFile } from '../signing/index.js';
import { atomicWrite, fsyncDir, isTempFileName } from './atomic-write.js';
import type { ShadowChange } from './change.js';
import { Emitter, type StoreLogger } from './emitter.js';
import { TENANTS_DIR, tenantDir } from './layout.js';
import type { FileToken, OwnFiles } from './own-files.js';
import type { Origin } from './record.js';
import { DEFAULT_TENANT } from './record.js';
import { parseShadowValue, shadowJson, shadowRecord, type ShadowRecord } from './shadow-record.js';

export type { ShadowRecord } from './shadow-record.js';

/** Directory of a tenant's shadows, inside its tenant directory. */
export const SHADOWS_DIR = 'shadows';

/** The file of a shadow. */
export function shadowPath(rulesDir: string, tenant: string, name: string): string {
  if (!isValidRulesetName(name)) throw new Error(`invalid ruleset name: ${JSON.stringify(String(name))}`);
  return join(tenantDir(rulesDir, tenant), SHADOWS_DIR, `${name}.json`);
}

/** The name of the shadow a file name holds (`<name>.json`), or undefined. */
export function shadowNameOf(fileName: string): string | undefined {
  if (fileName.startsWith('.') || isTempFileName(fileName) || !fileName.endsWith('.json')) return undefined;
  const name = fileName.slice(0, -5);
  return isValidRulesetName(name) ? name : undefined;
}

/** The shadow files of the rules dir (for the watcher's start-up re-check), with their mtimes. */
export async function scanShadowFiles(rulesDir: string): Promise<{ tenant: string; name: string; mtimeMs: number }[]> {
  const out: { tenant: string; name: string; mtimeMs: number }[] = [];
  const tenants = (await names(join(rulesDir, TENANTS_DIR))).filter((t) => isValidRulesetName(t) && t !== DEFAULT_TENANT);
  for (const tenant of [DEFAULT_TENANT, ...tenants]) {
    const sdir = join(tenantDir(rulesDir, tenant), SHADOWS_DIR);
    for (const file of await names(sdir)) {
      const name = shadowNameOf(file);
      if (name === undefined) continue;
      try {
        const st = await stat(join(sdir, file));
        if (st.isFile()) out.push({ tenant, name, mtimeMs: st.mtimeMs });
      } catch {
        // gone in between
      }
    }
  }
  return out;
}

/** The shadows of every tenant. */
export class ShadowStore {
  private readonly byKey = new Map<string, ShadowRecord>();
  private readonly emitter: Emitter<ShadowChange>;
  private queue: Promise<unknown> = Promise.resolve();

  /** `own`: the rules dir's record of own changes (the rule store's `files.own`), required with a rules dir. */
  constructor(private readonly options: { readonly rulesDir: string | null; readonly own?: OwnFiles; readonly logger?: StoreLogger }) {
    if (options.rulesDir !== null && options.own === undefined) throw new Error('a shadow store with a rules dir needs the rule store’s record of own changes');
    this.emitter = new Emitter<ShadowChange>((err) => options.logger?.warn({ err: String(err) }, 'shadow change listener failed'));
  }

  /** The shadow of a ruleset, or undefined. */
  get(tenant: string, name: string): ShadowRecord | undefined {
    return this.byKey.get(key(tenant, name));
  }

  /** Every shadow, by tenant then name. */
  all(): ShadowRecord[] {
    return [...this.byKey.values()].sort((a, b) => cmp(a.tenant, b.tenant) || cmp(a.name, b.name));
  }

  subscribe(listener: (change: ShadowChange) => void): () => void {
    return this.emitter.subscribe(listener);
  }

  /**
   * Stores the record (file first, then memory) unless it holds that very version: 'applied' or
   * 'unchanged'. `expect` (the watcher): the token taken before the file was read; `StaleRead`
   * when an own change of the file has landed since.
   */
  async put(record: ShadowRecord, origin: Origin, persist: boolean, expect?: FileToken): Promise<'applied' | 'unchanged'> {
    return this.serialized(async () => {
      this.options.own?.check(expect);
      const previous = this.get(record.tenant, record.name);
      if (previous?.version === record.version) return 'unchanged';
      const dir = this.options.rulesDir;
      if (dir !== null && persist) {
        const target = shadowPath(dir, record.tenant, record.name);
        try {
          await mkdir(dirname(target), { recursive: true });
          await atomicWrite(target, shadowJson(record));
        } catch (err) {
          this.options.own?.failed(target);
          throw err;
        }
        this.options.own?.changed(target, record.version);
      }
      this.byKey.set(key(record.tenant, record.name), record);
      this.emitter.emit(previous ? { kind: 'shadow.put', record, previous, origin } : { kind: 'shadow.put', record, origin });
      return 'applied';
    });
  }

  /** Removes the shadow (file first, then memory); resolves to false when there was none. `expect`: as `put`. */
  async delete(tenant: string, name: string, origin: Origin, persist: boolean, expect?: FileToken): Promise<boolean> {
    return this.serialized(async () => {
      this.options.own?.check(expect);
      const previous = this.get(tenant, name);
      if (previous === undefined) return false;
      const dir = this.options.rulesDir;
      if (dir !== null && persist) {
        const target = shadowPath(dir, tenant, name);
        try {
          await rm(target, { force: true });
        } catch (err) {
          this.options.own?.failed(target);
          throw err;
        }
        this.options.own?.changed(target, undefined);
        await fsyncDir(dirname(target)).catch(() => undefined);
      }
      this.byKey.delete(key(tenant, name));
      this.emitter.emit({ kind: 'shadow.delete', tenant, name, previous, origin });
      return true;
    });
  }

  /**
   * Reads every shadow file of the rules dir (not emitted: the caller compiles them). A file that
   * is not a valid shadow is skipped and reported.
   */
  async load(): Promise<{ loaded: ShadowRecord[]; skipped: { path: string; reason: string }[] }> {
    const dir = this.options.rulesDir;
    const loaded: ShadowRecord[] = [];
    const skipped: { path: string; reason: string }[] = [];
    if (dir === null) return { loaded, skipped };
    const tenants = (await names(join(dir, TENANTS_DIR))).filter((t) => isValidRulesetName(t) && t !== DEFAULT_TENANT);
    for (const tenant of [DEFAULT_TENANT, ...tenants]) {
      const sdir = join(tenantDir(dir, tenant), SHADOWS_DIR);
      for (const file of await names(sdir)) {
        if (file.startsWith('.') || isTempFileName(file)) continue;
        const path = join(sdir, file);
        const name = file.endsWith('.json') ? file.slice(0, -5) : '';
        if (!isValidRulesetName(name)) {
          skipped.push({ path, reason: 'not a shadow file (<name>.json)' });
          continue;
        }
        try {
          // A shadow file holds a ruleset: the rule-file size limit applies, checked before reading.
          const v = parseShadowValue(JSON.parse((await readRuleFile(path)).toString('utf8')) as unknown);
          const record = shadowRecord(tenant, name, v.candidate, v.sampleRate, v.since);
          this.byKey.set(key(tenant, name), record);
          loaded.push(record);
        } catch (err) {
          skipped.push({ path, reason: err instanceof Error ? err.message : String(err) });
        }
      }
    }
    return { loaded, skipped };
  }

  /** Forgets a loaded record without touching its file (one that did not compile at start). */
  forget(tenant: string, name: string): void {
    this.byKey.delete(key(tenant, name));
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function key(tenant: string, name: string): string {
  return `${tenant}\u0000${name}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}
