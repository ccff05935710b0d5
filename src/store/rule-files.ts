/**
 * The reconcile-from-disk capability of the file store (`RuleFiles`): what the rules dir holds
 * now for one ruleset, by the format precedence of the load (`scan.ts`), and whether that file
 * is the store's own write (echo suppression, SPEC.md 8). The store reports each file it writes
 * with the fingerprint the atomic write returned, and each file it removes, so nothing is looked
 * up under its write lock.
 */
import { stat } from 'node:fs/promises';
import type { FileFingerprint } from './atomic-write.js';
import { EchoFilter } from './echo-filter.js';
import { currentRuleFile, scanRulesDir } from './scan.js';
import type { CurrentRuleFile, RuleFiles } from './types.js';

/** A rule file found by `scan`, with its modification time. */
interface ScannedFile {
  readonly tenant: string;
  readonly name: string;
  readonly path: string;
  readonly mtimeMs: number;
}

/** `RuleFiles` of one rules dir (see the module comment). */
export class DiskRuleFiles implements RuleFiles {
  private readonly echo: EchoFilter;

  /** `now`: clock in ms (expiry of remembered writes). */
  constructor(
    readonly rulesDir: string,
    now: () => number,
  ) {
    this.echo = new EchoFilter({ clock: { now } });
  }

  /** Records that the store wrote `path` (fingerprint from `atomicWrite`). */
  wrote(path: string, fingerprint: FileFingerprint): void {
    this.echo.remember(path, fingerprint);
  }

  /** Records that the store removed `path`. */
  removed(path: string): void {
    this.echo.forget(path);
  }

  async current(tenant: string, name: string): Promise<CurrentRuleFile> {
    const found = await currentRuleFile(this.rulesDir, tenant, name);
    if (!found) return { kind: 'none' };
    if (this.echo.isEcho(found.path, found.fingerprint)) return { kind: 'own', path: found.path };
    return { kind: 'file', path: found.path };
  }

  async scan(): Promise<ScannedFile[]> {
    const out: ScannedFile[] = [];
    for (const file of (await scanRulesDir(this.rulesDir)).files) {
      // NOTE: a file gone since the scan counts as changed (Infinity): its rule is re-checked.
      const mtimeMs = await stat(file.path).then(
        (st) => st.mtimeMs,
        () => Infinity,
      );
      out.push({ tenant: file.tenant, name: file.name, path: file.path, mtimeMs });
    }
    return out;
  }
}
