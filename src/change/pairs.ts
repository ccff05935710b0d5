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
import { keyOf, negate, or, type Pred } from '../filter/predicate.js';
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
  leaves: readonly Path[];
  /** True once up to `LEAVES` leaves were searched (`moreLeaves`); before, only the first one. */
  searched: boolean;
}

/** Leaves kept per pair for the witness search. */
const LEAVES = 4;
/** Case-split budget per pair (analysis/solve.ts). */
const SOLVE_BUDGET = 128;

/**
 * The conjunction of `a` and `b`, or null when it is proved empty: contradicting conditions
 * (keys, then the filter's per-field reduction and unit propagation), or a case split whose every
 * leaf contradicts itself (a condition and its negation, opaque ones included).
 *
 * NOTE (speed): a condition of `b` already in `a` (same key) is not conjoined again (A ∧ A = A):
 * two versions share most conditions. The case split stops at its first leaf; more leaves are
 * searched only when the witness search asks (`moreLeaves`).
 */
export function conjoinPair(a: IndexedPath, b: IndexedPath): PairRegion | null {
  if (refutes(a, b) || refutes(b, a)) return null;
  let cur: Path | null = a.path;
  for (const c of b.path) {
    if (a.keys.has(keyOf(c))) continue;
    cur = conjoin(cur, c);
    if (cur === null) return null;
  }
  return settle(cur);
}

/** Final reduction and emptiness check of a conjunction (see `conjoinPair`). */
function settle(path: Path): PairRegion | null {
  let cur = finishPath(path);
  if (cur !== null) cur = propagate(cur);
  if (cur === null) return null;
  const first = solve(cur, 1, SOLVE_BUDGET);
  if (first.unsat) return null;
  if (!first.leaves.some(selfContradicts)) return { path: cur, leaves: first.leaves, searched: false };
  const sol = solve(cur, LEAVES, SOLVE_BUDGET);
  const leaves = sol.leaves.filter((l) => !selfContradicts(l));
  if (leaves.length === 0 && sol.complete) return null;
  return { path: cur, leaves, searched: true };
}

/** Fills `region.leaves` with up to `LEAVES` leaves that do not contradict themselves. */
export function moreLeaves(region: PairRegion): void {
  if (region.searched) return;
  region.leaves = solve(region.path, LEAVES, SOLVE_BUDGET).leaves.filter((l) => !selfContradicts(l));
  region.searched = true;
}

/** Passes of `propagate` (each one narrows at least one disjunction). */
const PROPAGATE_ROUNDS = 8;

/**
 * Unit propagation over the disjunctions of a path: a part that contradicts the rest of the path
 * is dropped from its disjunction; a disjunction left with one part becomes that part (conjoined,
 * so the per-field reduction sees it); none left proves the path empty. NOTE: `finishPath` only
 * decides a part from the path's literals by key (`x > 360` against `!(x > 360)`), not
 * `x > 360` against `x <= 360 && x > 240` after the per-field reduction rewrote the literals;
 * `conjoin` of the part does, and without this the case split (analysis/solve.ts) may spend its
 * budget on the other disjunctions first.
 */
function propagate(path: Path): Path | null {
  let cur = path;
  for (let round = 0; round < PROPAGATE_ROUNDS; round++) {
    let changed = false;
    let keys = new Set(cur.map(keyOf));
    // NOTE (speed): one pass narrows every disjunction it can; positions move when one changes,
    // so a pass may miss one, and the next pass sees it.
    for (let i = 0; i < cur.length; i++) {
      const c = cur[i]!;
      if (c.type !== 'or') continue;
      const rest = [...cur.slice(0, i), ...cur.slice(i + 1)];
      const kept = c.conditions.filter((d) => !negatedIn(d, keys) && conjoin(rest, d) !== null);
      if (kept.length === 0) return null;
      if (kept.length === c.conditions.length) continue;
      const next = conjoin(rest, or(kept));
      if (next === null) return null;
      cur = next;
      keys = new Set(cur.map(keyOf));
      changed = true;
    }
    if (!changed) return cur;
  }
  return cur;
}

/**
 * True when the negation of `d`, or of one of its conjuncts, is among `keys`. NOTE: for the
 * opaque (`unsupported`) conditions, which `conjoin` keeps side by side with their negations.
 */
function negatedIn(d: Pred, keys: ReadonlySet<string>): boolean {
  if (keys.has(keyOf(negate(d)))) return true;
  return d.type === 'and' && d.conditions.some((x) => keys.has(keyOf(negate(x))));
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
