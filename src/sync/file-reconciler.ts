/**
 * Applies what the watcher saw: for each rule of a batch, the file that wins the format
 * precedence (`.json` > `.yaml` > `.yml` > `.svc`, as at start) is decoded, checked and
 * compiled (`prepareFile`) and put in memory, or the rule is removed from memory when no file
 * is left. Nothing is written: the file is already on disk (persist = false).
 *
 * A broken file is logged and skipped: the version in memory keeps serving. A file this
 * instance wrote itself is not reloaded. A file whose content equals the loaded rule is left
 * alone (the façade's version-and-content check). Which file wins and which files are this
 * instance's own are the file store's to say (`RuleFiles.current`): the layout, the precedence
 * and the echo suppression live there.
 *
 * Stale reads: each file is looked at under a token of the rules dir's record of own changes
 * (`RuleFiles.own`, ./own-files.ts in the store), taken before the file is read and passed with
 * the change; a store refuses the change ('stale') when this instance's own change of that file
 * (an API put or delete) has landed since, and the file is read again (up to `MAX_READS` times).
 *
 * Data files (`data/<name>.json`, `tenants/<id>/data/<name>.json`) the same way: the file is
 * read (strict JSON) and applied as a `data.put` (or a `data.delete` when it is gone) through
 * the façade, which checks `--max-data-bytes`. A file that is not JSON or too large is logged
 * and skipped; a file holding exactly what this instance last wrote there is its own write
 * (the record of own changes) and is not reloaded.
 *
 * Shadow files (`shadows/<name>.json`, `tenants/<id>/shadows/<name>.json`) likewise, as
 * `shadow.put` / `shadow.delete` (`reconcileShadow`).
 */
import { readRuleFile } from '../signing/index.js';
import { dataFilePath, maxDataFileBytes, readDataFile } from '../store/data-files.js';
import { dataVersionOf } from '../store/data-record.js';
import { parseShadowValue, shadowRecord } from '../store/shadow-record.js';
import { shadowPath } from '../store/shadow-store.js';
import type { RuleFiles } from '../store/types.js';
import { errorText } from './broker-link.js';
import type { SyncTarget } from './sync-types.js';
import type { Logger } from '../log.js';

/** Outcome counts of one batch. */
export interface ReconcileCounts {
  applied: number;
  removed: number;
  unchanged: number;
  own: number;
  failed: number;
  /** The same for data files. */
  data_applied: number;
  data_removed: number;
  data_own: number;
  data_failed: number;
  /** The same for shadow files. */
  shadow_applied: number;
  shadow_removed: number;
  shadow_own: number;
  shadow_failed: number;
  /** Reads (of any kind of file) refused as stale and read again. */
  stale: number;
}

/** Reads of one file per reconcile, when this instance's own changes keep overtaking them. */
export const MAX_READS = 5;

/** One reconcile of one file: the outcome of what it applied. */
type Attempt = (counts: ReconcileCounts) => Promise<'stale' | 'done'>;

/** Reconciles rules of the rules dir with memory (see the module comment). */
export class FileReconciler {
  constructor(
    private readonly files: RuleFiles,
    private readonly target: SyncTarget,
    private readonly logger: Logger,
    private readonly rulesDir: string,
    /** `--max-data-bytes` (bounds the size of a data file read: `maxDataFileBytes`). */
    private readonly maxDataBytes?: number,
  ) {}

  /** New zeroed counters. */
  static counts(): ReconcileCounts {
    return {
      applied: 0,
      removed: 0,
      unchanged: 0,
      own: 0,
      failed: 0,
      data_applied: 0,
      data_removed: 0,
      data_own: 0,
      data_failed: 0,
      shadow_applied: 0,
      shadow_removed: 0,
      shadow_own: 0,
      shadow_failed: 0,
      stale: 0,
    };
  }

  /**
   * Runs `attempt` until its read is not stale (see the module comment); after `MAX_READS`
   * stale reads the file is left for its next event, counted as failed (`failed`).
   */
  private async reread(what: string, tenant: string, name: string, counts: ReconcileCounts, failed: keyof ReconcileCounts, attempt: Attempt): Promise<void> {
    for (let read = 1; ; read++) {
      if ((await attempt(counts)) === 'done') return;
      counts.stale++;
      if (read === MAX_READS) {
        counts[failed]++;
        this.logger.warn({ tenant, name, reads: read }, `${what} file skipped: this instance kept changing it while it was read`);
        return;
      }
    }
  }

  /** Brings the rule `(tenant, name)` in memory in line with its files; adds to `counts`. */
  reconcile(tenant: string, name: string, counts: ReconcileCounts): Promise<void> {
    return this.reread('rule', tenant, name, counts, 'failed', (c) => this.reconcileRule(tenant, name, c));
  }

  private async reconcileRule(tenant: string, name: string, counts: ReconcileCounts): Promise<'stale' | 'done'> {
    const found = await this.files.current(tenant, name);
    const { token } = found;
    if (found.kind === 'none') {
      const outcome = await this.target.applyChange({ kind: 'ruleset.delete', tenant, name }, 'watch', false, token);
      if (outcome === 'stale') return outcome;
      if (outcome === 'applied') {
        counts.removed++;
        this.logger.info({ tenant, name }, 'rule removed: its file is gone');
      } else counts.unchanged++;
      return 'done';
    }
    if (found.kind === 'own') {
      counts.own++;
      return 'done';
    }
    const { path } = found;
    let outcome;
    try {
      const bytes = await readRuleFile(path);
      const record = this.target.prepareFile({ tenant, name, path, bytes });
      if (record.name !== name) {
        throw new Error(`ruleset name ${JSON.stringify(record.name)} differs from the file name ${JSON.stringify(name)}`);
      }
      outcome = await this.target.applyChange({ kind: 'ruleset.file', record }, 'watch', false, token);
    } catch (err) {
      // NOTE: a file that fails to read or compile may be a read older than an own change: read again.
      if (!this.files.own.isCurrent(token)) return 'stale';
      counts.failed++;
      const serving = this.target.current(tenant, name)?.version ?? null;
      this.logger.warn({ path, err: errorText(err), serving_version: serving }, 'rule file skipped; the loaded version keeps serving');
      return 'done';
    }
    if (outcome === 'stale') return outcome;
    if (outcome === 'applied') {
      counts.applied++;
      this.logger.info({ tenant, name, path, version: this.target.current(tenant, name)?.version }, 'rule reloaded from file');
    } else if (outcome === 'unchanged') counts.unchanged++;
    else counts.failed++;
    return 'done';
  }

  /** Brings the dataset `(tenant, name)` in memory in line with its file; adds to `counts`. */
  reconcileData(tenant: string, name: string, counts: ReconcileCounts): Promise<void> {
    return this.reread('data', tenant, name, counts, 'data_failed', (c) => this.reconcileDataFile(tenant, name, c));
  }

  private async reconcileDataFile(tenant: string, name: string, counts: ReconcileCounts): Promise<'stale' | 'done'> {
    const path = dataFilePath(this.rulesDir, tenant, name);
    const token = this.files.own.token(path);
    let value;
    try {
      value = await readDataFile(path, maxDataFileBytes(this.maxDataBytes));
    } catch (err) {
      if (!this.files.own.isCurrent(token)) return 'stale';
      counts.data_failed++;
      const serving = this.target.currentData(tenant, name)?.version ?? null;
      this.logger.warn({ path, err: errorText(err), serving_version: serving }, 'data file skipped; the loaded version keeps serving');
      return 'done';
    }
    if (value === undefined) {
      const outcome = await this.target.applyChange({ kind: 'data.delete', tenant, name }, 'watch', false, token);
      if (outcome === 'stale') return outcome;
      if (outcome === 'applied') {
        counts.data_removed++;
        this.logger.info({ tenant, name }, 'dataset removed: its file is gone');
      } else counts.unchanged++;
      return 'done';
    }
    if (this.files.own.isOwn(path, dataVersionOf(JSON.stringify(value)))) {
      counts.data_own++;
      return 'done';
    }
    const outcome = await this.target.applyChange({ kind: 'data.put', tenant, name, value }, 'watch', false, token);
    if (outcome === 'stale') return outcome;
    if (outcome === 'applied') {
      counts.data_applied++;
      this.logger.info({ tenant, name, path, version: this.target.currentData(tenant, name)?.version }, 'dataset reloaded from file');
    } else if (outcome === 'unchanged') counts.unchanged++;
    else counts.data_failed++; // the façade logged why (size, name)
    return 'done';
  }

  /**
   * Brings the shadow run of `(tenant, name)` in memory in line with its file: a `shadow.put`
   * through the façade (which compiles the candidate), or a `shadow.delete` when the file is
   * gone. A file that is not a valid shadow is logged and skipped; a file holding what this
   * instance last wrote there is not reapplied.
   */
  reconcileShadow(tenant: string, name: string, counts: ReconcileCounts): Promise<void> {
    return this.reread('shadow', tenant, name, counts, 'shadow_failed', (c) => this.reconcileShadowFile(tenant, name, c));
  }

  private async reconcileShadowFile(tenant: string, name: string, counts: ReconcileCounts): Promise<'stale' | 'done'> {
    const path = shadowPath(this.rulesDir, tenant, name);
    const token = this.files.own.token(path);
    let text: string | undefined;
    try {
      text = (await readRuleFile(path)).toString('utf8'); // a ruleset inside: the rule-file size limit
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text === undefined) {
      const outcome = await this.target.applyChange({ kind: 'shadow.delete', tenant, name }, 'watch', false, token);
      if (outcome === 'stale') return outcome;
      if (outcome === 'applied') {
        counts.shadow_removed++;
        this.logger.info({ tenant, name }, 'shadow removed: its file is gone');
      } else counts.unchanged++;
      return 'done';
    }
    let version: string;
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
      const v = parseShadowValue(value);
      version = shadowRecord(tenant, name, v.candidate, v.sampleRate, v.since).version;
    } catch (err) {
      if (!this.files.own.isCurrent(token)) return 'stale';
      counts.shadow_failed++;
      const serving = this.target.currentShadow(tenant, name)?.version ?? null;
      this.logger.warn({ path, err: errorText(err), serving_version: serving }, 'shadow file skipped; the loaded version keeps serving');
      return 'done';
    }
    if (this.files.own.isOwn(path, version)) {
      counts.shadow_own++;
      return 'done';
    }
    const outcome = await this.target.applyChange({ kind: 'shadow.put', tenant, name, value }, 'watch', false, token);
    if (outcome === 'stale') return outcome;
    if (outcome === 'applied') {
      counts.shadow_applied++;
      this.logger.info({ tenant, name, path, version }, 'shadow reloaded from file');
    } else if (outcome === 'unchanged') counts.unchanged++;
    else counts.shadow_failed++; // the façade logged why
    return 'done';
  }

  /** Every shadow of a tenant that is in memory (for a removed tenant or shadows directory). */
  shadowsInMemory(tenant: string): string[] {
    const names: string[] = [];
    for (const entry of this.target.snapshot()) if (entry.kind === 'shadow.put' && entry.record.tenant === tenant) names.push(entry.record.name);
    return names;
  }

  /** Every dataset of a tenant that is in memory (for a removed tenant or data directory). */
  dataInMemory(tenant: string): string[] {
    const names: string[] = [];
    for (const entry of this.target.snapshot()) if (entry.kind === 'data.put' && entry.record.tenant === tenant) names.push(entry.record.name);
    return names;
  }

  /** Every rule of a tenant that is in memory (for a removed tenant directory). */
  namesInMemory(tenant: string): string[] {
    const names: string[] = [];
    for (const entry of this.target.snapshot()) if (entry.kind === 'ruleset.put' && entry.record.tenant === tenant) names.push(entry.record.name);
    return names;
  }
}
