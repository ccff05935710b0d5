/**
 * The input paths a ruleset's expressions read, and their check against `config.input_schema`
 * at create (EXTENSIONS.md 2 "Input schema"):
 *
 * - every path must exist in the schema through `properties` chains (`patternProperties` and an
 *   `additionalProperties` schema declare keys too; an array index goes through `prefixItems`
 *   or `items`; `$ref` to the schema's own `#/...`, `allOf`/`anyOf`/`oneOf`, `then`/`else` are
 *   followed), else a problem naming the path and the nearest schema path;
 * - a comparison (`== != < <= > >=`, `in`/`not in` a list of literals) between a path and a
 *   literal whose JSON type the schema's `type` (or `const`/`enum`) does not allow is a problem.
 *   `null` literals are presence checks and never a mismatch; a number fits `integer`.
 *
 * `$variables` are exempt: they are not input.
 */
import type { JsonValue, LiteralNode, Node } from '../expr/ast.js';
import type { ParsedExpression } from './expressions.js';
import { inputPathText } from './schema-text.js';

type JsonObject = { [key: string]: JsonValue };
type Segment = string | number;

/** One read of an input path in an expression, with the literals it is compared with. */
export interface PathRead {
  readonly segments: readonly Segment[];
  /** Literals compared with this read (`user.age >= 18` → 18). */
  readonly literals: readonly LiteralNode[];
}

const COMPARISONS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);

/** Every input path `ast` reads (in source order), each with the literals it is compared with. */
export function collectReads(ast: Node, out: PathRead[] = []): PathRead[] {
  switch (ast.kind) {
    case 'literal':
      return out;
    case 'path':
      if (ast.scope === 'input') out.push({ segments: ast.segments, literals: [] });
      return out;
    case 'array':
      for (const item of ast.items) collectReads(item, out);
      return out;
    case 'unary':
      return collectReads(ast.operand, out);
    case 'binary': {
      const { left, right, op } = ast;
      if (COMPARISONS.has(op)) {
        if (isInputPath(left) && right.kind === 'literal') {
          out.push({ segments: left.segments, literals: [right] });
          return out;
        }
        if (isInputPath(right) && left.kind === 'literal') {
          out.push({ segments: right.segments, literals: [left] });
          return out;
        }
      } else if ((op === 'in' || op === 'not in') && isInputPath(left) && right.kind === 'array' && right.items.every((i) => i.kind === 'literal')) {
        out.push({ segments: left.segments, literals: right.items as LiteralNode[] });
        return out;
      }
      collectReads(left, out);
      return collectReads(right, out);
    }
    case 'if':
      collectReads(ast.cond, out);
      collectReads(ast.then, out);
      return collectReads(ast.else, out);
    case 'call':
      for (const arg of ast.args) collectReads(arg, out);
      return out;
    default:
      return assertNever(ast);
  }
}

function isInputPath(n: Node): n is Extract<Node, { kind: 'path' }> {
  return n.kind === 'path' && n.scope === 'input';
}

/** The JSON type of a literal (`number` for every number). */
export function literalType(value: LiteralNode['value']): 'null' | 'boolean' | 'number' | 'string' {
  if (value === null) return 'null';
  return typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? 'number' : 'string';
}

/** Checks every expression's reads against `schema`; problems go to `add` at the expression's location. */
export function checkSchemaPaths(
  schema: JsonObject | boolean,
  exprs: ReadonlyMap<string, ParsedExpression>,
  add: (path: string, message: string) => void,
): void {
  const view = new SchemaView(schema);
  for (const [at, expr] of exprs) {
    const reported = new Set<string>();
    for (const read of collectReads(expr.ast)) {
      const text = inputPathText(read.segments);
      const found = view.resolve(read.segments);
      if (found.length === 0) {
        if (reported.has(text)) continue;
        reported.add(text);
        const near = view.suggest(read.segments);
        add(at, `field '${text}' is not in input_schema${near === null ? '' : ` (did you mean '${inputPathText(near)}'?)`}`);
        continue;
      }
      const types = view.typesOf(found);
      if (types === null) continue;
      for (const lit of read.literals) {
        const t = literalType(lit.value);
        if (t === 'null' || types.has(t) || (t === 'number' && types.has('integer'))) continue;
        const key = `${text}\u0000${t}`;
        if (reported.has(key)) continue;
        reported.add(key);
        add(at, `field '${text}' is ${[...types].join(' or ')} in input_schema but is compared with ${JSON.stringify(lit.value)} (a ${t})`);
      }
    }
  }
}

/** Stands for a part of the schema this check cannot see into (an unresolvable `$ref`): any path is in it. */
const OPAQUE: JsonObject = Object.freeze({}) as JsonObject;

const JSON_TYPES: ReadonlySet<string> = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);

/** Read-only walks over one schema: path resolution, the types at a path, the nearest declared path. */
export class SchemaView {
  constructor(private readonly root: JsonObject | boolean) {}

  /** The subschemas that declare `segments` (empty when the path is not in the schema). */
  resolve(segments: readonly Segment[]): JsonValue[] {
    let current: JsonValue[] = [this.root];
    for (const seg of segments) {
      current = this.step(current, seg);
      if (current.length === 0) return current;
    }
    return current;
  }

  /** The subschemas that declare key or index `seg` under any of `schemas`. */
  private step(schemas: readonly JsonValue[], seg: Segment): JsonValue[] {
    const out: JsonValue[] = [];
    for (const s of schemas) for (const m of this.expand(s)) this.direct(m, seg, out);
    return out;
  }

  /** `s` and the schemas it is made of: local `$ref` targets, `allOf`/`anyOf`/`oneOf` branches, `then`/`else`. */
  expand(s: JsonValue, seen: Set<JsonValue> = new Set()): JsonObject[] {
    if (!isObject(s) || seen.has(s)) return [];
    seen.add(s);
    const out: JsonObject[] = [s];
    if (s === OPAQUE) return out;
    for (const key of ['$ref', '$dynamicRef'] as const) {
      const ref = s[key];
      if (typeof ref !== 'string') continue;
      const target = this.pointer(ref);
      if (target === undefined) out.push(OPAQUE);
      else out.push(...this.expand(target, seen));
    }
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = s[key];
      if (Array.isArray(list)) for (const b of list) out.push(...this.expand(b, seen));
    }
    for (const key of ['then', 'else'] as const) if (s[key] !== undefined) out.push(...this.expand(s[key], seen));
    return out;
  }

  /** The subschema a local reference (`#`, `#/$defs/x`) names; undefined for any other reference. */
  private pointer(ref: string): JsonValue | undefined {
    if (ref === '#') return this.root;
    if (!ref.startsWith('#/')) return undefined;
    let cur: JsonValue = this.root;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(cur) && /^[0-9]+$/.test(key)) cur = cur[Number(key)] as JsonValue;
      else if (isObject(cur) && Object.hasOwn(cur, key)) cur = cur[key] as JsonValue;
      else return undefined;
      if (cur === undefined) return undefined;
    }
    return cur;
  }

  /** Pushes the subschemas `s` itself declares for `seg` (no `$ref` or combinator). */
  private direct(s: JsonObject, seg: Segment, out: JsonValue[]): void {
    if (s === OPAQUE) {
      out.push(OPAQUE);
      return;
    }
    if (typeof seg === 'number') {
      const prefix = s['prefixItems'];
      if (Array.isArray(prefix) && seg < prefix.length) out.push(prefix[seg] as JsonValue);
      else if (isObject(s['items'])) out.push(s['items']);
      return;
    }
    const props = s['properties'];
    if (isObject(props) && Object.hasOwn(props, seg)) out.push(props[seg] as JsonValue);
    const patterns = s['patternProperties'];
    if (isObject(patterns)) {
      for (const p of Object.keys(patterns)) if (matches(p, seg)) out.push(patterns[p] as JsonValue);
    }
    if (isObject(s['additionalProperties'])) out.push(s['additionalProperties']);
  }

  /**
   * The JSON types the schemas allow (from `type`, `const`, `enum`, through `$ref` and
   * combinators), `integer` kept apart; null when some schema does not say (anything goes).
   */
  typesOf(schemas: readonly JsonValue[]): Set<string> | null {
    const out = new Set<string>();
    for (const s of schemas) {
      const t = this.typesOfOne(s, new Set());
      if (t === null) return null;
      for (const x of t) out.add(x);
    }
    return out;
  }

  private typesOfOne(s: JsonValue, seen: Set<JsonValue>): Set<string> | null {
    if (!isObject(s) || s === OPAQUE || seen.has(s)) return null;
    seen.add(s);
    const type = s['type'];
    if (typeof type === 'string' && JSON_TYPES.has(type)) return new Set([type]);
    if (Array.isArray(type) && type.every((t) => typeof t === 'string' && JSON_TYPES.has(t))) return new Set(type as string[]);
    if (Object.hasOwn(s, 'const')) return new Set([jsonType(s['const'] as JsonValue)]);
    const en = s['enum'];
    if (Array.isArray(en)) return new Set(en.map(jsonType));
    if (typeof s['$ref'] === 'string') {
      const target = this.pointer(s['$ref']);
      return target === undefined ? null : this.typesOfOne(target, seen);
    }
    const all = s['allOf'];
    if (Array.isArray(all)) {
      // Every branch holds: the first branch that says something is a bound.
      for (const b of all) {
        const t = this.typesOfOne(b, seen);
        if (t !== null) return t;
      }
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      const list = s[key];
      if (!Array.isArray(list)) continue;
      const out = new Set<string>();
      for (const b of list) {
        const t = this.typesOfOne(b, seen);
        if (t === null) return null;
        for (const x of t) out.add(x);
      }
      return out;
    }
    return null;
  }

  /**
   * The nearest declared path to `segments` (a misspelt key replaced by the closest declared
   * key, at any depth), or null when none is close.
   */
  suggest(segments: readonly Segment[]): Segment[] | null {
    return this.suggestFrom([this.root], segments, 0, { budget: 200 });
  }

  private suggestFrom(schemas: readonly JsonValue[], segments: readonly Segment[], i: number, work: { budget: number }): Segment[] | null {
    if (i === segments.length) return [];
    if (--work.budget < 0) return null;
    const seg = segments[i]!;
    const exact = this.step(schemas, seg);
    if (exact.length > 0) {
      const rest = this.suggestFrom(exact, segments, i + 1, work);
      if (rest !== null) return [seg, ...rest];
    }
    if (typeof seg !== 'string') return null;
    const names = new Set<string>();
    for (const s of schemas) {
      for (const m of this.expand(s)) {
        const props = m['properties'];
        if (isObject(props)) for (const k of Object.keys(props)) if (k !== seg) names.add(k);
      }
    }
    const limit = Math.max(1, Math.floor(seg.length / 3));
    const near = [...names]
      .map((name) => ({ name, d: distance(seg.toLowerCase(), name.toLowerCase()) + (seg === name ? 0 : seg.toLowerCase() === name.toLowerCase() ? 0.5 : 0) }))
      .filter((c) => c.d <= limit)
      .sort((a, b) => a.d - b.d || (a.name < b.name ? -1 : 1));
    for (const { name } of near) {
      const rest = this.suggestFrom(this.step(schemas, name), segments, i + 1, work);
      if (rest !== null) return [name, ...rest];
    }
    return null;
  }
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON Schema type name of a value (`integer` for whole numbers is not distinguished: `number`). */
function jsonType(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

function matches(pattern: string, key: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(key);
  } catch {
    return false;
  }
}

/** Levenshtein distance. */
export function distance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

function assertNever(x: never): never {
  throw new Error(`internal: unexpected expression node ${JSON.stringify(x)}`);
}
