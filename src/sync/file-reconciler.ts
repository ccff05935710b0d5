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
 */
import { readFile } from 'node:fs/promises';
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
}

/** Reconciles rules of the rules dir with memory (see the module comment). */
export class FileReconciler {
  constructor(
    private readonly files: RuleFiles,
    private readonly target: SyncTarget,
    private readonly logger: Logger,
  ) {}

  /** New zeroed counters. */
  static counts(): ReconcileCounts {
    return { applied: 0, removed: 0, unchanged: 0, own: 0, failed: 0 };
  }

  /** Brings the rule `(tenant, name)` in memory in line with its files; adds to `counts`. */
  async reconcile(tenant: string, name: string, counts: ReconcileCounts): Promise<void> {
    const found = await this.files.current(tenant, name);
    if (found.kind === 'none') {
      const outcome = await this.target.applyChange({ kind: 'ruleset.delete', tenant, name }, 'watch', false);
      if (outcome === 'applied') {
        counts.removed++;
        this.logger.info({ tenant, name }, 'rule removed: its file is gone');
      } else counts.unchanged++;
      return;
    }
    if (found.kind === 'own') {
      counts.own++;
      return;
    }
    const { path } = found;
    let outcome;
    try {
      const bytes = await readFile(path);
      const record = this.target.prepareFile({ tenant, name, path, bytes });
      if (record.name !== name) {
        throw new Error(`ruleset name ${JSON.stringify(record.name)} differs from the file name ${JSON.stringify(name)}`);
      }
      outcome = await this.target.applyChange({ kind: 'ruleset.file', record }, 'watch', false);
    } catch (err) {
      counts.failed++;
      const serving = this.target.current(tenant, name)?.version ?? null;
      this.logger.warn({ path, err: errorText(err), serving_version: serving }, 'rule file skipped; the loaded version keeps serving');
      return;
    }
    if (outcome === 'applied') {
      counts.applied++;
      this.logger.info({ tenant, name, path, version: this.target.current(tenant, name)?.version }, 'rule reloaded from file');
    } else if (outcome === 'unchanged') counts.unchanged++;
    else counts.failed++;
  }

  /** Every rule of a tenant that is in memory (for a removed tenant directory). */
  namesInMemory(tenant: string): string[] {
    const names: string[] = [];
    for (const entry of this.target.snapshot()) if (entry.kind === 'ruleset.put' && entry.record.tenant === tenant) names.push(entry.record.name);
    return names;
  }
}
