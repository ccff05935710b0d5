/**
 * The data files of a rules dir (reference data, ./data-store.ts for the layout):
 * `<dir>/data/<name>.json` for the default tenant, `<dir>/tenants/<id>/data/<name>.json` for the
 * others. Listing them (the start-up load and the watcher's scans) and reading one (strict JSON)
 * live here, so the layout is known in one place with the store.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue } from '../expr/ast.js';
import { isValidRulesetName } from '../ruleset/model.js';
import { readFileBounded } from '../signing/index.js';
import { isTempFileName } from './atomic-write.js';
import { TENANTS_DIR, tenantDir } from './layout.js';
import { DEFAULT_TENANT } from './record.js';

/** Directory of a tenant's datasets, inside its tenant directory. */
export const DATA_DIR = 'data';

/** One data file found by a scan. */
export interface DataFileEntry {
  readonly tenant: string;
  readonly name: string;
  readonly path: string;
  readonly mtimeMs: number;
}

/** A file of the data directory that is not a dataset file. */
export interface SkippedDataFile {
  readonly path: string;
  readonly reason: string;
}

/** The file of a dataset (name and tenant validated by `tenantDir` and the caller). */
export function dataFilePath(rulesDir: string, tenant: string, name: string): string {
  return join(tenantDir(rulesDir, tenant), DATA_DIR, `${name}.json`);
}

/** The dataset name of a file name (`<name>.json`), or undefined. */
export function dataNameOf(fileName: string): string | undefined {
  if (!fileName.endsWith('.json')) return undefined;
  const name = fileName.slice(0, -'.json'.length);
  return isValidRulesetName(name) ? name : undefined;
}

/**
 * Every data file of the rules dir (tenants of `only` when given), and the entries of the data
 * directories that are not dataset files (dotfiles and temp files of atomic writes are neither).
 */
export async function scanDataFiles(rulesDir: string, only?: ReadonlySet<string>): Promise<{ files: DataFileEntry[]; skipped: SkippedDataFile[] }> {
  const files: DataFileEntry[] = [];
  const skipped: SkippedDataFile[] = [];
  const others = (await names(join(rulesDir, TENANTS_DIR))).filter((t) => isValidRulesetName(t) && t !== DEFAULT_TENANT);
  for (const tenant of [DEFAULT_TENANT, ...others]) {
    if (only && !only.has(tenant)) continue;
    const dir = join(tenantDir(rulesDir, tenant), DATA_DIR);
    for (const file of await names(dir)) {
      if (file.startsWith('.') || isTempFileName(file)) continue;
      const path = join(dir, file);
      const name = dataNameOf(file);
      if (name === undefined) {
        skipped.push({ path, reason: 'not a dataset file (<name>.json)' });
        continue;
      }
      try {
        const st = await stat(path);
        if (st.isFile()) files.push({ tenant, name, path, mtimeMs: st.mtimeMs });
        else skipped.push({ path, reason: 'not a file' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') skipped.push({ path, reason: errorText(err) });
      }
    }
  }
  return { files, skipped };
}

/** The least bound of `maxDataFileBytes`: a data file up to this size is always read. */
export const DATA_FILE_FLOOR_BYTES = 64 * 1024 * 1024;

/**
 * The largest data file read, for a `--max-data-bytes` of `maxDataBytes`: four times that, at
 * least 64 MiB (docs/decisions.md "Data files read bounded"). The limit itself is on a dataset's
 * compact JSON, checked once the file is read; a larger file is refused from its size first, so
 * a huge file in the rules dir never reaches memory, while hand-written files with whitespace
 * (pretty-printed) near the limit still load.
 */
export function maxDataFileBytes(maxDataBytes: number | undefined): number {
  return Math.max(DATA_FILE_FLOOR_BYTES, 4 * (maxDataBytes ?? 0));
}

/**
 * The value of a data file; undefined when the file does not exist. Throws when it is not JSON,
 * or when it is larger than `maxFileBytes` (then before reading any of it).
 */
export async function readDataFile(path: string, maxFileBytes: number = DATA_FILE_FLOOR_BYTES): Promise<JsonValue | undefined> {
  let text: string;
  try {
    const bytes = await readFileBounded(path, maxFileBytes, (size) => new Error(`file is ${size} bytes, over the ${maxFileBytes}-byte limit for data files`));
    text = bytes.toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw new Error(`not JSON: ${errorText(err)}`);
  }
}

/** Entry names of a directory; none when it does not exist. */
async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
