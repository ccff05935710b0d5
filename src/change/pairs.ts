/**
 * The conjunction of one path of the old version with one path of the new version (the
 * behavioural diff, EXTENSIONS.md 4): built with the filter's exact simplification (simplify.ts
 * `conjoin` / `finishPath`) and checked for emptiness with the analysis' case split
 * (analysis/solve.ts). Every drop here is a proof that no input satisfies the conjunction.
 *
 * NOTE (speed): two versions of one ruleset share most of their conditions, so most pairs of
 * paths to different codes part at a decision where one takes a branch and the other goes past
 * it. `IndexedPath` keeps the keys of a path's conditions so that this is seen by set lookups
 * before any path is rebuilt: a condition of one path whose negation is a condition of the other,
 * or a disjunction of one whose every part is negated by the other.
 */
import { solve } from '../analysis/solve.js';
import { keyOf, negate, type Pred } from '../filter/predicate.js';
import { conjoin, finishPath, type Path } from '../filter/simplify.js';

/** A path with the keys of its conditions and of their negations. */
export interface IndexedPath {
  readonly path: Path;
  readonly keys: ReadonlySet<string>;
  /** Key of the negation of each condition, in path order. */
  readonly negated: readonly string[];
  /** For each disjunction of the path: the keys of the negations of its parts. */
  readonly orParts: readonly (readonly string[])[];
}

/** Indexes a path (its conditions' keys are cached on the predicates). */
export function indexPath(path: Path): IndexedPath {
  const keys = new Set<string>();
  const negated: string[] = [];
  const orParts: string[][] = [];
  for (const c of path) {
    keys.add(keyOf(c));
    negated.push(keyOf(negate(c)));
    if (c.type === 'or') orParts.push(c.conditions.map((d) => keyOf(negate(d))));
  }
  return { path, keys, negated, orParts };
}

/** True when `b` holds a condition that `a`'s conditions contradict outright (one-sided). */
function refutes(a: IndexedPath, b: IndexedPath): boolean {
  for (const k of b.negated) if (a.keys.has(k)) return true;
  for (const parts of b.orParts) if (parts.every((k) => a.keys.has(k))) return true;
  return false;
}

/** A non-empty (as far as proved) conjunction of two paths, with the leaves the search found. */
export interface PairRegion {
  readonly path: Path;
  /** Conjunctions without disjunctions that imply `path` (witness candidates), first ones first. */
  readonly leaves: readonly Path[];
}

/** Leaves kept per pair for the witness search. */
const LEAVES = 4;
/** Case-split budget per pair (analysis/solve.ts). */
const SOLVE_BUDGET = 128;

/**
 * The conjunction of `a` and `b`, or null when it is proved empty: contradicting conditions
 * (keys, then the filter's per-field reduction), or a case split whose every leaf contradicts
 * itself (a condition and its negation, opaque ones included).
 */
export function conjoinPair(a: IndexedPath, b: IndexedPath): PairRegion | null {
  if (refutes(a, b) || refutes(b, a)) return null;
  let cur: Path | null = a.path;
  for (const c of b.path) {
    cur = conjoin(cur, c);
    if (cur === null) return null;
  }
  cur = finishPath(cur);
  if (cur === null) return null;
  const sol = solve(cur, LEAVES, SOLVE_BUDGET);
  if (sol.unsat) return null;
  const leaves = sol.leaves.filter((l) => !selfContradicts(l));
  if (leaves.length === 0 && sol.complete) return null;
  return { path: cur, leaves };
}

/**
 * True when a conjunction holds a condition and its negation. NOTE: the per-field reduction
 * already catches this for literals; this is for the opaque (`unsupported`) conditions, which
 * `conjoin` keeps side by side.
 */
function selfContradicts(leaf: Path): boolean {
  const keys = new Set<string>();
  for (const c of leaf) keys.add(keyOf(c));
  return leaf.some((c: Pred) => keys.has(keyOf(negate(c))));
}
