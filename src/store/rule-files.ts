/**
 * The reconcile-from-disk capability of the file store (`RuleFiles`): what the rules dir holds
 * now for one ruleset, by the format precedence of the load (`scan.ts`), and whether that file
 * is the store's own write (echo suppression, SPEC.md 8), with the token that lets the store
 * refuse what the watcher read once an own change has overtaken it (./own-files.ts). The store
 * reports each rule file it writes with the fingerprint the atomic write returned (inode, size,
 * mtime: a hand edit or another process's write changes it; an atomic write even gets a new
 * inode), and each one it removes, so nothing is looked up under its write lock. The record of
 * own changes (`own`) is the rules dir's one: the data and shadow stores write theirs there too.
 */
import { stat } from 'node:fs/promises';
import type { FileFingerprint } from './atomic-write.js';
import { rulePath } from './layout.js';
import { OwnFiles } from './own-files.js';
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
  readonly own: OwnFiles;

  /** `now`: clock in ms (expiry of remembered writes). */
  constructor(
    readonly rulesDir: string,
    now: () => number,
  ) {
    this.own = new OwnFiles({ clock: { now } });
  }

  /**
   * The key of a ruleset's own changes: its `.json` file, the one every write of the store
   * makes (a delete removes every format, and is recorded there too).
   */
  key(tenant: string, name: string): string {
    return rulePath(this.rulesDir, tenant, name, '.json');
  }

  /** Records that the store wrote `path` (fingerprint from `atomicWrite`). */
  wrote(path: string, fingerprint: FileFingerprint): void {
    this.own.changed(path, fingerprintKey(fingerprint));
  }

  async current(tenant: string, name: string): Promise<CurrentRuleFile> {
    // NOTE: the token first: an own change that lands while the file is looked at makes it stale.
    const token = this.own.token(this.key(tenant, name));
    const found = await currentRuleFile(this.rulesDir, tenant, name);
    if (!found) return { kind: 'none', token };
    if (this.own.isOwn(found.path, fingerprintKey(found.fingerprint))) return { kind: 'own', path: found.path, token };
    return { kind: 'file', path: found.path, token };
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

function fingerprintKey(fp: FileFingerprint): string {
  return `${fp.ino}:${fp.size}:${fp.mtimeMs}`;
}
