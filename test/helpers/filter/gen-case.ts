/**
 * Random filter cases for the soundness property: a ruleset (decisions over numbers, strings,
 * booleans, `in`, `not in`, `contains`, `starts_with`, `ends_with`, `is_null`, `&&`, `||`, `!`,
 * `if`, known and unknown fields, paths below a known scalar, action steps, variables (numbers,
 * strings, arithmetic on fields, set twice, read before set: EXTENSIONS.md 3), cycles,
 * lenient and strict `field_missing`), a known input, target codes,
 * expressions that fail on some rows (division and modulo by a column that can be 0, arithmetic
 * on a column that can be NULL, in conditions where their truth does not matter, in set_variable
 * actions and in terminal outputs: EXTENSIONS.md 6 "Filters and failures"),
 * sometimes a field mapping or a small max_paths, and random rows for the unknown fields.
 * The newer parts of the language (issue 19, gen-features.ts): decision tables (routing, `set`
 * with hit_policy first and collect), reference data (`@ref.path` over a generated dataset
 * snapshot) and dates (a date column, date functions of known dates and a fixed request `now`).
 *
 * Deterministic from a seed (mulberry32), so a failing case is replayed with its seed. Unknown
 * fields keep their type (a number column is compared with numbers), which is the filter's
 * documented assumption and what a typed SQL column needs.
 */
import type { JsonValue } from '../../../src/expr/ast.js';
import type { RulesetDoc } from '../../../src/ruleset/index.js';
import {
  DEFAULT_FEATURES,
  NOWS,
  collectAtom,
  dataAtom,
  dateAtom,
  dateValue,
  generateDataset,
  noFeatureUse,
  routingTable,
  setTable,
  type AtomSource,
  type FeatureOptions,
  type FeatureUse,
} from './gen-features.js';

/** Small seeded PRNG with the helpers the generator needs. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

/** A field of the generated rows. */
export interface FieldSpec {
  readonly path: string;
  readonly type: 'number' | 'string' | 'boolean';
  /** Its column when not mapped (the `_` rule). */
  readonly column: string;
  /** A text column holding dates (canonical text, gen-features.ts). */
  readonly date?: true;
}

/** Every field the generator uses; the test table has one typed column per field. */
export const FIELDS: readonly FieldSpec[] = [
  { path: 'age', type: 'number', column: 'age' },
  { path: 'score', type: 'number', column: 'score' },
  { path: 'user.level', type: 'number', column: 'user_level' },
  { path: 'name', type: 'string', column: 'name' },
  { path: 'user.country', type: 'string', column: 'user_country' },
  { path: 'tag', type: 'string', column: 'tag' },
  { path: 'active', type: 'boolean', column: 'active' },
  { path: 'user.vip', type: 'boolean', column: 'user_vip' },
  { path: 'since', type: 'string', column: 'since', date: true },
];

/** The date field. */
const DATE_FIELD = FIELDS.find((f) => f.date === true)!;

const NUMBERS: readonly number[] = [-2, 0, 1, 2.5, 3, 5, 10, 18, 100];
// NOTE: no character in U+E000..U+FFFF: JavaScript (mingo) orders those after astral characters,
// the engine, PostgreSQL "C" and SQLite by code point. NUL is left out (PostgreSQL text refuses it).
const STRINGS: readonly string[] = [
  '',
  'a',
  'b',
  'ab',
  'ba',
  'abc',
  'A',
  "a'b",
  '100%',
  'a_b',
  'x!y',
  '!%_',
  'é',
  'a.b',
  '(a)',
  'a\\b',
  'a$',
  '^a',
  'a*',
  'US',
  'CA',
  '😀',
  'a\nb',
];
const CHARS: readonly string[] = ['a', 'b', "'", '%', '_', '!', '.', '*', '$', '^', '\\', 'é', '😀', ' ', 'A'];

/** A random value of a type (from small pools, so equalities hit often). */
export function randomValue(rng: Rng, type: FieldSpec['type']): JsonValue {
  switch (type) {
    case 'number':
      return rng.chance(0.8) ? rng.pick(NUMBERS) : rng.int(24) - 3;
    case 'string':
      if (rng.chance(0.75)) return rng.pick(STRINGS);
      return Array.from({ length: rng.int(4) }, () => rng.pick(CHARS)).join('');
    case 'boolean':
      return rng.chance(0.5);
  }
}

/** A random value of a field (a date for the date field: `known` values are sometimes not dates). */
export function fieldValue(rng: Rng, f: FieldSpec, known = false): JsonValue {
  return f.date === true && rng.chance(0.9) ? dateValue(rng, known) : randomValue(rng, f.type);
}

/** One generated case. */
export interface FilterCase {
  readonly seed: number;
  readonly doc: RulesetDoc;
  readonly knownInput: Record<string, JsonValue>;
  readonly unknown: readonly FieldSpec[];
  readonly targets: string[];
  readonly mapping: Record<string, string>;
  readonly maxPaths: number | undefined;
  /** True when some condition reads a variable (the filter may then be a superset). */
  readonly readsVariables: boolean;
  /** True when the ruleset uses variables at all (then `exact` may be false). */
  readonly usesVariables: boolean;
  /** The datasets `@name` reads (the tenant's snapshot), or null. */
  readonly data: ReadonlyMap<string, JsonValue> | null;
  /** The request's `now` (ISO 8601 text), or null. */
  readonly now: string | null;
  /** Which newer parts of the language the ruleset holds. */
  readonly features: FeatureUse;
}

/** Sets `value` at a dotted path inside `root`, creating objects on the way. */
export function setPath(root: Record<string, JsonValue>, path: string, value: JsonValue): void {
  const keys = path.split('.');
  let cur = root;
  for (const k of keys.slice(0, -1)) {
    const next = cur[k];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Record<string, JsonValue>;
  }
  cur[keys.at(-1)!] = value;
}

function lit(v: JsonValue): string {
  return JSON.stringify(v);
}

class CaseBuilder implements AtomSource {
  readonly known: FieldSpec[];
  readonly used = noFeatureUse();
  readonly dateField = DATE_FIELD;
  readonly unknown: FieldSpec[];
  readonly knownValues = new Map<string, JsonValue>();
  /** The fields conditions mostly use (few, so conditions on the same field meet often). */
  readonly focus: FieldSpec[];
  readsVariables = false;

  constructor(
    readonly rng: Rng,
    readonly useVariables: boolean,
    readonly enabled: AtomSource['enabled'],
  ) {
    this.known = FIELDS.filter(() => rng.chance(0.25));
    this.unknown = FIELDS.filter((f) => !this.known.includes(f));
    for (const f of this.known) this.knownValues.set(f.path, fieldValue(rng, f, true));
    const types: FieldSpec['type'][] = ['number', 'string', 'boolean'];
    // One field of each type at least (so every atom kind has a field), then a few more.
    this.focus = types.map((t) => rng.pick(FIELDS.filter((f) => f.type === t)));
    for (const f of FIELDS) if (!this.focus.includes(f) && rng.chance(0.2)) this.focus.push(f);
  }

  value(type: FieldSpec['type']): JsonValue {
    return randomValue(this.rng, type);
  }

  field(type?: FieldSpec['type']): FieldSpec {
    const pool = (this.rng.chance(0.9) ? this.focus : FIELDS).filter((f) => type === undefined || f.type === type);
    return this.rng.pick(pool);
  }

  /** A literal of a type, or sometimes a known field of that type (a known value, folded). */
  operand(type: FieldSpec['type']): string {
    const known = this.known.filter((f) => f.type === type);
    if (known.length > 0 && this.rng.chance(0.15)) return this.rng.pick(known).path;
    if (type === 'number' && known.length > 0 && this.rng.chance(0.1)) return `${this.rng.pick(known).path} + 1`;
    return lit(randomValue(this.rng, type));
  }

  condition(depth = 0): string {
    const rng = this.rng;
    if (depth < 2 && rng.chance(0.35)) {
      const k = rng.int(7);
      // Sometimes the right side is known to fail: the engine fails only where it evaluates it.
      const knownStrings = this.known.filter((f) => f.type === 'string');
      const right = (): string => (knownStrings.length > 0 && rng.chance(0.15) ? `${rng.pick(knownStrings).path} * 2 > 1` : this.condition(depth + 1));
      if (k < 3) return `(${this.condition(depth + 1)}) && (${right()})`;
      if (k < 5) return `(${this.condition(depth + 1)}) || (${right()})`;
      if (k < 6) return `!(${this.condition(depth + 1)})`;
      return `if (${this.condition(depth + 1)}) then (${this.condition(depth + 1)}) else (${this.condition(depth + 1)})`;
    }
    return this.atom();
  }

  /** A plain comparison of a field with a literal of its type (never fails). */
  comparison(): string {
    const f = this.field();
    return `${f.path} == ${lit(randomValue(this.rng, f.type))}`;
  }

  /** A condition on the known fields that is true (`t`) or false, folded by partial evaluation. */
  private knownConstant(t: boolean): string {
    const known = this.known.filter((f) => f.type === 'number');
    if (known.length > 0 && this.rng.chance(0.7)) return `abs(${this.rng.pick(known).path}) ${t ? '>=' : '<'} 0`;
    return t ? '1 == 1' : '1 == 2';
  }

  /**
   * A `set_variable` action of `$num` (a number) or `$str` (a string) (EXTENSIONS.md 3): a
   * literal, a known field or arithmetic on one (folded), an unknown field (a column), arithmetic
   * on an unknown field or on the variable itself (set twice on a path; read before it is set:
   * null, or a failure in strict mode), an `if` over a condition; some forms no format can write
   * where they are read (the fallback, `exact: false`).
   */
  variableAction(): { action: 'set_variable'; name: string; value: string } {
    const rng = this.rng;
    if (rng.chance(0.5)) {
      const knownNum = this.known.filter((f) => f.type === 'number');
      const forms = [
        lit(randomValue(rng, 'number')),
        `${this.field('number').path}`,
        `${this.field('number').path} * 2`,
        '$num + 1',
        `if ${this.atom()} then ${lit(randomValue(rng, 'number'))} else ${this.field('number').path}`,
      ];
      if (knownNum.length > 0) forms.push(rng.pick(knownNum).path, `${rng.pick(knownNum).path} - 1`);
      return { action: 'set_variable', name: 'num', value: rng.pick(forms) };
    }
    const knownStr = this.known.filter((f) => f.type === 'string');
    const forms = [
      lit(randomValue(rng, 'string')),
      this.field('string').path,
      `if ${this.atom()} then ${lit(randomValue(rng, 'string'))} else ${this.field('string').path}`,
    ];
    if (knownStr.length > 0) forms.push(rng.pick(knownStr).path, `${rng.pick(knownStr).path} + "x"`);
    return { action: 'set_variable', name: 'str', value: rng.pick(forms) };
  }

  /** A condition that reads `$num` or `$str`. */
  private variableAtom(): string {
    const rng = this.rng;
    const n = lit(randomValue(rng, 'number'));
    const t = lit(randomValue(rng, 'string'));
    return rng.pick([
      `$num > ${n}`,
      `$num == ${n}`,
      `${n} <= $num`,
      `${this.field('number').path} < $num`,
      `$num == null`,
      `$str == ${t}`,
      `$str != ${t}`,
      `$str in [${t}, ${lit(randomValue(rng, 'string'))}]`,
      `starts_with($str, ${t})`,
      `contains(${this.field('string').path}, $str)`,
      `${this.field('string').path} == $str`,
      `is_null($str)`,
    ]);
  }

  /** An arithmetic expression over a number field that fails on some rows (null, or a divisor of 0). */
  failing(): string {
    const n = this.field('number').path;
    return this.rng.pick([`100 / ${n}`, `${n} % 2`, `${n} + 1`, `-${n}`, `${n} * 2`, `7 % ${n}`]);
  }

  /**
   * A condition whose evaluation can fail on some rows but whose truth does not matter (the
   * filter keeps only the failure guard), or a form that was a 500 where a filter exists.
   */
  private failingAtom(): string {
    const rng = this.rng;
    const n = this.field('number');
    switch (rng.int(6)) {
      case 0:
        return `(${this.failing()} > 3.75) || (${this.knownConstant(true)})`;
      case 1:
        return `(${this.failing()} == 1) && (${this.knownConstant(false)})`;
      case 2:
        return `(if ${this.atom()} then 1 else 2) == 1`;
      case 3:
        return `(if ${this.field('boolean').path} then ${n.path} else 5) > 3`;
      case 4: {
        const f = this.field();
        const items = [lit(randomValue(rng, f.type)), lit(randomValue(rng, f.type)), f.path];
        return `${lit(randomValue(rng, f.type))} ${rng.chance(0.5) ? 'in' : 'not in'} [${items.join(', ')}]`;
      }
      default:
        return `${rng.pick(['contains', 'starts_with', 'ends_with'])}(${this.field('string').path}, null)`;
    }
  }

  atom(): string {
    const rng = this.rng;
    if (rng.chance(0.08)) return this.failingAtom();
    if (this.enabled.data && rng.chance(0.15)) return dataAtom(this);
    if (this.enabled.dates && rng.chance(0.15)) return dateAtom(this);
    if (this.enabled.collect && rng.chance(0.1)) return collectAtom(this);
    if (this.useVariables && rng.chance(0.12)) {
      this.readsVariables = true;
      return rng.pick(['$flag', '!$flag', '$count > 1', `$count == ${rng.int(3)}`, `$flag && ${this.atom()}`]);
    }
    if (this.useVariables && rng.chance(0.2)) {
      this.readsVariables = true;
      return this.variableAtom();
    }
    const k = rng.int(20);
    if (k < 7) {
      const f = this.field();
      const ops = f.type === 'boolean' ? ['==', '!='] : ['==', '!=', '<', '<=', '>', '>='];
      const op = rng.pick(ops);
      const v = rng.chance(0.05) ? 'null' : this.operand(f.type);
      return rng.chance(0.2) ? `${v} ${op} ${f.path}` : `${f.path} ${op} ${v}`;
    }
    if (k < 10) {
      const f = this.field();
      const n = rng.int(4);
      const items = Array.from({ length: n }, () => (rng.chance(0.1) ? 'null' : lit(randomValue(rng, f.type))));
      return `${f.path} ${rng.chance(0.5) ? 'in' : 'not in'} [${items.join(', ')}]`;
    }
    if (k < 14) {
      const f = this.field('string');
      const fn = rng.pick(['contains', 'starts_with', 'ends_with']);
      return `${fn}(${f.path}, ${this.operand('string')})`;
    }
    if (k < 15) return `${lit(randomValue(rng, 'string'))} in ${this.field('string').path}`;
    if (k < 17) {
      const f = this.field();
      return rng.pick([`is_null(${f.path})`, `!is_null(${f.path})`, `${f.path} == null`, `${f.path} != null`]);
    }
    if (k < 18 && this.known.length > 0) {
      // A path below a known scalar cannot resolve: null when lenient, a failure when strict.
      const f = rng.pick(this.known);
      return rng.pick([`${f.path}.sub == null`, `is_null(${f.path}.sub)`, `${f.path}.sub != 1`]);
    }
    const b = this.field('boolean');
    return rng.chance(0.5) ? b.path : `!${b.path}`;
  }
}

/**
 * Generates the case of a seed; `features` are the probabilities of the newer parts of the
 * language (tables, reference data, dates: gen-features.ts).
 */
export function generateCase(seed: number, features: FeatureOptions = DEFAULT_FEATURES): FilterCase {
  const rng = new Rng(seed);
  const useVariables = rng.chance(0.35);
  const tables = rng.chance(features.tables);
  const data = rng.chance(features.data);
  const dates = rng.chance(features.dates);
  const collect = tables && useVariables && rng.chance(0.6);
  const b = new CaseBuilder(rng, useVariables, { tables, data, dates, collect });
  const dataset = data
    ? generateDataset(
        rng,
        () => randomValue(rng, 'number'),
        () => randomValue(rng, 'string'),
      )
    : null;
  const codes = ['A', 'B', 'C'];
  const nInner = 1 + rng.int(7);
  const nTerminals = 2 + rng.int(3);
  const inner = Array.from({ length: nInner }, (_, i) => `s${i}`);
  const terminals = Array.from({ length: nTerminals }, (_, i) => `t${i}`);
  const target = (i: number): string => {
    // Mostly forward (towards terminals), sometimes back (a cycle).
    if (rng.chance(0.08)) return rng.pick(inner.slice(0, i + 1));
    const ahead = [...inner.slice(i + 1), ...terminals];
    return rng.pick(ahead);
  };
  const steps: RulesetDoc['steps'] = {};
  inner.forEach((id, i) => {
    if (rng.chance(0.08)) {
      // An action whose value fails on some rows (no condition reads the variable).
      steps[id] = { type: 'action', actions: [{ action: 'set_variable', name: 'tmp', value: b.failing() }], next_step: target(i) };
      return;
    }
    if (rng.chance(0.06)) {
      // Both ways lead to the same step: only the failure of the right side matters.
      const to = target(i);
      const op = rng.pick(['||', '&&']);
      steps[id] = { type: 'decision', branches: [{ condition: `(${b.condition()}) ${op} (${b.failing()} > 1)`, next_step: to }], default_next: to };
      return;
    }
    if (tables && rng.chance(0.3)) {
      steps[id] = routingTable(b, () => target(i));
      return;
    }
    if (tables && useVariables && rng.chance(0.35)) {
      // `$num` / `$str` from the first holding row, or `$hits` (an array) from every holding row.
      steps[id] = setTable(b, collect && rng.chance(0.5) ? 'collect' : 'first', target(i));
      return;
    }
    if (useVariables && rng.chance(0.35)) {
      // `$num` / `$str`, set once or twice in a step (the latest wins).
      steps[id] = { type: 'action', actions: Array.from({ length: 1 + rng.int(2) }, () => b.variableAction()), next_step: target(i) };
      return;
    }
    if (useVariables && rng.chance(0.3)) {
      steps[id] = {
        type: 'action',
        actions: [
          { action: 'set_variable', name: 'flag', value: rng.pick(['true', 'false', b.comparison()]) },
          { action: 'set_variable', name: 'count', value: rng.pick(['0', '2', 'if $flag then 1 else 3']) },
          { action: 'log', message: 'step', level: 'debug' },
        ],
        next_step: target(i),
      };
      return;
    }
    const branches = Array.from({ length: 1 + rng.int(3) }, () => ({ condition: b.condition(), next_step: target(i) }));
    steps[id] = { type: 'decision', branches, ...(rng.chance(0.85) ? { default_next: target(i) } : {}) };
  });
  for (const id of terminals) {
    // Sometimes an output that fails on some rows: those rows yield no code.
    const output = rng.chance(0.25) ? { output: { r: b.failing() } } : {};
    steps[id] = { type: 'terminal', result: { code: rng.pick(codes), message: id }, ...output };
  }

  const knownInput: Record<string, JsonValue> = {};
  for (const [path, v] of b.knownValues) setPath(knownInput, path, v);
  // Target codes among the terminals reachable from the entry (else most cases never match).
  const seen = new Set<string>();
  const walk = (id: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    const st = steps[id]!;
    if (st.type === 'decision') [...st.branches.map((x) => x.next_step), ...(st.default_next ? [st.default_next] : [])].forEach(walk);
    else if (st.type === 'action') walk(st.next_step);
    else if (st.type === 'table') [...st.rows.map((r) => r.next_step), st.default_next, st.next_step].forEach((n) => n !== undefined && walk(n));
  };
  walk('s0');
  const reachable = terminals.filter((id) => seen.has(id));
  const used = [...new Set((reachable.length > 0 ? reachable : terminals).map((id) => (steps[id] as { result: { code: string } }).result.code))];
  const targets = used.filter(() => rng.chance(0.5));
  if (targets.length === 0) targets.push(rng.pick(used));
  if (targets.length === used.length && used.length > 1 && rng.chance(0.8)) targets.splice(rng.int(targets.length), 1);
  if (rng.chance(0.05)) targets.push('Z');
  const mapping: Record<string, string> = {};
  if (rng.chance(0.2)) mapping['user.country'] = 't.user_country';
  if (rng.chance(0.2)) mapping['tag'] = 'tag';
  return {
    seed,
    doc: { config: { name: `gen_${seed}`, entry_step: 's0', ...(rng.chance(0.2) ? { field_missing: 'strict' as const } : {}) }, steps },
    knownInput,
    unknown: b.unknown,
    targets,
    mapping,
    maxPaths: rng.chance(0.1) ? 1 + rng.int(3) : undefined,
    readsVariables: b.readsVariables,
    usesVariables: useVariables,
    data: dataset,
    now: dates ? rng.pick(NOWS) : null,
    features: b.used,
  };
}

/** A row: a value (or null) for every field. */
export type Row = { readonly id: number; readonly values: ReadonlyMap<string, JsonValue> };

/** Random rows; with `nullRate` > 0 some values are null. */
export function generateRows(rng: Rng, count: number, nullRate: number): Row[] {
  return Array.from({ length: count }, (_, id) => ({
    id,
    values: new Map(FIELDS.map((f) => [f.path, rng.chance(nullRate) ? null : fieldValue(rng, f)])),
  }));
}
