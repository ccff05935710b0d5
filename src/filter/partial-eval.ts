/**
 * Partial evaluation (SPEC.md filter algorithm rule 1): every field reference that `known_input`
 * resolves is replaced by its value and constants are folded; what still depends on unknown
 * fields or on variables stays as a residual expression.
 *
 * NOTE: a subexpression that reads only known fields is evaluated by the engine itself (the
 * expression compiled once with the ruleset's `field_missing`, run on `known_input`), so folding
 * has exactly the engine's semantics, special cases included (`is_null` of a missing path in
 * strict mode, lazy `coalesce`, `exists`). Only the operators that combine a known part with a
 * residual one are handled here, with `truthy` and `applyBinary` from the language.
 *
 * The residual is its own small tree (not the syntax tree) because a folded value may be an
 * array or an object, and because a subexpression that is known to fail must stay visible as
 * `error`: the engine's `&&`/`||` and `if` only fail when they evaluate it.
 *
 * Assumption (documented in docs/filter.md): reading an unknown field never fails, and it holds
 * a value of the type the rule uses it with, or null. Under it `R && false` folds to false for a
 * residual R that cannot fail (`canFail`: no `error`, no arithmetic).
 */
import type { BinaryOp, JsonValue, Node, PathNode, UnaryOp } from '../expr/ast.js';
import { ExprRuntimeError, applyBinary, compile, renderPath, truthy, type CompiledExpr, type Vars } from '../expr/index.js';
import type { FieldMissing } from '../ruleset/model.js';

/** A partially evaluated expression. `value` and `error` are fully known results. */
export type Residual =
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'error'; readonly message: string }
  /** An input field that `known_input` does not resolve: a column. `path` is the rule path text. */
  | { readonly kind: 'field'; readonly path: string }
  /**
   * A variable whose value is not tracked (`$v`, `$v.x`): no bindings (`KnownInput.vars` absent),
   * a variable bound by the fallback (variables.ts), or a path below a residual binding.
   */
  | { readonly kind: 'var'; readonly path: string }
  | { readonly kind: 'unary'; readonly op: UnaryOp; readonly operand: Residual }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: Residual; readonly right: Residual }
  | { readonly kind: 'array'; readonly items: readonly Residual[] }
  | { readonly kind: 'if'; readonly cond: Residual; readonly then: Residual; readonly else: Residual }
  | { readonly kind: 'call'; readonly name: string; readonly args: readonly Residual[] };

/**
 * What partial evaluation knows: the known input and the ruleset's missing-field policy; `memo`
 * is the ruleset's per-expression memo (prepare.ts), shared by every request.
 */
export interface KnownInput {
  readonly root: JsonValue;
  readonly fieldMissing: FieldMissing;
  readonly memo: ExprMemo;
  /**
   * The variables set on the current path (variables.ts, EXTENSIONS.md 3 "Variables in
   * filters"). Absent: variables are not tracked, every `$v` is a `var` residual (the analysis).
   * Present: a variable it does not bind is unset (null when lenient, a failure when strict).
   */
  readonly vars?: VarScope;
  /**
   * Reference data (`@name`): known values read from the request's data snapshot unless this is
   * true; true (the analysis, which runs without datasets): each read is an untracked value,
   * like an untracked variable, so nothing is concluded from datasets the ruleset may see later.
   */
  readonly opaqueData?: boolean;
}

/** What a variable holds on the current path. */
export type VarBinding =
  /** A known value: read by the engine itself. */
  | { readonly kind: 'value'; readonly value: JsonValue }
  /** A residual over unknown fields: substituted where `$name` is read. */
  | { readonly kind: 'residual'; readonly residual: Residual }
  /** The fallback: not tracked (reads give a `var` residual, a superset). */
  | { readonly kind: 'opaque' }
  /**
   * A known object with residual parts (filters through call steps, planner.ts): `skeleton` is
   * the value with each leaf replaced by null; a path that ends at a leaf reads its residual, a
   * path that does not touch a leaf is read from the skeleton by the engine itself (a missing key
   * included), a path above or below a leaf is untracked (reading a whole object with a residual
   * inside cannot be written as a column).
   */
  | { readonly kind: 'struct'; readonly skeleton: JsonValue; readonly leaves: readonly StructLeaf[] };

/** A residual part of a `struct` binding, at `path` below the variable (object keys). */
export interface StructLeaf {
  readonly path: readonly string[];
  readonly residual: Residual;
}

/** True when one of `a`, `b` is a prefix of the other (equal included). */
function overlaps(a: readonly (string | number)[], b: readonly (string | number)[], from: number): boolean {
  const n = Math.min(a.length, b.length - from);
  for (let i = 0; i < n; i++) if (a[i] !== b[i + from]) return false;
  return true;
}

/** The leaf of `b` that the variable path `segments` (variable name first) ends at, if any. */
function leafAt(b: { readonly leaves: readonly StructLeaf[] }, segments: readonly (string | number)[]): StructLeaf | undefined {
  return b.leaves.find((l) => l.path.length === segments.length - 1 && overlaps(l.path, segments, 1));
}

/** The variable bindings partial evaluation reads (implemented by variables.ts). */
export interface VarScope {
  get(name: string): VarBinding | undefined;
  /** The value-bound variables as the engine's variables object. */
  values(): Vars;
}

const ARITHMETIC: ReadonlySet<string> = new Set(['+', '-', '*', '/', '%']);
const FALSE: Residual = Object.freeze({ kind: 'value', value: false });
const TRUE: Residual = Object.freeze({ kind: 'value', value: true });

function value(v: JsonValue): Residual {
  return { kind: 'value', value: v };
}

function failure(err: unknown): Residual {
  if (err instanceof ExprRuntimeError) return { kind: 'error', message: err.message };
  throw err;
}

/** Date functions: they fail on a text that is not an ISO 8601 date (expr/dates.ts), whatever the column's type. */
export const DATE_FUNCTIONS: ReadonlySet<string> = new Set(['date', 'date_add', 'date_diff', 'year', 'month', 'day', 'weekday']);

/**
 * True when evaluating `r` may fail for some row: it contains a known failure, or arithmetic on
 * an unknown value (null, or a divisor of 0; guard.ts writes the rows where it does not fail),
 * or a date function of an unknown value (a text that is not a date), or it reads an untracked
 * variable (what it holds is not known; the answer is then not exact).
 */
export function canFail(r: Residual): boolean {
  switch (r.kind) {
    case 'error':
    case 'var': // reading an unset variable fails in strict mode
      return true;
    case 'value':
    case 'field':
      return false;
    case 'unary':
      return r.op === '-' || canFail(r.operand);
    case 'binary':
      return ARITHMETIC.has(r.op) || canFail(r.left) || canFail(r.right);
    case 'array':
      return r.items.some(canFail);
    case 'if':
      return canFail(r.cond) || canFail(r.then) || canFail(r.else);
    case 'call':
      return DATE_FUNCTIONS.has(r.name) || r.args.some(canFail);
  }
}

/** True when `r` reads a variable anywhere. */
export function readsVariable(r: Residual): boolean {
  switch (r.kind) {
    case 'var':
      return true;
    case 'value':
    case 'error':
    case 'field':
      return false;
    case 'unary':
      return readsVariable(r.operand);
    case 'binary':
      return readsVariable(r.left) || readsVariable(r.right);
    case 'array':
      return r.items.some(readsVariable);
    case 'if':
      return readsVariable(r.cond) || readsVariable(r.then) || readsVariable(r.else);
    case 'call':
      return r.args.some(readsVariable);
  }
}

/** Engine truthiness kept as a boolean (`!!r`), for `true && r` and `false || r`. */
function asBoolean(r: Residual): Residual {
  return { kind: 'unary', op: '!', operand: { kind: 'unary', op: '!', operand: r } };
}

/** Input paths a subtree reads, and whether it reads a variable (memoized per node). */
export interface Reads {
  readonly paths: readonly PathNode[];
  readonly variable: boolean;
  /** Whether it calls now() or reads reference data (its value differs between requests). */
  readonly now: boolean;
  /** The variable paths it reads. */
  readonly vars: readonly PathNode[];
  /** Whether it reads reference data (`@name`). */
  readonly data: boolean;
}

/**
 * Per-expression memo of partial evaluation, keyed by syntax-tree node of one compiled ruleset
 * (owned by it: prepare.ts). Filled as requests need it; never holds request data.
 */
export interface ExprMemo {
  /** Input paths a subtree reads, and whether it reads a variable. */
  readonly reads: Map<Node, Reads>;
  /** Fully known subtrees compiled with the ruleset's `field_missing`. */
  readonly compiled: Map<Node, CompiledExpr>;
}

/** An empty memo. */
export function newExprMemo(): ExprMemo {
  return Object.freeze({ reads: new Map(), compiled: new Map() });
}

const NO_PATHS: readonly PathNode[] = Object.freeze([]);

function readsOf(node: Node, memo: ExprMemo): Reads {
  let r = memo.reads.get(node);
  if (r !== undefined) return r;
  const children: readonly Node[] =
    node.kind === 'array'
      ? node.items
      : node.kind === 'unary'
        ? [node.operand]
        : node.kind === 'binary'
          ? [node.left, node.right]
          : node.kind === 'if'
            ? [node.cond, node.then, node.else]
            : node.kind === 'call'
              ? node.args
              : [];
  if (node.kind === 'path') {
    // Reference data (`@name.path`, EXTENSIONS.md 3): a known value read from the request's data
    // snapshot (no field, no variable), which changes with the datasets: marked like now().
    r =
      node.scope === 'var'
        ? { paths: NO_PATHS, variable: true, vars: [node], now: false, data: false }
        : node.scope === 'data'
          ? { paths: NO_PATHS, variable: false, vars: NO_PATHS, now: true, data: true }
          : { paths: [node], variable: false, vars: NO_PATHS, now: false, data: false };
  } else {
    const paths: PathNode[] = [];
    const vars: PathNode[] = [];
    let now = node.kind === 'call' && node.name === 'now';
    let data = false;
    for (const c of children) {
      const cr = readsOf(c, memo);
      paths.push(...cr.paths);
      vars.push(...cr.vars);
      now ||= cr.now;
      data ||= cr.data;
    }
    r = { paths: paths.length === 0 ? NO_PATHS : paths, variable: vars.length > 0, vars: vars.length === 0 ? NO_PATHS : vars, now, data };
  }
  memo.reads.set(node, r);
  return r;
}

/** True when `node` reads a variable anywhere (memoized per node). */
export function readsVariables(node: Node, known: KnownInput): boolean {
  return readsOf(node, known.memo).variable;
}

/**
 * True when every field `node` reads is resolved by the known input and every variable it reads
 * is known: bound to a value, or unset on this path (the engine then reads null or fails).
 */
function isKnownSubtree(node: Node, known: KnownInput): boolean {
  const r = readsOf(node, known.memo);
  if (r.data && known.opaqueData === true) return false;
  if (r.variable) {
    const vars = known.vars;
    if (vars === undefined) return false;
    for (const p of r.vars) {
      const b = vars.get(p.segments[0] as string);
      if (b === undefined || b.kind === 'value') continue;
      // A struct's known part is read from its skeleton (see VarBinding).
      if (b.kind === 'struct' && !b.leaves.some((l) => overlaps(l.path, p.segments, 1))) continue;
      return false;
    }
  }
  return r.paths.every((p) => lookup(known.root, p.segments) !== UNKNOWN);
}

/**
 * True when no field `node` reads is resolved by the known input: its partial evaluation is then
 * the same for every request (callers cache it).
 */
export function ignoresKnownInput(node: Node, known: KnownInput): boolean {
  const r = readsOf(node, known.memo);
  // NOTE (dates): now() differs between requests, so a condition that calls it is never shared.
  if (r.now) return false;
  return r.paths.every((p) => lookup(known.root, p.segments) === UNKNOWN);
}

/** Longest `knownKey` text kept (a longer one is not memoized). */
const KNOWN_KEY_MAX = 1024;

/**
 * A text that names everything the partial evaluation of `node` reads from the request (the
 * top-level known values its paths start at), so that two requests with the same text get the
 * same result; null when it cannot be memoized: it reads a variable, calls now() or reads
 * reference data (they differ between requests), or the values are long. NOTE (speed): the
 * planner memoizes the conditions that read known fields by it (planner.ts), so repeated filter
 * calls with the same known values (a caller's channel, region or tier) share their predicates.
 */
export function knownKey(node: Node, known: KnownInput): string | null {
  const r = readsOf(node, known.memo);
  if (r.variable || r.now || r.data || known.vars !== undefined) return null;
  const root = known.root;
  if (root === null || typeof root !== 'object' || Array.isArray(root)) return null;
  let out = '';
  for (const p of r.paths) {
    const head = p.segments[0];
    if (typeof head !== 'string') return null; // the whole input, or an index into it
    out += head.length + ':' + head + '=';
    out += Object.hasOwn(root, head) && root[head] !== undefined ? valueText(root[head]!) : '?';
    out += ';';
    if (out.length > KNOWN_KEY_MAX) return null;
  }
  return out;
}

/**
 * An exact text of a JSON value: JSON with -0 kept apart from 0 (JSON.stringify writes both as
 * 0) and keys in their own order (another order is another text: only a missed memo).
 */
function valueText(v: JsonValue): string {
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + valueText(v[i]!);
    return out + ']';
  }
  let out = '{';
  let first = true;
  for (const k of Object.keys(v)) {
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + valueText(v[k]!);
    first = false;
  }
  return out + '}';
}

/** Runs the engine on a fully known subtree. */
function evaluateKnown(node: Node, known: KnownInput): Residual {
  if (node.kind === 'literal') return value(node.value);
  let fn = known.memo.compiled.get(node);
  if (fn === undefined) {
    fn = compile(node, { fieldMissing: known.fieldMissing });
    known.memo.compiled.set(node, fn);
  }
  try {
    return value(fn(known.root, known.vars === undefined ? null : known.vars.values()));
  } catch (err) {
    return failure(err);
  }
}

/** Partially evaluates `node` against the known input. */
export function partialEval(node: Node, known: KnownInput): Residual {
  if (isKnownSubtree(node, known)) return evaluateKnown(node, known);
  switch (node.kind) {
    case 'literal':
      return value(node.value);
    case 'array': {
      const items = node.items.map((n) => partialEval(n, known));
      const failed = items.find((r) => r.kind === 'error');
      return failed ?? { kind: 'array', items };
    }
    case 'path':
      if (node.scope === 'data') return { kind: 'var', path: renderPath(node) }; // opaqueData only (isKnownSubtree)
      return node.scope === 'var' ? variable(node, known) : { kind: 'field', path: renderPath(node) };
    case 'unary': {
      const operand = partialEval(node.operand, known);
      return operand.kind === 'error' ? operand : { kind: 'unary', op: node.op, operand };
    }
    case 'binary':
      if (node.op === '&&' || node.op === '||') return logical(node.op, partialEval(node.left, known), node.right, known);
      return binary(node.op, partialEval(node.left, known), partialEval(node.right, known));
    case 'if': {
      const cond = partialEval(node.cond, known);
      if (cond.kind === 'error') return cond;
      if (cond.kind === 'value') return partialEval(truthy(cond.value) ? node.then : node.else, known);
      return { kind: 'if', cond, then: partialEval(node.then, known), else: partialEval(node.else, known) };
    }
    case 'call':
      return call(node.name, node.args, known);
  }
}

/**
 * A variable that is not known (isKnownSubtree): its residual where it is bound to one (the
 * value the set_variable computed, re-evaluated on the same row gives the same value), else
 * untracked. NOTE: a path below a residual (`$d.rate` with `$d = user`) stays untracked: in
 * strict mode the engine fails on it where `user.rate` as a column would read null.
 */
function variable(node: PathNode, known: KnownInput): Residual {
  const b = known.vars?.get(node.segments[0] as string);
  if (b?.kind === 'residual' && node.segments.length === 1) return b.residual;
  if (b?.kind === 'struct') {
    const leaf = leafAt(b, node.segments);
    if (leaf !== undefined) return leaf.residual;
  }
  return { kind: 'var', path: renderPath(node) };
}

/** `&&` / `||`: short-circuit on a known left side; fold a known right side when that is exact. */
function logical(op: '&&' | '||', left: Residual, rightNode: Node, known: KnownInput): Residual {
  const stopsOn = op === '||'; // `||` stops on a truthy left side, `&&` on a falsy one
  if (left.kind === 'error') return left;
  if (left.kind === 'value') {
    if (truthy(left.value) === stopsOn) return stopsOn ? TRUE : FALSE;
    const right = partialEval(rightNode, known);
    if (right.kind === 'value') return truthy(right.value) ? TRUE : FALSE;
    if (right.kind === 'error') return right;
    return asBoolean(right);
  }
  const right = partialEval(rightNode, known);
  if (right.kind === 'value') {
    // `R && false` is false and `R || true` is true whatever R is, unless R itself can fail
    // (then the rows on which R fails are neither: condition.ts keeps R's guard).
    if (truthy(right.value) === stopsOn) return canFail(left) ? { kind: 'binary', op, left, right } : stopsOn ? TRUE : FALSE;
    return asBoolean(left);
  }
  return { kind: 'binary', op, left, right };
}

/** Every other binary operator: both operands are evaluated, left first. */
function binary(op: BinaryOp, left: Residual, right: Residual): Residual {
  if (left.kind === 'error') return left;
  // NOTE: with a residual left side the engine still reaches the right side (the left cannot
  // fail, see the module comment), so a failing right side fails the whole expression.
  if (right.kind === 'error') return right;
  if (left.kind === 'value' && right.kind === 'value') {
    try {
      return value(applyBinary(op, left.value, right.value));
    } catch (err) {
      return failure(err);
    }
  }
  return { kind: 'binary', op, left, right };
}

/** A call with some unknown argument: arguments are evaluated in order, a known failure fails it. */
function call(name: string, argNodes: readonly Node[], known: KnownInput): Residual {
  // `exists($v)` is true wherever `$v` is set, whatever the value it was set to.
  const [first] = argNodes;
  if (name === 'exists' && first?.kind === 'path' && first.scope === 'var') {
    const b = known.vars?.get(first.segments[0] as string);
    if (b?.kind === 'residual' && first.segments.length === 1) return TRUE;
    // A struct's leaf is a key of a built object: set, whatever it holds.
    if (b?.kind === 'struct' && leafAt(b, first.segments) !== undefined) return TRUE;
  }
  const args: Residual[] = [];
  for (const n of argNodes) {
    // NOTE: `exists` and `is_null` of a path never fail (compile.ts); `coalesce` is lazy. Their
    // unknown-path arguments stay residual fields; other functions fail on a failing argument.
    const r = partialEval(n, known);
    if (r.kind === 'error' && name !== 'coalesce') return r;
    args.push(r);
  }
  return { kind: 'call', name, args };
}

/** True when the known input holds `segments` (a value, not unknown and not unresolvable). */
export function isKnownPresent(root: JsonValue, segments: readonly (string | number)[]): boolean {
  const v = lookup(root, segments);
  return v !== UNKNOWN && v !== MISSING;
}

const UNKNOWN = Symbol('unknown');
const MISSING = Symbol('missing');

/**
 * Resolves a path in the known input: its value; MISSING when it cannot resolve whatever the row
 * holds (it steps into a known scalar, or past the end of a known array); UNKNOWN when the row
 * may supply it (a key absent from a known object).
 */
function lookup(root: JsonValue, segments: readonly (string | number)[]): JsonValue | typeof UNKNOWN | typeof MISSING {
  let cur: JsonValue = root;
  for (const seg of segments) {
    if (typeof cur !== 'object' || cur === null) return MISSING;
    if (Array.isArray(cur)) {
      if (typeof seg !== 'number' || seg >= cur.length) return MISSING;
      cur = cur[seg]!;
    } else {
      if (typeof seg !== 'string') return MISSING;
      if (!Object.hasOwn(cur, seg) || cur[seg] === undefined) return UNKNOWN;
      cur = cur[seg]!;
    }
  }
  return cur;
}
