/**
 * The behavioural diff of two versions of a ruleset (EXTENSIONS.md 4 "Behavioural diff",
 * docs/behavioral-diff.md): every region of the input space where the old version gives code `a`
 * and the new one code `b ≠ a`, as a predicate tree (the filter's `json` format, fields named by
 * their rule paths) and SQL text (the filter's default column mapping), with a witness input
 * checked by executing both versions. Pure: no `node:*` imports; the time `now()` reads comes in
 * as an option, else it is the engine's clock (expr/dates.ts) read once.
 *
 * How: the filter's path planner (filter/planner.ts) collects, per code of each version, every
 * path to a terminal with that code, with nothing known (every input field is a column). For each
 * pair of codes (a, b ≠ a) the region is the OR over pairs (old path to a) AND (new path to b),
 * each conjunction simplified and dropped when proved empty (pairs.ts), the survivors merged with
 * the filter's path simplification (filter/merge-paths.ts).
 *
 * Failures (docs/decisions.md "Behavioural diff: inputs on which a version fails"):
 * a path reaches a terminal only where every expression on it evaluates, so an input on which
 * either version fails (an evaluation error, no matching branch, a loop to the step limit) is in
 * no region: regions compare codes, as the filter selects codes.
 *
 * Limits: `maxPaths` paths per code and version, `maxPairs` path pairs examined, `maxRegions`
 * regions; hitting one sets `truncated` (the regions are then incomplete and `exact` is false).
 */
import { canonicalDate, nowState, setRequestNow } from '../expr/dates.js';
import { canonicalDateText, dataState, type DataSnapshot } from '../expr/index.js';
import { filterDefaults, type DiffTree } from './render.js';
import type { KnownInput } from '../filter/partial-eval.js';
import { planPaths, type CalleeResolver } from '../filter/planner.js';
import { prepare } from '../filter/prepare.js';
import { simplifyPaths } from '../filter/merge-paths.js';
import { finishPath, type Path } from '../filter/simplify.js';
import { stepsReaching, type CompiledRuleset } from '../ruleset/index.js';
import type { JsonFilterNode } from '../filter/index.js';
import type { Input } from '../analysis/witness.js';
import { conjoinPair, indexPath, type IndexedPath, type PairRegion } from './pairs.js';
import { WitnessSearch } from './witness.js';
import { jsonEqual } from '../ruleset/json.js';
import type { JsonValue } from '../expr/ast.js';

/** Default bound on the paths collected per code and version. */
export const DEFAULT_DIFF_MAX_PATHS = 1000;
/** Default bound on the (old path, new path) pairs examined. */
export const DEFAULT_DIFF_MAX_PAIRS = 100_000;
/** Default bound on the regions reported. */
export const DEFAULT_DIFF_MAX_REGIONS = 100;

/** Options of `behaviouralDiff`. */
export interface BehaviouralDiffOptions {
  /** Paths collected per code and version (the filter's `max_paths`); default 1000. */
  readonly maxPaths?: number;
  /** (old path, new path) pairs examined; default 100,000. */
  readonly maxPairs?: number;
  /** Regions reported; default 100. */
  readonly maxRegions?: number;
  /** The time `now()` reads (ISO 8601 text); default: the clock, read once for the whole diff. */
  readonly now?: string | null;
  /**
   * Reference data (`@name`). Absent: datasets are opaque (a condition reading one is taken
   * either way: `exact` false) and witnesses run without datasets. Given: its values are folded
   * like known input, and witnesses run with it.
   */
  readonly data?: DataSnapshot | null;
  /** Search witnesses (default true). */
  readonly witnesses?: boolean;
  /**
   * Call steps (EXTENSIONS.md 3): the tenant's current rulesets by name; both versions' calls are
   * expanded as filters expand them, and witnesses run them. Absent: a path through a call ends
   * (the engine would fail there with CALL_FAILED).
   */
  readonly calls?: CalleeResolver;
}

/** One region: the inputs on which the old version gives `from_code` and the new one `to_code`. */
export interface BehaviourRegion {
  readonly from_code: string;
  readonly to_code: string;
  /** Predicate tree (the filter's `json` format); `field` is the rule field path (`user.age`). */
  readonly condition: JsonFilterNode;
  /** SQL text with the filter's default columns (`user.age` → `user_age`); null when SQL cannot write it. */
  readonly sql: string | null;
  /** An input checked to give `from_code` then `to_code`, or null when none was found. */
  readonly witness: Input | null;
}

/** The behavioural diff (EXTENSIONS.md 4 `behavior`). */
export interface BehaviouralDiff {
  /** True only when no region exists and nothing was truncated. */
  readonly equivalent: boolean;
  /** False when a region may be a superset: a planner fallback, an inexpressible condition, truncation. */
  readonly exact: boolean;
  /** A limit stopped the diff: regions may be missing. */
  readonly truncated: boolean;
  readonly regions: readonly BehaviourRegion[];
}

/** The paths of one version, per code. */
interface VersionPaths {
  readonly byCode: Map<string, IndexedPath[]>;
  truncated: boolean;
  exact: boolean;
}

/** The behavioural diff of `from` (the old version) and `to` (the new one). */
export function behaviouralDiff(from: CompiledRuleset, to: CompiledRuleset, options: BehaviouralDiffOptions = {}): BehaviouralDiff {
  // One time for the whole diff (both walks and every witness run): the engine's clock, read once.
  const now = options.now == null ? canonicalDate(nowState.clock()) : canonicalDateText(options.now);
  if (now === null) throw new TypeError(`now: not a date: ${String(options.now)}`);
  const data = dataState.current;
  setRequestNow(now);
  if (options.data !== undefined) dataState.current = options.data;
  try {
    return diff(from, to, options);
  } finally {
    setRequestNow(null);
    dataState.current = data;
  }
}

function diff(from: CompiledRuleset, to: CompiledRuleset, options: BehaviouralDiffOptions): BehaviouralDiff {
  // Two versions whose steps and execution settings are the same decide every input alike (the
  // callees and datasets are the same for both): exactly equivalent, whatever the planner could
  // have written of their paths (dates and calls make those approximate).
  if (sameDecisions(from, to)) return { equivalent: true, exact: true, truncated: false, regions: [] };
  const maxPaths = options.maxPaths ?? DEFAULT_DIFF_MAX_PATHS;
  const maxPairs = options.maxPairs ?? DEFAULT_DIFF_MAX_PAIRS;
  const maxRegions = options.maxRegions ?? DEFAULT_DIFF_MAX_REGIONS;
  const opaqueData = options.data === undefined;
  const old = pathsByCode(from, maxPaths, opaqueData, options.calls);
  const neu = pathsByCode(to, maxPaths, opaqueData, options.calls);
  let truncated = old.truncated || neu.truncated;
  let exact = old.exact && neu.exact;
  const witnesses = options.witnesses === false ? null : new WitnessSearch(from, to, options.calls);
  const regions: BehaviourRegion[] = [];
  let pairs = 0;
  outer: for (const [a, oldPaths] of old.byCode) {
    for (const [b, newPaths] of neu.byCode) {
      if (a === b) continue;
      const found: PairRegion[] = [];
      for (const p of oldPaths) {
        for (const q of newPaths) {
          if (++pairs > maxPairs) {
            truncated = true;
            break outer;
          }
          const r = conjoinPair(p, q);
          if (r !== null) found.push(r);
        }
      }
      if (found.length === 0) continue;
      if (regions.length >= maxRegions) {
        truncated = true;
        break outer;
      }
      const tree = regionTree(found);
      exact &&= tree.exact;
      const witness = witnesses === null ? null : witnesses.find(found, a, b);
      regions.push({ from_code: a, to_code: b, condition: tree.condition, sql: tree.sql, witness });
    }
  }
  if (truncated) exact = false;
  return { equivalent: regions.length === 0 && !truncated, exact, truncated, regions };
}

/** The merged region of the surviving conjunctions, rendered. */
function regionTree(found: readonly PairRegion[]): DiffTree {
  const merged = simplifyPaths(found.map((r) => r.path));
  return filterDefaults(merged);
}

/**
 * Every path of `compiled` to each code it can reach, nothing known. NOTE: a code's paths are
 * planned on their own (`targets` = that code), so each path's code is known.
 */
function pathsByCode(compiled: CompiledRuleset, maxPaths: number, opaqueData: boolean, calls: CalleeResolver | undefined): VersionPaths {
  const prepared = prepare(compiled);
  // The filter's memo is shared with filter requests: it never holds request data (partial-eval.ts).
  const known: KnownInput = { root: {}, fieldMissing: compiled.fieldMissing, memo: prepared.memo, opaqueData };
  const out: VersionPaths = { byCode: new Map(), truncated: false, exact: true };
  for (const code of compiled.graph.terminalsByCode.keys()) {
    const targets = new Set([code]);
    if (!stepsReaching(compiled.graph, targets).has(compiled.entryStep)) continue;
    const plan = planPaths(prepared, known, targets, maxPaths, calls);
    out.truncated ||= plan.truncated;
    out.exact &&= plan.exact;
    const finished = plan.paths.map(finishPath).filter((p): p is Path => p !== null);
    if (finished.length > 0) out.byCode.set(code, simplifyPaths(finished).map(indexPath));
  }
  return out;
}

/** The parts of a ruleset document that decide its answers (tests, labels and metadata do not). */
const DECIDING_CONFIG = ['entry_step', 'field_missing', 'timeout_ms', 'input_schema', 'input_validation'] as const;

/** True when `a` and `b` have the same steps and the same deciding settings. */
function sameDecisions(a: CompiledRuleset, b: CompiledRuleset): boolean {
  const same = (x: unknown, y: unknown): boolean => x === y || (x !== undefined && y !== undefined && jsonEqual(x as JsonValue, y as JsonValue));
  return same(a.doc.steps, b.doc.steps) && DECIDING_CONFIG.every((k) => same(a.doc.config[k], b.doc.config[k]));
}
