/**
 * Applies what the watcher saw: for each rule of a batch, the file that wins the format
 * precedence (`.json` > `.yaml` > `.yml` > `.svc`, as at start) is decoded, checked and
 * compiled (`prepareFile`) and put in memory, or the rule is removed from memory when no file
 * is left. Nothing is written: the file is already on disk (persist = false).
 *
 * A broken file is logged and skipped: the version in memory keeps serving. A file this
 * instance wrote itself (`EchoFilter`) is not reloaded. A file whose content equals the loaded
 * rule is left alone (the façade's version-and-content check).
 */
import { readFile, stat } from 'node:fs/promises';
import { RULE_FILE_EXTENSIONS, rulePath } from '../store/layout.js';
import { errorText } from './broker-link.js';
import type { EchoFilter } from './echo-filter.js';
import type { SyncLogger, SyncTarget } from './sync-types.js';

/** Outcome counts of one batch. */
export interface ReconcileCounts {
  applied: number;
  removed: number;
  unchanged: number;
  own: number;
  failed: number;
}

/** Reconciles rules of the rules dir with memory (see the module comment). */
export class FileReconciler {
  constructor(
    private readonly rulesDir: string,
    private readonly target: SyncTarget,
    private readonly logger: SyncLogger,
    private readonly echo?: EchoFilter,
  ) {}

  /** New zeroed counters. */
  static counts(): ReconcileCounts {
    return { applied: 0, removed: 0, unchanged: 0, own: 0, failed: 0 };
  }

  /** Brings the rule `(tenant, name)` in memory in line with its files; adds to `counts`. */
  async reconcile(tenant: string, name: string, counts: ReconcileCounts): Promise<void> {
    const winner = await this.winningFile(tenant, name);
    if (!winner) {
      const outcome = await this.target.applyDelete(tenant, name, 'watch', false);
      if (outcome === 'applied') {
        counts.removed++;
        this.logger.info({ tenant, name }, 'rule removed: its file is gone');
      } else counts.unchanged++;
      return;
    }
    const { path, fp } = winner;
    if (this.echo?.isEcho(path, fp)) {
      counts.own++;
      return;
    }
    let outcome;
    try {
      const bytes = await readFile(path);
      const record = this.target.prepareFile({ tenant, name, path, bytes });
      if (record.name !== name) {
        throw new Error(`ruleset name ${JSON.stringify(record.name)} differs from the file name ${JSON.stringify(name)}`);
      }
      outcome = await this.target.applyRecord(record, 'watch', false);
    } catch (err) {
      counts.failed++;
      const serving = this.target.store.get(tenant, name)?.version ?? null;
      this.logger.warn({ path, err: errorText(err), serving_version: serving }, 'rule file skipped; the loaded version keeps serving');
      return;
    }
    if (outcome === 'applied') {
      counts.applied++;
      this.logger.info({ tenant, name, path, version: this.target.store.get(tenant, name)?.version }, 'rule reloaded from file');
    } else if (outcome === 'unchanged') counts.unchanged++;
    else counts.failed++;
  }

  /** Every rule of a tenant that is in memory (for a removed tenant directory). */
  namesInMemory(tenant: string): string[] {
    return this.target.store.list(tenant).map((r) => r.name);
  }

  private async winningFile(tenant: string, name: string) {
    for (const ext of RULE_FILE_EXTENSIONS) {
      const path = rulePath(this.rulesDir, tenant, name, ext);
      const st = await stat(path).catch(() => undefined);
      if (st?.isFile()) return { path, fp: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } };
    }
    return undefined;
  }
}
