/**
 * What the sync adapters need from the rest of the server, as small interfaces: a logger and
 * the façade's sync entry points (implemented by `RuleService`). Unit tests pass fakes.
 */
import type { ApplyOutcome } from '../service/rule-service.js';
import type { PrepareFile, RuleRecord, RuleStore } from '../store/types.js';

/** Structured log (pino-compatible subset). */
export interface SyncLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

/** Origin of a change applied by a sync adapter. */
export type SyncOrigin = 'sync' | 'watch';

/** The façade, as seen by the sync adapters. */
export interface SyncTarget {
  /** Reads and change events. */
  readonly store: RuleStore;
  /** Decodes, checks (signature policy for local files) and compiles a rule file. */
  readonly prepareFile: PrepareFile;
  /** Applies a ruleset document received from the broker. */
  applyPut(tenant: string, doc: unknown, origin: SyncOrigin, persist: boolean): Promise<ApplyOutcome>;
  /** Applies a record prepared from a rule file. */
  applyRecord(record: RuleRecord, origin: SyncOrigin, persist: boolean): Promise<ApplyOutcome>;
  /** Applies a deletion. */
  applyDelete(tenant: string, name: string, origin: SyncOrigin, persist: boolean): Promise<ApplyOutcome>;
  /** Installs the provider of the `sync` block of `/health`. */
  setSyncStatus(fn: () => Record<string, unknown>): void;
}
