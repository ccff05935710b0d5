/**
 * The rule store: capabilities (`types.ts`), the change stream (`change.ts`), the tenant
 * record and its file, memory and file implementations, and `createStore`,
 * which picks one from the configuration (`--rules-dir` set → persistent, else memory).
 */
import type { StoreLogger } from './emitter.js';
import { FileStore } from './file-store.js';
import { MemoryStore } from './memory-store.js';
import type { RuleStore } from './types.js';

export * from './types.js';
export * from './change.js';
export * from './tenant-record.js';
export { TenantFile } from './tenant-file.js';
export { TenantCollection } from './tenant-collection.js';
export { OwnFiles, StaleRead, type FileToken, type OwnFilesOptions } from './own-files.js';
export { classifyRulePath, isIgnoredPath, type RulePathKind } from './rule-paths.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { FileStore, DEFAULT_MAX_VERSIONS, type FileStoreOptions } from './file-store.js';
export { Emitter, type ListenerErrorHandler, type StoreLogger } from './emitter.js';
export { RwLock, LockTimeoutError, type Release } from './rw-lock.js';
export { atomicWrite, isTempFileName, type AtomicWriteOptions, type FileFingerprint } from './atomic-write.js';
export {
  HEALTH_PROBE_FILE,
  RULE_FILE_EXTENSIONS,
  TENANTS_DIR,
  TENANTS_FILE,
  VERSIONS_DIR,
  assertValidName,
  assertValidTenant,
  historyDir,
  parseRuleFileName,
  rulePath,
  tenantDir,
  type RuleFileExtension,
} from './layout.js';

/** Options of `createStore`. */
export interface CreateStoreOptions {
  /** Rules directory; null/undefined/empty → memory-only mode. */
  readonly rulesDir?: string | null;
  /** `--max-versions` (default 10). */
  readonly maxVersions?: number;
  readonly logger?: StoreLogger;
  /** Remove temp files of interrupted writes at the first load (default true; false for a reader). */
  readonly sweepTempFiles?: boolean;
}

/** Creates a `FileStore` when a rules dir is given (creating the dir), else a `MemoryStore`. */
export function createStore(options: CreateStoreOptions): RuleStore {
  if (options.rulesDir) {
    return new FileStore({
      rulesDir: options.rulesDir,
      ...(options.maxVersions !== undefined ? { maxVersions: options.maxVersions } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.sweepTempFiles !== undefined ? { sweepTempFiles: options.sweepTempFiles } : {}),
    });
  }
  return new MemoryStore(options.logger ? { logger: options.logger } : {});
}
