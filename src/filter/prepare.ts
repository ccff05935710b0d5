/**
 * What the filter keeps per compiled ruleset: the shared conditions (partial evaluations that
 * read no known field) and the per-expression memo of partial evaluation. Owned by the compiled
 * ruleset (`CompiledRuleset.derived`), built on its first filter call: repeated filter calls on a
 * stored ruleset parse and compile nothing, and the state goes away with the compiled value. The
 * graph facts come from the compiled ruleset itself (`CompiledRuleset.graph`).
 */
import { DerivedSlot, stepsReaching, type BranchInfo, type CompiledRuleset } from '../ruleset/index.js';
import type { CallSites } from './call-input.js';
import type { Branch } from './condition.js';
import { newExprMemo, type ExprMemo } from './partial-eval.js';
import { FILTER_FORMATS, type FilterFormat } from './types.js';

/** A compiled ruleset with the filter's state. */
export interface PreparedRuleset {
  readonly compiled: CompiledRuleset;
  /**
   * Conditions that read no known field, shared by every request on this compiled ruleset.
   * NOTE (speed): most conditions only read unknown fields; their predicates (with their cached
   * keys and negations) are built once per ruleset instead of once per request.
   */
  readonly sharedConditions: Map<BranchInfo, Branch>;
  /**
   * Conditions that read known fields, by the known values they read (partial-eval.ts
   * `knownKey`), at most `KNOWN_MAX` per condition (a full one starts over). NOTE (speed): callers
   * repeat their known values (a channel, a region, a tier); their predicates, with the keys,
   * texts and reductions cached on them, are then built once, not on every request.
   */
  readonly knownConditions: Map<BranchInfo, Map<string, Branch>>;
  readonly memo: ExprMemo;
  /** Its call steps' callees as seen through their input mappings (call-input.ts). */
  readonly callSites: CallSites;
  /** The steps from which some terminal can be reached: what a walk of it as a callee enters (planner.ts). */
  readonly calleeLive: ReadonlySet<string>;
  /**
   * Checked columns of unmapped fields, per format (columns.ts `resolveColumns`): at most the
   * ruleset's fields. NOTE (speed): the identifier and reserved-word checks run once per field.
   */
  readonly columns: ReadonlyMap<FilterFormat, Map<string, string>>;
  /**
   * The column maps of answers without a field mapping, by format and fields (`columnMapFor`).
   * NOTE (speed): a repeated request gets the same map object, and the emitters' texts cached on
   * the conditions are kept per map object (sql.ts), so they are reused across requests.
   */
  readonly columnMaps: Map<string, ReadonlyMap<string, string>>;
  /**
   * The steps from which a terminal with one of the target codes can be reached, per set of
   * target codes (`liveFor`). NOTE (speed): a walk of the graph per request otherwise.
   */
  readonly live: Map<string, ReadonlySet<string>>;
}

/** At most this many known-value texts per condition keep their predicates. */
export const KNOWN_MAX = 8;

/** At most this many sets of fields keep their column maps (a full cache starts over). */
const COLUMN_MAPS_MAX = 32;

/**
 * The column map of `fields` (sorted) for `format` when the request maps no field: one map object
 * per format and set of fields (cached, bounded). `build` makes it (and throws for an unsafe
 * column, which is then not cached).
 */
export function columnMapFor(
  prepared: PreparedRuleset,
  format: FilterFormat,
  fields: readonly string[],
  build: () => ReadonlyMap<string, string>,
): ReadonlyMap<string, string> {
  const key = `${format}:${JSON.stringify(fields)}`;
  let map = prepared.columnMaps.get(key);
  if (map === undefined) {
    map = build();
    if (prepared.columnMaps.size >= COLUMN_MAPS_MAX) prepared.columnMaps.clear();
    prepared.columnMaps.set(key, map);
  }
  return map;
}

/** At most this many target sets keep their live steps (a full cache starts over). */
const LIVE_MAX = 32;

/** The steps from which a terminal whose code is in `targets` can be reached (cached per target set). */
export function liveFor(prepared: PreparedRuleset, targets: ReadonlySet<string>): ReadonlySet<string> {
  const key = JSON.stringify([...targets].sort());
  let live = prepared.live.get(key);
  if (live === undefined) {
    live = stepsReaching(prepared.compiled.graph, targets);
    if (prepared.live.size >= LIVE_MAX) prepared.live.clear();
    prepared.live.set(key, live);
  }
  return live;
}

const PREPARED = new DerivedSlot<PreparedRuleset>('filter');

/** The filter state of `compiled` (built on first use, then owned by `compiled`). */
export function prepare(compiled: CompiledRuleset): PreparedRuleset {
  return compiled.derived.get(PREPARED, () =>
    Object.freeze({
      compiled,
      sharedConditions: new Map(),
      knownConditions: new Map(),
      memo: newExprMemo(),
      callSites: new Map(),
      calleeLive: stepsReaching(compiled.graph, compiled.graph.terminalsByCode.keys()),
      columns: new Map(FILTER_FORMATS.map((f) => [f, new Map<string, string>()])),
      live: new Map(),
      columnMaps: new Map(),
    }),
  );
}
