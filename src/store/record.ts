/**
 * The records of the store's rulesets collection: the stored ruleset and who caused a change.
 * The base of the store's types (types.ts, change.ts and tenant-record.ts build on it).
 */
import type { CompiledRuleset } from '../ruleset/compile.js';
import type { RulesetDoc, SignatureBlock } from '../ruleset/model.js';

/** Tenant id used when multi-tenancy is off. */
export const DEFAULT_TENANT = 'default';

/** One stored ruleset: the document as posted (without `_signature`) and its compiled form. */
export interface RuleRecord {
  readonly tenant: string;
  readonly name: string;
  /** `config.version` of the document (default applied). */
  readonly version: string;
  /** The document as posted, without `_signature`. Treat as immutable. */
  readonly doc: RulesetDoc;
  readonly compiled: CompiledRuleset;
  /**
   * The signature the document was uploaded or loaded with, if any. A persistent store writes
   * it back as `_signature` (current file and history), so a signed rule still verifies when
   * the server restarts with signatures required.
   */
  readonly signature?: SignatureBlock;
  /**
   * The service's execution state of this record (its metrics handle), set on its first
   * execution so that executions do not look it up by name (bench/NOTES.md "Many rulesets").
   * Opaque to the store: never written to disk, compared or synchronized.
   */
  runState?: unknown;
}

/** Who caused a change: an API call, a broker sync event, the file watcher, or the start-up load. */
export type Origin = 'api' | 'sync' | 'watch' | 'load';
