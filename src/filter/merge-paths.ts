/**
 * Simplification across paths (SPEC.md filter rule 6: paths are ORed). Exact rewrites, for paths
 * A and B seen as sets of conditions:
 *
 * - A = B → one of them; A ⊆ B → B is dropped (A ∨ (A ∧ R) = A);
 * - B contains the negation of the whole of A → that condition leaves B (A ∨ (¬A ∧ R) = A ∨ R),
 *   which removes the negations of earlier branches once the earlier path is in the filter;
 * - A = R ∧ X and B = R ∧ ¬X → R (a condition and its negation cover everything);
 * - A = R ∧ x ∈ S and B = R ∧ x ∈ T → R ∧ x ∈ S ∪ T (pinned values of one field).
 *
 * Repeated until nothing changes; first-seen order is kept. NOTE (speed): conditions are compared
 * through small integer ids interned per call (their text keys can be long).
 */
import { jsonEquals } from '../expr/index.js';
import { pinnedValues, setAtom } from './atoms.js';
import { and, fieldOf, isLiteral, keyOf, negate, type Pred } from './predicate.js';
import { conjoin, type Path } from './simplify.js';

/** Above this many paths the pairwise merges are skipped (only duplicates are removed). */
const MERGE_LIMIT = 300;

/**
 * A set of condition ids (small integers from 0, interned per call): one bit per id. NOTE
 * (speed): cheaper to build and to query than a `Set<number>`; an id interned after the set was
 * built is simply not in it.
 */
class IdSet {
  private readonly bits: Int32Array;
  size = 0;

  constructor(ids: readonly number[]) {
    let max = 0;
    for (const id of ids) if (id > max) max = id;
    this.bits = new Int32Array((max >> 5) + 1);
    for (const id of ids) this.add(id);
  }

  has(id: number): boolean {
    const w = id >> 5;
    return w < this.bits.length && (this.bits[w]! & (1 << (id & 31))) !== 0;
  }

  add(id: number): void {
    if (this.has(id)) return;
    this.bits[id >> 5]! |= 1 << (id & 31);
    this.size++;
  }

  delete(id: number): void {
    if (!this.has(id)) return;
    this.bits[id >> 5]! &= ~(1 << (id & 31));
    this.size--;
  }
}

/** A path being simplified. */
interface Entry {
  path: Path;
  /** Id of each condition, in path order. */
  ids: number[];
  set: IdSet;
  /** Id of the negation of the whole path, once needed. */
  negation: number | undefined;
  /** Sizes of the disjunctions among its conditions. */
  orSizes: Set<number>;
  alive: boolean;
  /** The merger's clock when this entry last changed (0: never). */
  changedAt: number;
}

class Merger {
  private readonly interned = new Map<string, number>();
  /** Counts changes to entries: an entry's `changedAt` is the count after its last change. */
  clock = 0;

  touch(e: Entry): void {
    e.changedAt = ++this.clock;
  }

  id(p: Pred): number {
    const k = keyOf(p);
    let n = this.interned.get(k);
    if (n === undefined) {
      n = this.interned.size;
      this.interned.set(k, n);
    }
    return n;
  }

  entry(path: Path): Entry {
    const ids: number[] = [];
    const orSizes = new Set<number>();
    for (const c of path) {
      ids.push(this.id(c));
      if (c.type === 'or') orSizes.add(c.conditions.length);
    }
    return { path, ids, set: new IdSet(ids), negation: undefined, orSizes, alive: true, changedAt: 0 };
  }

  update(e: Entry, path: Path | null): void {
    if (path === null) {
      e.alive = false;
      return;
    }
    const next = this.entry(path);
    this.touch(e);
    e.path = next.path;
    e.ids = next.ids;
    e.set = next.set;
    e.orSizes = next.orSizes;
    e.negation = undefined;
  }

  negationOf(e: Entry): number {
    e.negation ??= this.id(negate(and(e.path)));
    return e.negation;
  }

  /** Applies the first rule that fits `a` and `b`; true when one did. */
  reduce(a: Entry, b: Entry, aFirst: boolean): boolean {
    if (a.ids.length <= b.ids.length && missing(a.ids, b.set, 1) === 0) {
      b.alive = false;
      return true;
    }
    if (a.path.length > 0 && mayHoldNegation(b, a.path.length)) {
      const neg = this.negationOf(a);
      if (b.set.has(neg)) {
        // NOTE: no rebuild: what is left of an already reduced path is still reduced.
        remove(b, neg);
        this.touch(b);
        return true;
      }
    }
    if (!aFirst) return false;
    if (!mayMerge(a, b) && !mayMerge(b, a)) return false;
    const onlyA = a.path.filter((_, i) => !b.set.has(a.ids[i]!));
    const onlyB = b.path.filter((_, i) => !a.set.has(b.ids[i]!));
    if (onlyA.length === 0 || onlyB.length === 0) return false;
    const common = a.path.filter((_, i) => b.set.has(a.ids[i]!));
    if (complementary(onlyA, onlyB)) {
      this.update(a, common);
      b.alive = false;
      return true;
    }
    const union = pinnedUnion(onlyA, onlyB);
    if (union !== null) {
      this.update(a, conjoin(common, union));
      b.alive = false;
      return true;
    }
    return false;
  }
}

/**
 * Cheap pre-check for the merges: `x` differs from `y` in exactly one condition, and that
 * condition could stand against all of `y`'s own conditions (one, or a disjunction of as many).
 */
function mayMerge(x: Entry, y: Entry): boolean {
  const own = y.ids.length - (x.ids.length - 1); // conditions only y has, if x differs in one
  if (own < 1 || (own > 1 && !x.orSizes.has(own))) return false;
  let at = -1;
  for (let i = x.ids.length - 1; i >= 0; i--) {
    if (y.set.has(x.ids[i]!)) continue;
    if (at >= 0) return false;
    at = i;
  }
  if (at < 0) return false;
  if (own === 1) return true;
  const c = x.path[at]!;
  return c.type === 'or' && c.conditions.length === own;
}

/** Removes one condition (by id) from an entry. */
function remove(e: Entry, id: number): void {
  const at = e.ids.indexOf(id);
  e.path = e.path.toSpliced(at, 1);
  e.ids = e.ids.toSpliced(at, 1);
  e.set.delete(id);
  // NOTE: `orSizes` may keep the size of the removed disjunction: it is only a pre-check.
  e.negation = undefined;
}

/**
 * How many of `xs` are not in `set`, counting up to `limit`. NOTE (speed): from the end, because
 * paths share their beginning (the same earlier steps) and differ in their last conditions.
 */
function missing(xs: readonly number[], set: IdSet, limit: number): number {
  let n = 0;
  for (let i = xs.length - 1; i >= 0; i--) if (!set.has(xs[i]!) && ++n >= limit) return n;
  return n;
}

/** The negation of an n-condition path (n > 1) is a disjunction of n conditions: a cheap pre-check. */
function mayHoldNegation(e: Entry, n: number): boolean {
  return n === 1 || e.orSizes.has(n);
}

/** True when the conjunction of `xs` is exactly the negation of the conjunction of `ys`. */
function complementary(xs: readonly Pred[], ys: readonly Pred[]): boolean {
  if (xs.length !== 1 && ys.length !== 1) return false;
  const [one, many] = xs.length === 1 ? [xs[0]!, ys] : [ys[0]!, xs];
  if (many.length > 1 && (one.type !== 'or' || one.conditions.length !== many.length)) return false;
  return keyOf(negate(and(xs))) === keyOf(and(ys));
}

/** `x ∈ S ∪ T` for two single differing literals that pin the same field, else null. */
function pinnedUnion(xs: readonly Pred[], ys: readonly Pred[]): Pred | null {
  if (xs.length !== 1 || ys.length !== 1) return null;
  const x = xs[0]!;
  const y = ys[0]!;
  if (!isLiteral(x) || !isLiteral(y) || fieldOf(x) !== fieldOf(y)) return null;
  const vx = pinnedValues(x);
  const vy = pinnedValues(y);
  if (vx === null || vy === null) return null;
  return setAtom('in', fieldOf(x), [...vx, ...vy.filter((v) => !vx.some((w) => jsonEquals(v, w)))]);
}

/** True when two entries hold the same conditions (as many times each). */
function sameIds(a: Entry, b: Entry): boolean {
  if (a.ids.length !== b.ids.length) return false;
  if (a.set.size === a.ids.length && b.set.size === b.ids.length) return missing(a.ids, b.set, 1) === 0;
  const x = [...a.ids].sort((p, q) => p - q);
  const y = [...b.ids].sort((p, q) => p - q);
  return x.every((v, i) => v === y[i]);
}

/** Simplifies a set of paths (see the module comment). */
export function simplifyPaths(paths: readonly Path[]): Path[] {
  const m = new Merger();
  const entries: Entry[] = [];
  // Duplicates (the same set of conditions) go. NOTE (speed): candidates are found by length and
  // sum of ids, then compared as sets.
  const bySum = new Map<string, Entry[]>();
  for (const p of paths) {
    const e = m.entry(p);
    let sum = 0;
    for (const id of e.ids) sum += id;
    const k = `${e.ids.length}:${sum}`;
    const same = bySum.get(k);
    if (same === undefined) bySum.set(k, [e]);
    else if (same.some((o) => sameIds(o, e))) continue;
    else same.push(e);
    entries.push(e);
  }
  if (entries.length <= MERGE_LIMIT) {
    // NOTE (speed): `reduce` depends only on the two entries, so a pair that changed nothing is
    // not tried again until one of them changes (the outcome, and the order of the rewrites, are
    // those of trying every pair on every pass). checkedAt[i * n + j]: the clock after the last
    // try of (i, j) that changed nothing, -1 if none.
    const n = entries.length;
    const checkedAt = new Int32Array(n * n).fill(-1);
    for (let changed = true; changed;) {
      changed = false;
      for (let i = 0; i < n; i++) {
        const a = entries[i]!;
        for (let j = 0; j < n && a.alive; j++) {
          const b = entries[j]!;
          if (i === j || !b.alive) continue;
          const at = checkedAt[i * n + j]!;
          if (at >= 0 && a.changedAt <= at && b.changedAt <= at) continue;
          if (m.reduce(a, b, i < j)) changed = true;
          else checkedAt[i * n + j] = m.clock;
        }
      }
    }
  }
  return entries.filter((e) => e.alive).map((e) => e.path);
}
