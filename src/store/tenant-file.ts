/**
 * The tenant registry file `<rules-dir>/tenants.json` (DECISIONS.md 8): `{"tenants": [record,
 * ...]}`, sorted by id, written atomically (temp file, fsync, rename, like every rule write).
 * Memory-only mode has no file: the registry then lives in memory only.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { atomicWrite } from './atomic-write.js';
import { TENANTS_FILE } from './layout.js';
import { parseTenantsDocument, tenantsDocument, type TenantRecord } from './tenant-record.js';

/** Reads and writes `tenants.json` of one rules dir. */
export class TenantFile {
  /** Absolute path of the file. */
  readonly path: string;

  constructor(rulesDir: string) {
    this.path = join(rulesDir, TENANTS_FILE);
  }

  /**
   * The records of the file, or null when there is no file. Throws an Error naming the file
   * and every problem when it is not valid JSON or a record is invalid.
   */
  async read(): Promise<TenantRecord[] | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new Error(`cannot read ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`${this.path} is not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    try {
      return parseTenantsDocument(value);
    } catch (err) {
      throw new Error(`${this.path} is invalid: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Replaces the file with `records` (atomically). */
  async write(records: Iterable<TenantRecord>): Promise<void> {
    await atomicWrite(this.path, `${JSON.stringify(tenantsDocument(records), null, 2)}\n`);
  }
}
