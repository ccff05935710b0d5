/**
 * Removal of the temp files an interrupted atomic write left behind (EXTENSIONS.md 6 "Files":
 * removed at the next start). `atomicWrite` (./atomic-write.ts) writes `.<base>.<pid>.<hex>.tmp`
 * beside its target; a process killed between open and rename leaves that file for good. The
 * places it writes in a rules dir: the root (default tenant's rule files, `tenants.json`), each
 * `tenants/<id>/`, and each `.versions/<name>/` history directory under both.
 */
import type { Dirent } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TENANTS_DIR, VERSIONS_DIR } from './layout.js';

/** The name `tempPathFor` gives: `.` + target base name + `.<pid>.<12 hex digits>.tmp`. */
const TEMP_FILE_RE = /^\..+\.[0-9]+\.[0-9a-f]{12}\.tmp$/;

/** True when `fileName` is a temp file name of `atomicWrite` (not any dotfile ending in `.tmp`). */
export function isAtomicTempName(fileName: string): boolean {
  return TEMP_FILE_RE.test(fileName);
}

/**
 * Removes every temp file of an interrupted atomic write under `rulesDir` (see the module
 * comment) and returns their paths. A file that cannot be removed is left and not counted.
 * NOTE: call it only before the store writes anything (at start): a temp file of a write in
 * progress looks the same as one left by a crash.
 */
export async function removeStaleTempFiles(rulesDir: string): Promise<string[]> {
  const removed: string[] = [];
  await sweepTenantDir(rulesDir, removed);
  const tenantsRoot = join(rulesDir, TENANTS_DIR);
  for (const entry of await entries(tenantsRoot)) {
    if (entry.isDirectory() && !entry.name.startsWith('.')) await sweepTenantDir(join(tenantsRoot, entry.name), removed);
  }
  return removed;
}

/** A tenant directory, then each history directory in its `.versions/`. */
async function sweepTenantDir(dir: string, removed: string[]): Promise<void> {
  await sweepDir(dir, removed);
  const versions = join(dir, VERSIONS_DIR);
  for (const entry of await entries(versions)) {
    if (entry.isDirectory()) await sweepDir(join(versions, entry.name), removed);
  }
}

async function sweepDir(dir: string, removed: string[]): Promise<void> {
  for (const entry of await entries(dir)) {
    if (!entry.isFile() || !isAtomicTempName(entry.name)) continue;
    const path = join(dir, entry.name);
    try {
      await rm(path);
      removed.push(path);
    } catch {
      // NOTE: left for the next start; the loaders skip temp files anyway.
    }
  }
}

/** The entries of `dir`; none when it does not exist or cannot be read. */
async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
