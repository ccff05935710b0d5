/**
 * Paths as the planner builds them (planner.ts): the conditions (a `Path`, simplify.ts) with
 * exact sets of what they hold, so that adding a condition does not scan the path for it.
 *
 * `conjoinPlan(pp, p)` gives the same conditions, in the same order, as `conjoin(pp.items, p)`:
 *
 * - a literal on a field no literal of the path reads is appended (`addLiteral`'s common case);
 *   only when one does is `conjoin` asked to reduce the pair (the field's bit tells which);
 * - a disjunction or unsupported condition whose key a member of the path has is a duplicate
 *   (keys name the type, so equal keys are `conjoin`'s duplicate test); otherwise it is appended.
 *
 * Fields and keys get ids per walk (`PathIds`), the first 64 of each; a condition without an id
 * takes `conjoin`'s scan. NOTE (speed, bench/NOTES.md "Filter speed"): the scans for the field
 * and for duplicates were half of the planning time; the sets are two numbers each.
 */
import { conjoin, isTautology, reducePair, type Path } from './simplify.js';
import { fieldOf, isLiteral, keyOf, type Literal, type Pred } from './predicate.js';

/** Ids of fields and keys, given in first-seen order during one walk (at most 64 of each). */
export class PathIds {
  private readonly fields = new Map<string, number>();
  private readonly keys = new Map<string, number>();

  /** The id of a field (0-63), or -1 when 64 are given already. */
  field(f: string): number {
    return idOf(this.fields, f);
  }

  /** The id of a condition key (0-63), or -1 when 64 are given already. */
  key(k: string): number {
    return idOf(this.keys, k);
  }
}

function idOf(map: Map<string, number>, s: string): number {
  let id = map.get(s);
  if (id === undefined) {
    if (map.size >= 64) return -1;
    id = map.size;
    map.set(s, id);
  }
  return id;
}

/**
 * A path under construction. `lo`/`hi`: bits of the field ids (0-31, 32-63) that a literal of
 * `items` reads; `jlo`/`jhi`: bits of the key ids of its disjunctions and unsupported conditions.
 * Shared between branches: never changed once returned (only while `conjoinPlan` builds it).
 */
export interface PlanPath {
  readonly items: Path;
  readonly lo: number;
  readonly hi: number;
  readonly jlo: number;
  readonly jhi: number;
}

type Building = { -readonly [K in keyof PlanPath]: PlanPath[K] };

/** The empty path. */
export const EMPTY_PLAN_PATH: PlanPath = Object.freeze({ items: Object.freeze([]) as Path, lo: 0, hi: 0, jlo: 0, jhi: 0 });

function has(lo: number, hi: number, id: number): boolean {
  return id < 32 ? (lo & (1 << id)) !== 0 : (hi & (1 << (id - 32))) !== 0;
}

/** `pp`'s sets with other conditions (to be brought up to date by the caller). */
function withItems(pp: PlanPath, items: Path): Building {
  return { items, lo: pp.lo, hi: pp.hi, jlo: pp.jlo, jhi: pp.jhi };
}

/** Sets (or clears) the bit of field `id` of a path being built. */
function setField(pp: Building, id: number, on = true): void {
  const bit = 1 << (id & 31);
  if (id < 32) pp.lo = on ? pp.lo | bit : pp.lo & ~bit;
  else pp.hi = on ? pp.hi | bit : pp.hi & ~bit;
}

/** True when a literal of `items` reads `field`. */
function readsField(items: Path, field: string): boolean {
  for (const c of items) if (isLiteral(c) && fieldOf(c) === field) return true;
  return false;
}

/** Adds a condition to a path; null when the path can no longer hold (as `conjoin`). */
export function conjoinPlan(pp: PlanPath, p: Pred, ids: PathIds): PlanPath | null {
  switch (p.type) {
    case 'always':
      return pp;
    case 'never':
      return null;
    case 'and': {
      // NOTE (speed): once this call has made a new path (not shared with anyone yet), a literal
      // on a new field is pushed onto it instead of copying it once more (as `conjoin` does).
      let cur = pp;
      let owned = false;
      for (const c of p.conditions) {
        if (owned && isLiteral(c)) {
          const id = ids.field(fieldOf(c));
          if (id >= 0 && !has(cur.lo, cur.hi, id)) {
            (cur.items as Pred[]).push(c);
            setField(cur as Building, id);
            continue;
          }
        }
        const next = conjoinPlan(cur, c, ids);
        if (next === null) return null;
        owned ||= next !== cur;
        cur = next;
      }
      return cur;
    }
    case 'or':
    case 'unsupported': {
      if (p.type === 'or' && isTautology(p)) return pp;
      const id = ids.key(keyOf(p));
      if (id < 0) {
        const items = conjoin(pp.items, p);
        return items === pp.items ? pp : items === null ? null : withItems(pp, items);
      }
      if (has(pp.jlo, pp.jhi, id)) return pp; // a member has its key: a duplicate
      const out = withItems(pp, [...pp.items, p]);
      if (id < 32) out.jlo |= 1 << id;
      else out.jhi |= 1 << (id - 32);
      return out;
    }
    default:
      return addLiteral(pp, p, ids);
  }
}

function addLiteral(pp: PlanPath, p: Literal, ids: PathIds): PlanPath | null {
  const field = fieldOf(p);
  const id = ids.field(field);
  if (id >= 0 && !has(pp.lo, pp.hi, id)) {
    // NOTE (speed): the common case, a new field: appended without a scan.
    const out = withItems(pp, [...pp.items, p]);
    setField(out, id);
    return out;
  }
  const items = pp.items;
  if (id >= 0) {
    // A literal on this field is there. NOTE (speed): when it is the only one (the usual case:
    // the pair was reduced when it was added), one scan finds it and its reduction with `p`
    // (memoized on `p`) replaces it in place, as `conjoin` would.
    let at = -1;
    for (let i = 0; i < items.length; i++) {
      const c = items[i]!;
      if (isLiteral(c) && fieldOf(c) === field) {
        if (at >= 0) {
          at = -2;
          break;
        }
        at = i;
      }
    }
    if (at >= 0) {
      const reduced = reducePair(items[at] as Literal, p);
      if (reduced === null) return null;
      const list = items.slice(0, at);
      for (const r of reduced) list.push(r);
      for (let i = at + 1; i < items.length; i++) list.push(items[i]!);
      const out = withItems(pp, list);
      setField(out, id, reduced.length > 0);
      return out;
    }
  }
  // Several literals on this field (or the field has no id): `conjoin` reduces them. Only the
  // literals on this field change, so only its bit is looked at again.
  const next = conjoin(items, p);
  if (next === null) return null;
  const out = withItems(pp, next);
  if (id >= 0) setField(out, id, readsField(next, field));
  return out;
}
