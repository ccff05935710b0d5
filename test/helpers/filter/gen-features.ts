/**
 * The newer parts of the language in generated filter cases (EXTENSIONS.md 3, issue 19):
 * decision tables (routing tables with cells in every form, `set` tables with hit_policy `first`
 * and `collect`), reference data (`@ref.path` over a generated dataset snapshot the filter reads as
 * known values) and dates (date functions over known date fields, literals, datasets and a fixed
 * request `now`; rarely over the unknown date column, which no format can express).
 *
 * Used by gen-case.ts through the small `AtomSource` view of its case builder, so this file does
 * not import it (type imports only).
 */
import type { JsonValue } from '../../../src/expr/ast.js';
import type { TableRowDoc, TableStepDoc } from '../../../src/ruleset/model.js';
import type { FieldSpec, Rng } from './gen-case.js';

/** Which newer parts a case may use (the generator's options). */
export interface FeatureOptions {
  /** Probability that a case uses decision tables. */
  readonly tables: number;
  /** Probability that a case has a dataset snapshot and conditions reading `@ref`. */
  readonly data: number;
  /** Probability that a case has a request `now` and date conditions. */
  readonly dates: number;
}

/** The defaults of the soundness property. */
export const DEFAULT_FEATURES: FeatureOptions = Object.freeze({ tables: 0.35, data: 0.3, dates: 0.3 });

/** What a generated case actually holds (the test counts these). */
export interface FeatureUse {
  routingTable: boolean;
  firstTable: boolean;
  collectTable: boolean;
  /** A condition reads a collect table's array (untracked: the answer may say exact: false). */
  readsCollect: boolean;
  data: boolean;
  dates: boolean;
  /** A date function of the unknown date column (INEXPRESSIBLE unless the planner drops it). */
  dateOfColumn: boolean;
}

/** A new FeatureUse with nothing used. */
export function noFeatureUse(): FeatureUse {
  return { routingTable: false, firstTable: false, collectTable: false, readsCollect: false, data: false, dates: false, dateOfColumn: false };
}

/** The view of the case builder the feature generators need. */
export interface AtomSource {
  readonly rng: Rng;
  readonly known: readonly FieldSpec[];
  readonly useVariables: boolean;
  readonly enabled: { readonly tables: boolean; readonly data: boolean; readonly dates: boolean; readonly collect: boolean };
  readonly used: FeatureUse;
  readsVariables: boolean;
  field(type?: FieldSpec['type']): FieldSpec;
  /** A literal of a type, or sometimes a known field of that type. */
  operand(type: FieldSpec['type']): string;
  /** The date field (a text column of canonical dates). */
  readonly dateField: FieldSpec;
  /** A random literal value of a type. */
  value(type: FieldSpec['type']): JsonValue;
  /** An ordinary condition atom. */
  atom(): string;
  /** An arithmetic expression over a number field that fails on some rows. */
  failing(): string;
}

/** Canonical dates around the request times (and a date-only text, which compares as text). */
export const DATES: readonly string[] = [
  '2026-11-24T10:00:00.000Z',
  '2026-11-24T00:00:00.000Z',
  '2026-11-23T09:59:59.999Z',
  '2026-10-25T10:00:00.000Z',
  '2026-12-24T10:00:00.000Z',
  '2025-11-24T10:00:00.000Z',
  '2026-02-28T23:59:59.999Z',
  '2024-02-29T00:00:00.000Z',
  '2000-01-01T00:00:00.000Z',
  '2026-11-24',
];

/** Request times (`now`), some with an offset or date-only (the request canonicalises them). */
export const NOWS: readonly string[] = ['2026-11-24T10:00:00Z', '2026-11-24', '2024-02-29T12:00:00+02:00', '2026-01-31T23:30:00.000Z', '2026-11-29T08:00:00Z'];

const UNITS = ['days', 'days', 'months', 'years', 'hours'] as const;
const STEPS = [-400, -30, -7, -1, 0, 1, 30];
const ORDER = ['==', '!=', '<', '<=', '>', '>='];

function lit(v: JsonValue): string {
  return JSON.stringify(v);
}

/** A value of a field: a date from the pool for the date field, else a value of its type. */
export function dateValue(rng: Rng, known: boolean): string {
  // A known date is sometimes not a date at all: date functions of it fail (a known failure).
  if (known && rng.chance(0.05)) return rng.pick(['2026-02-30', 'soon']);
  return rng.pick(DATES);
}

/** The dataset snapshot of a case: `ref` (numbers, strings, lists, a flag, a date, a nested object). */
export function generateDataset(rng: Rng, num: () => JsonValue, str: () => JsonValue): Map<string, JsonValue> {
  const ref: Record<string, JsonValue> = {
    min: num(),
    max: num(),
    country: str(),
    list: Array.from({ length: 1 + rng.int(3) }, str),
    nums: Array.from({ length: 1 + rng.int(3) }, num),
    flag: rng.chance(0.5),
    start: rng.pick(DATES),
    nested: { level: num() },
  };
  return new Map<string, JsonValue>([['ref', ref]]);
}

/** A condition reading reference data (`@ref.…`, known values), sometimes a dataset that does not exist. */
export function dataAtom(b: AtomSource): string {
  const rng = b.rng;
  b.used.data = true;
  const num = b.field('number').path;
  const str = b.field('string').path;
  switch (rng.int(11)) {
    case 0:
      return `${num} ${rng.pick(ORDER)} @ref.min`;
    case 1:
      return `@ref.max ${rng.pick(ORDER)} ${num}`;
    case 2:
      return `${str} ${rng.pick(['==', '!='])} @ref.country`;
    case 3:
      return `${str} ${rng.pick(['in', 'not in'])} @ref.list`;
    case 4:
      return `${num} ${rng.pick(['in', 'not in'])} @ref.nums`;
    case 5:
      return rng.pick(['@ref.flag', '!@ref.flag', `@ref.flag && (${b.atom()})`, `@ref.flag || (${b.atom()})`]);
    case 6:
      return `${rng.pick(['starts_with', 'contains', 'ends_with'])}(${str}, @ref.country)`;
    case 7:
      return `${num} < @ref.nested.level + 1`;
    case 8:
      return `(@ref.max - @ref.min) ${rng.pick(ORDER)} ${num}`;
    case 9:
      // Reads nothing: null (lenient) or MISSING_FIELD (strict): a known failure then.
      return rng.pick(['@ref.missing == null', 'is_null(@gone.x)', `@gone.x != ${lit(1)}`, '@ref.nested.none == null']);
    default:
      return b.useVariables ? `$num ${rng.pick(ORDER)} @ref.min` : `${str} == @ref.list[0]`;
  }
}

/** A date expression whose value is known: now(), a known date field, a literal, `@ref.start`, date_add of one. */
function knownDate(b: AtomSource): string {
  const rng = b.rng;
  const since = b.known.find((f) => f.path === 'since');
  const pool = ['now()', 'now()', lit(rng.pick(DATES)), `date(${lit(rng.pick(DATES))})`];
  if (since !== undefined) pool.push(since.path, since.path);
  if (b.enabled.data) pool.push('@ref.start');
  const d = rng.pick(pool);
  return rng.chance(0.3) ? `date_add(${d}, ${rng.pick(STEPS)}, "${rng.pick(UNITS)}")` : d;
}

/**
 * A condition with dates: the date column compared with a known date (exact), date functions of
 * known dates (folded), and rarely a date function of the unknown column (not expressible).
 */
export function dateAtom(b: AtomSource): string {
  const rng = b.rng;
  b.used.dates = true;
  const sinceKnown = b.known.some((f) => f.path === 'since');
  switch (rng.int(8)) {
    case 0:
    case 1:
      return `since ${rng.pick(ORDER)} ${knownDate(b)}`;
    case 2:
      return `${knownDate(b)} ${rng.pick(['<', '>='])} since`;
    case 3:
      return `date_diff(${knownDate(b)}, ${knownDate(b)}, "${rng.pick(UNITS)}") ${rng.pick(ORDER)} ${rng.pick(STEPS)}`;
    case 4:
      return `${rng.pick(['weekday', 'month', 'day', 'year'])}(${knownDate(b)}) ${rng.pick(ORDER)} ${rng.pick([1, 2, 5, 6, 11, 24, 2026])}`;
    case 5:
      return `${knownDate(b)} < ${knownDate(b)} && (${b.atom()})`;
    case 6:
      return `since in [${lit(rng.pick(DATES))}, ${knownDate(b)}]`;
    default:
      if (!sinceKnown && rng.chance(0.25)) {
        b.used.dateOfColumn = true;
        return `year(since) >= 2026`;
      }
      return `since >= date(${knownDate(b)})`;
  }
}

/** A cell of a column of `type` (input `input`), in one of the forms docs/steps.md lists. */
function cell(b: AtomSource, f: FieldSpec | null): string {
  const rng = b.rng;
  const type = f?.type ?? 'number';
  const v = (): string => (f?.date === true && rng.chance(0.7) ? lit(rng.pick(DATES)) : lit(b.value(type)));
  switch (rng.int(12)) {
    case 0:
      return '-';
    case 1:
      return rng.pick(['', ' ', ' - ']);
    case 2:
    case 3:
      return v();
    case 4: {
      const ops = type === 'boolean' ? ['==', '!='] : ORDER;
      return `${rng.pick(ops)} ${rng.chance(0.1) ? 'null' : v()}`;
    }
    case 5:
      return `in [${Array.from({ length: 1 + rng.int(3) }, v).join(', ')}]`;
    case 6:
      return `not in [${Array.from({ length: 1 + rng.int(2) }, v).join(', ')}]`;
    case 7:
    case 8:
      return placeholderCell(b, type);
    case 9:
      return rng.pick(['!= null', '== null']);
    case 10:
      if (f?.date === true && b.enabled.dates) {
        b.used.dates = true;
        return `${rng.pick(['<', '>=', '=='])} ${knownDate(b)}`;
      }
      if (b.enabled.data) {
        b.used.data = true;
        return type === 'number'
          ? rng.pick(['>= @ref.min', 'in @ref.nums', '? < @ref.max'])
          : type === 'string'
            ? rng.pick(['in @ref.list', '== @ref.country'])
            : '== @ref.flag';
      }
      return `${rng.pick(type === 'boolean' ? ['==', '!='] : ORDER)} ${b.operand(type)}`;
    default:
      return '-';
  }
}

/** A cell using `?` for the column's value. */
function placeholderCell(b: AtomSource, type: FieldSpec['type']): string {
  const rng = b.rng;
  const n = (): string => lit(b.value('number'));
  const s = (): string => lit(b.value('string'));
  if (type === 'number')
    return rng.pick([`? > ${n()} && ? <= ${n()}`, `? == ${n()} || ? == ${n()}`, `!(? < ${n()})`, `is_null(?)`, `? != null && ? >= ${n()}`]);
  if (type === 'string') return rng.pick([`starts_with(?, ${s()})`, `? != ${s()} && contains(?, ${s()})`, `ends_with(?, ${s()}) || ? == ${s()}`, `is_null(?)`]);
  return rng.pick(['!?', '? == true', '? || is_null(?)']);
}

/** A table input: mostly a field (its type drives the cells), sometimes a known value or `$num`. */
function input(b: AtomSource, allowVariables: boolean): { text: string; field: FieldSpec | null } {
  const rng = b.rng;
  if (b.enabled.data && rng.chance(0.08)) {
    b.used.data = true;
    return { text: '@ref.min', field: null };
  }
  if (allowVariables && b.useVariables && rng.chance(0.08)) {
    b.readsVariables = true;
    return { text: '$num', field: null };
  }
  if (b.enabled.dates && rng.chance(0.2)) {
    return { text: b.dateField.path, field: b.dateField };
  }
  const f = b.field();
  return { text: f.path, field: f };
}

/** A routing table: 1 to 3 inputs, 1 to 4 rows (each to `next()`), a default_next most of the time. */
export function routingTable(b: AtomSource, next: () => string): TableStepDoc {
  const rng = b.rng;
  b.used.routingTable = true;
  const inputs = Array.from({ length: 1 + rng.int(3) }, () => input(b, true));
  const rows: TableRowDoc[] = Array.from({ length: 1 + rng.int(4) }, () => ({ when: inputs.map((i) => cell(b, i.field)), next_step: next() }));
  return { type: 'table', inputs: inputs.map((i) => i.text), rows, ...(rng.chance(0.85) ? { default_next: next() } : {}) };
}

/** A value a `set` row stores in `$num` (number) or `$str` (string): never reads the table's own variables. */
function setValue(b: AtomSource, name: 'num' | 'str' | 'hits'): string {
  const rng = b.rng;
  const type = name === 'num' ? 'number' : 'string';
  const forms = [b.operand(type), b.operand(type), b.field(type).path];
  if (b.enabled.data) forms.push(name === 'num' ? '@ref.min' : '@ref.country');
  if (name === 'num' && rng.chance(0.3)) forms.push(`${b.field('number').path} * 2`, b.failing());
  if (name === 'str' && b.enabled.dates) forms.push(knownDate(b));
  if (name === 'str' && b.enabled.dates && !b.known.includes(b.dateField) && rng.chance(0.15)) {
    // Fails on a row whose date column is not a date: the filter says exact: false.
    b.used.dateOfColumn = true;
    forms.push('date_add(since, 1, "days")');
  }
  return rng.pick(forms);
}

/**
 * A `set` table with hit_policy `first` (sets `$num` and/or `$str`: substituted into later
 * conditions) or `collect` (sets `$hits`: an array, read as untracked by the filter).
 */
export function setTable(b: AtomSource, policy: 'first' | 'collect', next: string): TableStepDoc {
  const rng = b.rng;
  if (policy === 'first') b.used.firstTable = true;
  else b.used.collectTable = true;
  const inputs = Array.from({ length: 1 + rng.int(2) }, () => input(b, false));
  const names: ('num' | 'str' | 'hits')[] = policy === 'collect' ? ['hits'] : ['num', 'str'];
  const rows: TableRowDoc[] = Array.from({ length: 1 + rng.int(3) }, () => {
    const set: Record<string, string> = {};
    for (const n of names) if (rng.chance(0.7)) set[n] = setValue(b, n);
    if (Object.keys(set).length === 0) set[names[0]!] = setValue(b, names[0]!);
    return { when: inputs.map((i) => cell(b, i.field)), set };
  });
  if (rng.chance(0.4)) rows.push({ when: inputs.map(() => '-'), set: { [names[0]!]: setValue(b, names[0]!) } });
  return { type: 'table', hit_policy: policy, inputs: inputs.map((i) => i.text), rows, next_step: next };
}

/** A condition reading a collect table's array `$hits` (untracked in filters). */
export function collectAtom(b: AtomSource): string {
  const rng = b.rng;
  b.used.readsCollect = true;
  b.readsVariables = true;
  return rng.pick(['len($hits) > 0', 'len($hits) >= 2', `${lit(b.value('string'))} in $hits`, '$hits == []']);
}
