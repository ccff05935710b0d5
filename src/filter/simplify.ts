/**
 * Simplification of paths (SPEC.md filter rules 5-6: conditions within a path are ANDed, paths
 * are ORed). Every rewrite here is exact under the engine's semantics, because each literal is
 * decided with the language's own functions (atoms.ts `decide`):
 *
 * - within a path: the literals on each field are reduced (field-reduce.ts: `x == 1 && x != 1`
 *   → dropped, `x in [1, 2] && x != 2` → `x == 1`, `x > 5 && x > 3` → `x > 5`); a disjunction
 *   that always holds is dropped, one that cannot hold drops the path, and disjunctions are
 *   reduced by the path's literals;
 * - across paths: see merge-paths.ts.
 *
 * Paths are arrays treated as immutable (the planner shares prefixes between branches).
 */
import type { JsonValue } from '../expr/ast.js';
import { decide } from './atoms.js';
import { reduceField } from './field-reduce.js';
import {
  ALWAYS,
  FIELDS,
  NEVER,
  REDUCED,
  TAUTOLOGY,
  TRIGGERS,
  and,
  fieldOf,
  fieldsOf,
  isLiteral,
  keyOf,
  negate,
  or,
  type Literal,
  type Pred,
} from './predicate.js';

/** A path: the conjunction of its conditions. */
export type Path = readonly Pred[];

/** Adds a condition to a path; null when the path can no longer hold. */
export function conjoin(path: Path, p: Pred): Path | null {
  switch (p.type) {
    case 'always':
      return path;
    case 'never':
      return null;
    case 'and': {
      // NOTE (speed): once this call has made a new array (not shared with anyone yet), a literal
      // on a new field is pushed onto it instead of copying the path once more.
      let cur: Path = path;
      let owned = false;
      for (const c of p.conditions) {
        if (owned && isLiteral(c) && !hasField(cur, fieldOf(c))) {
          (cur as Pred[]).push(c);
          continue;
        }
        const next = conjoin(cur, c);
        if (next === null) return null;
        owned ||= next !== cur;
        cur = next;
      }
      return cur;
    }
    case 'or':
    case 'unsupported': {
      if (p.type === 'or' && isTautology(p)) return path;
      const k = keyOf(p);
      // NOTE (speed): only a condition of the same type can have the same key.
      for (const c of path) if (c === p || (c.type === p.type && keyOf(c) === k)) return path;
      return [...path, p];
    }
    default:
      return addLiteral(path, p);
  }
}

/**
 * Per-object memo of `isTautology`, a symbol key like predicate.ts's caches: the state lives on
 * the predicate (owned by the compiled ruleset's shared conditions, or by one request), not in
 * the module. Only called on `or` nodes, which are never frozen.
 */
type WithTautology = Pred & { [TAUTOLOGY]?: boolean };

/** True when a disjunction always holds: its negation (a conjunction) contradicts itself. */
export function isTautology(p: Pred): boolean {
  let t = (p as WithTautology)[TAUTOLOGY];
  if (t === undefined) {
    t = conjoin([], negate(p)) === null;
    (p as WithTautology)[TAUTOLOGY] = t;
  }
  return t;
}

/** The field of a literal, or undefined for a junction or an unsupported condition. */
function literalField(c: Pred): string | undefined {
  return c.type === 'not' ? c.condition.field : (c as { field?: string }).field;
}

/**
 * Per-object memo of `reduceField([q, p])` on `p`, keyed by `q` (like `isTautology`'s): the result
 * depends only on the two literals, and most of them are the compiled ruleset's shared
 * conditions, so a walk meets the same pairs on every request. Bounded: a full memo starts over
 * (a shared literal also meets the literals of single requests, which must not pile up on it).
 */
const REDUCED_MAX = 16;
type WithReduced = Literal & { [REDUCED]?: Map<Literal, readonly Literal[] | null> };

export function reducePair(q: Literal, p: Literal): readonly Literal[] | null {
  let memo = (p as WithReduced)[REDUCED];
  if (memo === undefined) {
    if (!Object.isExtensible(p)) return reduceField([q, p]);
    memo = new Map();
    (p as WithReduced)[REDUCED] = memo;
  }
  let r = memo.get(q);
  if (r === undefined) {
    const reduced = reduceField([q, p]);
    r = reduced === null ? null : Object.freeze(reduced);
    if (memo.size >= REDUCED_MAX) memo.clear();
    memo.set(q, r);
  }
  return r;
}

/** True when a literal of the path reads `field`. */
function hasField(path: Path, field: string): boolean {
  for (const c of path) if (literalField(c) === field) return true;
  return false;
}

function addLiteral(path: Path, p: Literal): Path | null {
  const field = fieldOf(p);
  const group: Literal[] = [];
  for (const c of path) if (literalField(c) === field) group.push(c as Literal);
  if (group.length === 0) return [...path, p]; // NOTE (speed): the common case, a new field
  const reduced = group.length === 1 ? reducePair(group[0]!, p) : reduceField([...group, p]);
  if (reduced === null) return null;
  const out: Pred[] = [];
  let inserted = false;
  for (const c of path) {
    if (literalField(c) === field) {
      if (!inserted) out.push(...reduced);
      inserted = true;
    } else {
      out.push(c);
    }
  }
  if (!inserted) out.push(...reduced);
  return out;
}

/** Final pass on one path: reduces its disjunctions by its literals. Null when it cannot hold. */
export function finishPath(path: Path): Path | null {
  if (!hasJunction(path)) return path;
  let cur: Path | null = path;
  for (let round = 0; round < 8 && cur !== null; round++) {
    // Every literal is a fact. NOTE (speed): only those on a field a disjunction reads can change
    // one (a trigger's key names its field, `mayAssume` asks for the junction's own fields), but
    // collecting those fields first cost more than the facts it left out.
    const facts = new Set<string>();
    const pinned = new Map<string, JsonValue>();
    for (const c of cur) {
      if (!isLiteral(c)) continue;
      const field = fieldOf(c);
      facts.add(keyOf(c));
      // The one value the literal pins its field to (atoms.ts pinnedValues with one value).
      if (c.type === 'eq') pinned.set(field, c.value);
      else if (c.type === 'is_null') pinned.set(field, null);
      else if (c.type === 'in' && c.values.length === 1) pinned.set(field, c.values[0]!);
    }
    // NOTE (speed): the lists are built only once a condition changes (most paths keep theirs).
    let kept: Pred[] | null = null;
    let changed: Pred[] | null = null;
    for (let i = 0; i < cur.length; i++) {
      const c = cur[i]!;
      const r = (c.type === 'or' || c.type === 'and') && mayAssume(c, facts, pinned) ? assume(c, facts, pinned) : c;
      if (r === c) {
        if (kept !== null) kept.push(c);
        continue;
      }
      if (kept === null) kept = cur.slice(0, i);
      (changed ??= []).push(r);
    }
    if (changed === null) return cur;
    // What is kept is still reduced; only the rewritten conditions need adding again.
    cur = kept!; // set with the first change
    for (const r of changed) {
      cur = conjoin(cur, r);
      if (cur === null) return null;
    }
  }
  return cur;
}

/**
 * Per-object memo of the keys of the literals inside a junction and of their negations: `assume`
 * changes a junction only when one of them is a fact or one of its fields is pinned.
 */
type WithTriggers = Pred & { [TRIGGERS]?: readonly string[] };

function triggersOf(p: Pred, out: string[] = []): string[] {
  if (p.type === 'and' || p.type === 'or') for (const c of p.conditions) triggersOf(c, out);
  else if (isLiteral(p)) out.push(keyOf(p), keyOf(negate(p)));
  return out;
}

/** False when `assume(p, facts, pinned)` is sure to give `p` back (NOTE (speed): no rebuild, no walk). */
function mayAssume(p: Pred, facts: ReadonlySet<string>, pinned: ReadonlyMap<string, JsonValue>): boolean {
  let t = (p as WithTriggers)[TRIGGERS];
  if (t === undefined) {
    t = triggersOf(p);
    if (Object.isExtensible(p)) (p as WithTriggers)[TRIGGERS] = t;
  }
  for (const k of t) if (facts.has(k)) return true;
  if (pinned.size > 0) for (const f of junctionFields(p)) if (pinned.has(f)) return true;
  return false;
}

/**
 * Per-object memo of the fields a junction reads (like `isTautology`'s): junctions are never
 * frozen, and the shared ones belong to the compiled ruleset.
 */
type WithFields = Pred & { [FIELDS]?: readonly string[] };

function junctionFields(p: Pred): readonly string[] {
  let f = (p as WithFields)[FIELDS];
  if (f === undefined) {
    f = [...fieldsOf(p)];
    if (Object.isExtensible(p)) (p as WithFields)[FIELDS] = f;
  }
  return f;
}

function hasJunction(path: Path): boolean {
  for (const c of path) if (c.type === 'or' || c.type === 'and') return true;
  return false;
}

/** Rewrites `p` knowing that the literals `facts` hold and that `pinned` fields have those values. */
function assume(p: Pred, facts: ReadonlySet<string>, pinned: ReadonlyMap<string, JsonValue>): Pred {
  if (p.type === 'and' || p.type === 'or') {
    let parts: Pred[] | null = null; // NOTE (speed): allocated only once something changes
    for (let i = 0; i < p.conditions.length; i++) {
      const c = p.conditions[i]!;
      const r = assume(c, facts, pinned);
      if (r !== c && parts === null) parts = p.conditions.slice(0, i);
      if (parts !== null) parts.push(r);
    }
    if (parts === null) return p;
    return p.type === 'and' ? and(parts) : or(parts);
  }
  if (!isLiteral(p)) return p;
  if (facts.has(keyOf(p))) return ALWAYS;
  if (facts.has(keyOf(negate(p)))) return NEVER;
  const field = fieldOf(p);
  if (pinned.has(field)) return decide(p, pinned.get(field)!) === true ? ALWAYS : NEVER;
  return p;
}

/** Rebuilds a path from conditions (each added with `conjoin`); null when they contradict. */
export function rebuild(conditions: readonly Pred[]): Path | null {
  let cur: Path | null = [];
  for (const c of conditions) {
    cur = conjoin(cur, c);
    if (cur === null) return null;
  }
  return cur;
}
