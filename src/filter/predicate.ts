/**
 * The one predicate tree of the filter pipeline (SPEC.md "Predicate-tree output"). Every path the
 * planner collects is a list of these; the SQL, Mongo and JSON emitters all read it.
 *
 * Fields are rule field paths (`user.age`); the emitters map them to columns. The tree is in
 * negation normal form: `not` only wraps an ordering or a string-test atom (the atoms whose
 * complement has no type of its own). Every atom is an exact predicate on the field's value under
 * the engine's semantics (DECISIONS.md 2), so the tree as a whole is exact, nulls included.
 *
 * Two kinds exist only inside the pipeline: `truthy`/`falsy` (a bare field used as a condition;
 * the JSON emitter writes them as `not_in`/`in` of the falsy values) and `unsupported` (a residual
 * condition no format can express; the capability check turns it into a 500 if it survives).
 */
import type { JsonValue } from '../expr/ast.js';

/** Comparison atom types. */
export type CompareType = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
/** Ordering atom types (the ones `not` may wrap, with the string tests). */
export type OrderType = 'lt' | 'le' | 'gt' | 'ge';
/** String test atom types. */
export type TextType = 'contains' | 'starts_with' | 'ends_with';

/** `field <op> value`. */
export interface CompareAtom {
  readonly type: CompareType;
  readonly field: string;
  readonly value: JsonValue;
}
/** `field in values` / `field not in values` (values distinct, never empty, never a single value). */
export interface SetAtom {
  readonly type: 'in' | 'not_in';
  readonly field: string;
  readonly values: readonly JsonValue[];
}
/** `contains(field, value)`, `starts_with(field, value)`, `ends_with(field, value)`. */
export interface TextAtom {
  readonly type: TextType;
  readonly field: string;
  readonly value: JsonValue;
}
/** `is_null(field)`, `!is_null(field)`, and the truthiness of a bare field. */
export interface UnaryAtom {
  readonly type: 'is_null' | 'not_null' | 'truthy' | 'falsy';
  readonly field: string;
}
/** An atom that reads one field. */
export type FieldAtom = CompareAtom | SetAtom | TextAtom | UnaryAtom;
/** Negation of an ordering or string-test atom. */
export interface NotPred {
  readonly type: 'not';
  readonly condition: CompareAtom | TextAtom;
}
/** Conjunction / disjunction (at least two conditions once built by `and`/`or`). */
export interface JunctionPred {
  readonly type: 'and' | 'or';
  readonly conditions: readonly Pred[];
}
/**
 * A condition no format can express; `reason` ends up in the 500 message. `negated` marks the
 * rows on which it is false (its negation), so the simplifier can merge a path taken when it
 * holds with the path taken when it does not (`R ∧ U` ∨ `R ∧ ¬U` → `R`).
 */
export interface UnsupportedPred {
  readonly type: 'unsupported';
  readonly reason: string;
  readonly negated?: boolean;
}
/** Constant predicates. */
export interface ConstPred {
  readonly type: 'always' | 'never';
}
/** Any predicate. Switch on `type`. */
export type Pred = FieldAtom | NotPred | JunctionPred | UnsupportedPred | ConstPred;
/** A predicate on a single field: a field atom or its `not`. */
export type Literal = FieldAtom | NotPred;

/**
 * Per-object caches of the pipeline's modules (symbol keys: invisible to JSON and to the
 * emitters, which copy fields). Declared here, as fields of the one runtime shape of predicates
 * (`PredObject`), so that writing one does not give the object a shape of its own.
 */
export const KEY: unique symbol = Symbol('key');
export const NEGATION: unique symbol = Symbol('negation');
/** simplify.ts */
export const TAUTOLOGY: unique symbol = Symbol('tautology');
export const REDUCED: unique symbol = Symbol('reduced');
export const TRIGGERS: unique symbol = Symbol('triggers');
export const FIELDS: unique symbol = Symbol('fields');
/** field-reduce.ts */
export const COMPLEMENT_OF: unique symbol = Symbol('complement');
/** sql.ts */
export const SQL_TEXT: unique symbol = Symbol('sql');
/** generate.ts */
export const SCANNED: unique symbol = Symbol('scanned');
export const SCAN_INFO: unique symbol = Symbol('scan-info');

type Cached = { [KEY]?: string; [NEGATION]?: Pred };

/**
 * The one runtime shape of every predicate the pipeline builds: every field of every kind (the
 * ones a kind does not have are undefined, so JSON and the emitters see what the kind's interface
 * names) and every cache. NOTE (speed, bench/NOTES.md "Filter speed"): predicates of a dozen
 * object shapes, each growing more with the caches written on it, made every property read of
 * the pipeline megamorphic; one class keeps them monomorphic.
 */
class PredObject {
  [KEY]: string | undefined = undefined;
  [NEGATION]: Pred | undefined = undefined;
  [TAUTOLOGY]: boolean | undefined = undefined;
  [REDUCED]: unknown = undefined;
  [TRIGGERS]: readonly string[] | undefined = undefined;
  [FIELDS]: readonly string[] | undefined = undefined;
  [COMPLEMENT_OF]: Pred | undefined = undefined;
  [SQL_TEXT]: unknown = undefined;
  [SCANNED]: object | undefined = undefined;
  [SCAN_INFO]: unknown = undefined;
  constructor(
    readonly type: Pred['type'],
    readonly field: string | undefined,
    readonly value: JsonValue | undefined,
    readonly values: readonly JsonValue[] | undefined,
    readonly condition: Pred | undefined,
    readonly conditions: readonly Pred[] | undefined,
    readonly reason: string | undefined,
    readonly negated: boolean | undefined,
  ) {}
}

/** `field <type> value` as built (atoms.ts gives the canonical forms). */
export function valueAtom(type: CompareType | TextType, field: string, value: JsonValue): Pred {
  return new PredObject(type, field, value, undefined, undefined, undefined, undefined, undefined) as unknown as Pred;
}

/** `field in values` / `field not in values` as built (atoms.ts `setAtom` gives the canonical form). */
export function listAtom(type: 'in' | 'not_in', field: string, values: readonly JsonValue[]): Pred {
  return new PredObject(type, field, undefined, values, undefined, undefined, undefined, undefined) as unknown as Pred;
}

/** `is_null`, `not_null`, `truthy`, `falsy` of a field. */
export function unaryAtom(type: UnaryAtom['type'], field: string): Pred {
  return new PredObject(type, field, undefined, undefined, undefined, undefined, undefined, undefined) as unknown as Pred;
}

/** The negation of an ordering or string test. */
function notOf(condition: CompareAtom | TextAtom): Pred {
  return new PredObject('not', undefined, undefined, undefined, condition, undefined, undefined, undefined) as unknown as Pred;
}

/** A conjunction or disjunction of the given conditions as they are (see `and`/`or`). */
export function junctionOf(type: 'and' | 'or', conditions: readonly Pred[]): Pred {
  return new PredObject(type, undefined, undefined, undefined, undefined, conditions, undefined, undefined) as unknown as Pred;
}

/** A condition no format can express (`negated`: its negation). */
export function unsupportedPred(reason: string, negated = false): Pred {
  return new PredObject('unsupported', undefined, undefined, undefined, undefined, undefined, reason, negated ? true : undefined) as unknown as Pred;
}

/** The constant true predicate. */
export const ALWAYS: Pred = new PredObject('always', undefined, undefined, undefined, undefined, undefined, undefined, undefined) as unknown as Pred;
/** The constant false predicate. */
export const NEVER: Pred = new PredObject('never', undefined, undefined, undefined, undefined, undefined, undefined, undefined) as unknown as Pred;
// Frozen with their caches filled in (a frozen object cannot take them later).
Object.assign(ALWAYS, { [KEY]: 'always', [NEGATION]: NEVER });
Object.assign(NEVER, { [KEY]: 'never', [NEGATION]: ALWAYS });
Object.freeze(ALWAYS);
Object.freeze(NEVER);

/** True for a predicate on one field (an atom or a `not` of one). */
export function isLiteral(p: Pred): p is Literal {
  const t = p.type;
  return t !== 'and' && t !== 'or' && t !== 'always' && t !== 'never' && t !== 'unsupported';
}

/** The field a literal reads. */
export function fieldOf(p: Literal): string {
  return p.type === 'not' ? p.condition.field : p.field;
}

/** Conjunction: flattens, drops `always`, collapses on `never`, removes duplicates. */
export function and(conditions: readonly Pred[]): Pred {
  return junction('and', conditions);
}

/** Disjunction: flattens, drops `never`, collapses on `always`, removes duplicates. */
export function or(conditions: readonly Pred[]): Pred {
  return junction('or', conditions);
}

function junction(type: 'and' | 'or', conditions: readonly Pred[]): Pred {
  const out: Pred[] = [];
  const seen = new Set<string>();
  for (const c of conditions) if (!addTo(type, c, out, seen)) return type === 'and' ? NEVER : ALWAYS;
  if (out.length === 0) return type === 'and' ? ALWAYS : NEVER;
  if (out.length === 1) return out[0]!;
  return junctionOf(type, out);
}

/** Adds `p` (flattened) to a junction being built; false when it decides the whole junction. */
function addTo(type: 'and' | 'or', p: Pred, out: Pred[], seen: Set<string>): boolean {
  if (p.type === (type === 'and' ? 'always' : 'never')) return true;
  if (p.type === (type === 'and' ? 'never' : 'always')) return false;
  if (p.type === type) {
    for (const c of p.conditions) if (!addTo(type, c, out, seen)) return false;
    return true;
  }
  const k = keyOf(p);
  if (!seen.has(k)) {
    seen.add(k);
    out.push(p);
  }
  return true;
}

const NEGATED_TYPE = { eq: 'ne', ne: 'eq', in: 'not_in', not_in: 'in', is_null: 'not_null', not_null: 'is_null', truthy: 'falsy', falsy: 'truthy' } as const;

/**
 * Exact negation under the engine's semantics (`!` on a boolean condition), pushed down to the
 * atoms by De Morgan. NOTE: the engine's `!(x > 5)` is also true when x is null or a string, so
 * an ordering atom is negated with `not`, never with the opposite ordering.
 */
export function negate(p: Pred): Pred {
  const cached = (p as Cached)[NEGATION];
  if (cached !== undefined) return cached;
  const n = computeNegation(p);
  // NOTE (speed): both directions cached on the objects (simplification negates the same nodes often).
  (p as Cached)[NEGATION] = n;
  if (n !== p && (n as Cached)[NEGATION] === undefined) (n as Cached)[NEGATION] = p;
  return n;
}

function computeNegation(p: Pred): Pred {
  switch (p.type) {
    case 'always':
      return NEVER;
    case 'never':
      return ALWAYS;
    case 'and':
      return or(p.conditions.map(negate));
    case 'or':
      return and(p.conditions.map(negate));
    case 'not':
      return p.condition;
    case 'eq':
    case 'ne':
      return valueAtom(NEGATED_TYPE[p.type], p.field, p.value);
    case 'in':
    case 'not_in':
      return listAtom(NEGATED_TYPE[p.type], p.field, p.values);
    case 'is_null':
    case 'not_null':
    case 'truthy':
    case 'falsy':
      return unaryAtom(NEGATED_TYPE[p.type], p.field);
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      return notOf(p);
    case 'unsupported':
      return unsupportedPred(p.reason, p.negated !== true);
  }
}

/** Canonical JSON text of a value (object keys sorted), used in keys. */
export function canonicalJson(v: JsonValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k]!)}`).join(',')}}`;
}

/**
 * Canonical identity of a predicate: equal keys mean the same condition (set values and the
 * children of `and`/`or` are compared as sets). Cached on the object.
 */
export function keyOf(p: Pred): string {
  let k = (p as Cached)[KEY];
  if (k !== undefined) return k;
  switch (p.type) {
    case 'always':
    case 'never':
      k = p.type;
      break;
    case 'and':
    case 'or':
      k = `${p.type}(${p.conditions.map(keyOf).sort().join(';')})`;
      break;
    case 'not':
      k = `not(${keyOf(p.condition)})`;
      break;
    case 'in':
    case 'not_in':
      k = `${p.type}(${JSON.stringify(p.field)},${p.values.map(canonicalJson).sort().join(',')})`;
      break;
    case 'is_null':
    case 'not_null':
    case 'truthy':
    case 'falsy':
      k = `${p.type}(${JSON.stringify(p.field)})`;
      break;
    case 'unsupported':
      k = `${p.negated === true ? 'not_' : ''}unsupported(${JSON.stringify(p.reason)})`;
      break;
    default:
      k = `${p.type}(${JSON.stringify(p.field)},${canonicalJson(p.value)})`;
  }
  (p as Cached)[KEY] = k;
  return k;
}

/** Every field the predicate reads, in first-seen order. */
export function fieldsOf(p: Pred, out: Set<string> = new Set()): Set<string> {
  if (p.type === 'and' || p.type === 'or') for (const c of p.conditions) fieldsOf(c, out);
  else if (isLiteral(p)) out.add(fieldOf(p));
  return out;
}

/** The first `unsupported` node in the tree, or null. */
export function findUnsupported(p: Pred): UnsupportedPred | null {
  if (p.type === 'unsupported') return p;
  if (p.type === 'and' || p.type === 'or') {
    for (const c of p.conditions) {
      const u = findUnsupported(c);
      if (u !== null) return u;
    }
  }
  return null;
}
