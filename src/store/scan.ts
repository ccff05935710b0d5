/**
 * Finds the rule files of a rules directory for `load`: the default tenant at the root and every
 * tenant under `tenants/<id>/` (DECISIONS.md 4 and 8). Only the directory is read here; decoding
 * is the caller's `PrepareFile`.
 *
 * Ignored silently: dotfiles and dot-directories (`.versions`, `.health_probe`, temp files of
 * atomic writes), files whose extension is not a rule format, the tenant registry `tenants.json`
 * at the root. Reported as skipped: rule files with an invalid name, rule-format entries that are
 * not regular files, tenant directories with an invalid id, and files that lose the format
 * precedence (`.json` > `.yaml` > `.yml` > `.svc`) to another file of the same ruleset.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isValidRulesetName } from '../ruleset/model.js';
import type { FileFingerprint } from './atomic-write.js';
import { RULE_FILE_EXTENSIONS, TENANTS_DIR, TENANTS_FILE, isReservedName, parseRuleFileName, rulePath, type RuleFileExtension } from './layout.js';
import { DEFAULT_TENANT } from './types.js';

/** A rule file chosen for loading. */
export interface FoundRuleFile {
  readonly tenant: string;
  readonly name: string;
  readonly ext: RuleFileExtension;
  readonly path: string;
}

/** A file or directory that will not be loaded, and why. */
export interface SkippedEntry {
  readonly path: string;
  readonly reason: string;
}

/** Result of `scanRulesDir`: files in (tenant, name) order, and the entries skipped. */
export interface ScanResult {
  readonly files: FoundRuleFile[];
  readonly skipped: SkippedEntry[];
}

/** Scans `rulesDir` (see the module comment). A missing directory gives an empty result. */
export async function scanRulesDir(rulesDir: string): Promise<ScanResult> {
  const found: FoundRuleFile[] = [];
  const skipped: SkippedEntry[] = [];
  await scanTenantDir(rulesDir, DEFAULT_TENANT, true, found, skipped);

  const tenantsRoot = join(rulesDir, TENANTS_DIR);
  for (const entry of await readEntries(tenantsRoot)) {
    if (entry.name.startsWith('.')) continue;
    const path = join(tenantsRoot, entry.name);
    if (!(await isDirectory(entry, path))) continue;
    if (!isValidRulesetName(entry.name)) {
      skipped.push({ path, reason: `invalid tenant id ${JSON.stringify(entry.name)}` });
    } else if (entry.name === DEFAULT_TENANT) {
      skipped.push({ path, reason: `tenant "${DEFAULT_TENANT}" lives at the rules dir root, not under ${TENANTS_DIR}/` });
    } else {
      await scanTenantDir(path, entry.name, false, found, skipped);
    }
  }
  return { files: applyPrecedence(found, skipped), skipped };
}

async function scanTenantDir(dir: string, tenant: string, isRoot: boolean, found: FoundRuleFile[], skipped: SkippedEntry[]): Promise<void> {
  for (const entry of await readEntries(dir)) {
    if (entry.name.startsWith('.')) continue;
    if (isRoot && entry.name === TENANTS_FILE) continue;
    const parsed = parseRuleFileName(entry.name);
    if (!parsed) continue;
    const path = join(dir, entry.name);
    if (!(await isFile(entry, path))) {
      skipped.push({ path, reason: 'not a regular file' });
    } else if (!isValidRulesetName(parsed.name)) {
      skipped.push({ path, reason: `invalid ruleset name ${JSON.stringify(parsed.name)} (file base name)` });
    } else if (isReservedName(tenant, parsed.name)) {
      skipped.push({ path, reason: `ruleset name "${parsed.name}" is reserved at the rules dir root (${TENANTS_FILE} is the tenant registry)` });
    } else {
      found.push({ tenant, name: parsed.name, ext: parsed.ext, path });
    }
  }
}

/**
 * The file of one ruleset that wins the format precedence now (the same order as
 * `scanRulesDir`: the first extension of RULE_FILE_EXTENSIONS that is a regular file), with its
 * fingerprint; undefined when none is left. For the watcher's reconcile of a single ruleset.
 */
export async function currentRuleFile(rulesDir: string, tenant: string, name: string): Promise<{ path: string; fingerprint: FileFingerprint } | undefined> {
  for (const ext of RULE_FILE_EXTENSIONS) {
    const path = rulePath(rulesDir, tenant, name, ext);
    const st = await stat(path).catch(() => undefined);
    if (st?.isFile()) return { path, fingerprint: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } };
  }
  return undefined;
}

/** Keeps one file per (tenant, name) by extension precedence; the others go to `skipped`. */
function applyPrecedence(found: FoundRuleFile[], skipped: SkippedEntry[]): FoundRuleFile[] {
  const rank = (ext: RuleFileExtension): number => RULE_FILE_EXTENSIONS.indexOf(ext);
  const sorted = [...found].sort((a, b) => cmp(a.tenant, b.tenant) || cmp(a.name, b.name) || rank(a.ext) - rank(b.ext));
  const winners: FoundRuleFile[] = [];
  for (const file of sorted) {
    const last = winners.at(-1);
    if (last && last.tenant === file.tenant && last.name === file.name) {
      skipped.push({
        path: file.path,
        reason: `another file of ruleset "${file.name}" takes precedence: ${last.path} (order ${RULE_FILE_EXTENSIONS.join(' > ')})`,
      });
    } else {
      winners.push(file);
    }
  }
  return winners;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function readEntries(dir: string): Promise<Dirent[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.sort((a, b) => cmp(a.name, b.name));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}

async function isFile(entry: Dirent, path: string): Promise<boolean> {
  if (!entry.isSymbolicLink()) return entry.isFile();
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function isDirectory(entry: Dirent, path: string): Promise<boolean> {
  if (!entry.isSymbolicLink()) return entry.isDirectory();
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
