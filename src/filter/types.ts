/**
 * Request and response of the filter endpoint (SPEC.md "POST /rulesets/:name/filter").
 */
import type { JsonValue } from '../expr/ast.js';

/** Output format of a filter. */
export type FilterFormat = 'sql' | 'json' | 'mongo';

/** Every format, in the order the docs list them. */
export const FILTER_FORMATS: readonly FilterFormat[] = Object.freeze(['sql', 'json', 'mongo']);

/** Default `max_paths` (SPEC.md "Limits"). */
export const DEFAULT_MAX_PATHS = 100;

/** A validated filter request, defaults applied. */
export interface FilterRequest {
  /** Fields known at query time (nested objects address dotted paths). */
  readonly known_input: Readonly<Record<string, JsonValue>>;
  /** Result codes that count as a match (non-empty). */
  readonly target_results: readonly string[];
  readonly format: FilterFormat;
  /** Rule field path → column name. */
  readonly field_mapping: Readonly<Record<string, string>>;
  /** Maximum paths collected; 0 means unlimited. */
  readonly max_paths: number;
  /** The time `now()` reads (canonical text, EXTENSIONS.md 3), or null: the clock at request time. */
  readonly now?: string | null;
}

/** A predicate-tree node of the `json` format (SPEC.md "Predicate-tree output"). */
export type JsonFilterNode =
  | { type: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'; field: string; value: JsonValue }
  | { type: 'and' | 'or'; conditions: JsonFilterNode[] }
  | { type: 'not'; condition: JsonFilterNode }
  | { type: 'in' | 'not_in'; field: string; values: JsonValue[] }
  | { type: 'contains' | 'starts_with' | 'ends_with'; field: string; value: JsonValue }
  | { type: 'is_null' | 'not_null'; field: string }
  | { type: 'always' | 'never' };

/** A Mongo `$match` document. */
export type MongoFilter = { [key: string]: JsonValue };

/** The response body of the filter endpoint. `truncated` is always present. */
export interface FilterResponse {
  readonly format: FilterFormat;
  /** SQL text, predicate tree or Mongo document; null when `never_matches`. */
  readonly filter: string | JsonFilterNode | MongoFilter | null;
  readonly always_matches: boolean;
  readonly never_matches: boolean;
  readonly truncated: boolean;
  /** Rule field paths that appear (as columns) in the filter, sorted. */
  readonly unknown_fields: string[];
  /**
   * True unless a documented fallback made the filter a superset (EXTENSIONS.md 3 and 6):
   * truncation, the variable fallback (a variable read where its value cannot be written), a
   * failure no condition can write.
   */
  readonly exact: boolean;
}
