/**
 * Date and time functions (EXTENSIONS.md 3 "Dates and time", docs/expressions.md "Dates"):
 * `now()`, `date`, `date_add`, `date_diff`, `year`, `month`, `day`, `weekday`.
 *
 * A date is a string in the canonical form `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC, milliseconds, years
 * 0000 to 9999: what `Date.prototype.toISOString` writes), so canonical dates compare in time
 * order with `<` and `==`. Every function accepts any ISO 8601 text `parseIsoDate` reads and
 * answers canonical text; a date-only text is midnight UTC, a date-time without an offset is UTC.
 * A null argument gives null (like the string and number functions); a text that is not a date is
 * a TYPE_ERROR naming the value.
 *
 * `now()` reads the execution's time (`nowState`): the request's `"now"`, else the clock, read at
 * the first call and kept until the next execution starts (`beginNow`). Pure otherwise.
 */
import type { JsonValue, Node } from './ast.js';
import { ExprRuntimeError } from './errors.js';
import { typeName } from './semantics.js';

const MS_SECOND = 1000;
const MS_MINUTE = 60 * MS_SECOND;
const MS_HOUR = 60 * MS_MINUTE;
const MS_DAY = 24 * MS_HOUR;

/** Units of `date_add` and `date_diff`, with their length in ms (0: calendar units). */
const UNITS: Readonly<Record<string, number>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, number>, {
    years: 0,
    months: 0,
    days: MS_DAY,
    hours: MS_HOUR,
    minutes: MS_MINUTE,
    seconds: MS_SECOND,
  }),
);

/** The unit names, as error messages list them. */
export const DATE_UNITS: readonly string[] = Object.freeze(Object.keys(UNITS));

/** Longest text `parseIsoDate` reads (`2026-11-24T10:00:00.123456789+05:30` is 35). */
const MAX_DATE_TEXT = 40;

// YYYY-MM-DD, then optionally THH:MM, :SS, .fraction (1 to 9 digits), Z or ±HH:MM / ±HHMM / ±HH.
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/** Days in month `m` (1 to 12) of year `y`. */
function daysIn(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Milliseconds since the epoch of a UTC calendar time (month 1 to 12; years below 100 too). */
function utcMs(y: number, m: number, d: number, ms: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d); // NOTE: Date.UTC would read years 0 to 99 as 1900 to 1999.
  return t.getTime() + ms;
}

/** Smallest and largest canonical times (years 0000 to 9999). */
const MIN_MS = utcMs(0, 1, 1, 0);
const MAX_MS = utcMs(9999, 12, 31, MS_DAY - 1);

/** The value as short text for an error message (a long string is cut). */
function show(v: string): string {
  return JSON.stringify(v.length > MAX_DATE_TEXT ? `${v.slice(0, MAX_DATE_TEXT)}...` : v);
}

function invalid(text: string, fn: string): ExprRuntimeError {
  return new ExprRuntimeError('TYPE_ERROR', `${fn}: invalid date ${show(text)} (expected ISO 8601, e.g. "2026-11-24" or "2026-11-24T10:00:00Z")`);
}

/**
 * Milliseconds since the epoch of an ISO 8601 date (`2026-11-24`: midnight UTC) or date-time
 * (`2026-11-24T10:30`, `...:15`, `...:15.5`, with `Z` or an offset `+05:30`; none means UTC),
 * or null when the text is not one (out-of-range fields, `2026-02-30`, a result outside years
 * 0000 to 9999). Fractions finer than a millisecond are truncated.
 */
export function parseIsoDate(text: string): number | null {
  if (text.length > MAX_DATE_TEXT) return null;
  const m = ISO.exec(text);
  if (m === null) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return null;
  const h = m[4] === undefined ? 0 : Number(m[4]);
  const mi = m[5] === undefined ? 0 : Number(m[5]);
  const s = m[6] === undefined ? 0 : Number(m[6]);
  if (h > 23 || mi > 59 || s > 59) return null;
  const frac = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  let offset = 0;
  const z = m[8];
  if (z !== undefined && z !== 'Z') {
    const digits = z.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) return null;
    offset = (z[0] === '-' ? -1 : 1) * (oh * MS_HOUR + om * MS_MINUTE);
  }
  const t = utcMs(y, mo, d, h * MS_HOUR + mi * MS_MINUTE + s * MS_SECOND + frac) - offset;
  return t < MIN_MS || t > MAX_MS ? null : t;
}

/** The canonical text of a time in range (`2026-11-24T00:00:00.000Z`). */
export function canonicalDate(ms: number): string {
  return new Date(ms).toISOString();
}

/** The canonical text of an ISO 8601 date or date-time, or null when it is not one. */
export function canonicalDateText(text: string): string | null {
  const t = parseIsoDate(text);
  return t === null ? null : canonicalDate(t);
}

/** A date argument: its time in ms, null for null; TYPE_ERROR for anything else. */
function dateArg(fn: string, v: JsonValue): number | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw new ExprRuntimeError('TYPE_ERROR', `${fn} expects a date string, got ${typeName(v)}`);
  const t = parseIsoDate(v);
  if (t === null) throw invalid(v, fn);
  return t;
}

function unitArg(fn: string, v: JsonValue): string {
  if (typeof v === 'string' && Object.hasOwn(UNITS, v)) return v;
  const got = typeof v === 'string' ? show(v) : typeName(v);
  throw new ExprRuntimeError('TYPE_ERROR', `${fn} expects a unit (${DATE_UNITS.join(', ')}), got ${got}`);
}

function inRange(fn: string, t: number): number {
  if (!(t >= MIN_MS && t <= MAX_MS)) throw new ExprRuntimeError('TYPE_ERROR', `result of ${fn} is outside the years 0000 to 9999`);
  return t;
}

/** `t` plus `n` calendar months, the day clamped to the end of the target month. */
function addMonths(t: number, n: number): number {
  const d = new Date(t);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + n;
  const y = Math.floor(total / 12);
  const m = total - y * 12 + 1;
  if (y < 0 || y > 9999) return NaN;
  const day = Math.min(d.getUTCDate(), daysIn(y, m));
  return utcMs(y, m, day, t - utcMs(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0));
}

/** `date(text)`: the canonical text of an ISO 8601 date or date-time. */
export function dateFn(a: JsonValue): JsonValue {
  const t = dateArg('date', a);
  return t === null ? null : canonicalDate(t);
}

/** `date_add(d, n, unit)`: `n` (a whole number, may be negative) units later; months clamp at month end. */
export function dateAdd(d: JsonValue, n: JsonValue, unit: JsonValue): JsonValue {
  const u = unitArg('date_add', unit);
  const t = dateArg('date_add', d);
  if (n === null || t === null) return null;
  if (typeof n !== 'number' || !Number.isInteger(n)) {
    throw new ExprRuntimeError('TYPE_ERROR', `date_add expects a whole number of ${u}, got ${typeof n === 'number' ? String(n) : typeName(n)}`);
  }
  const size = UNITS[u]!;
  const r = size > 0 ? t + n * size : addMonths(t, u === 'years' ? n * 12 : n);
  return canonicalDate(inRange('date_add', r));
}

/**
 * Whole calendar months from `a` to `b`, truncated toward zero: the `m` furthest from 0 with
 * `date_add(a, m, "months")` not past `b` (so `date_add(a, date_diff(a, b, u), u)` never passes `b`).
 */
function monthsBetween(a: number, b: number): number {
  const da = new Date(a);
  const db = new Date(b);
  let m = (db.getUTCFullYear() - da.getUTCFullYear()) * 12 + (db.getUTCMonth() - da.getUTCMonth());
  if (b >= a) {
    while (m > 0 && addMonths(a, m) > b) m--;
  } else {
    while (m < 0 && addMonths(a, m) < b) m++;
  }
  return m;
}

/** `date_diff(a, b, unit)`: whole units from `a` to `b` (negative when `b` is earlier), truncated toward zero. */
export function dateDiff(a: JsonValue, b: JsonValue, unit: JsonValue): JsonValue {
  const u = unitArg('date_diff', unit);
  const ta = dateArg('date_diff', a);
  const tb = dateArg('date_diff', b);
  if (ta === null || tb === null) return null;
  const size = UNITS[u]!;
  const r = size > 0 ? Math.trunc((tb - ta) / size) : u === 'months' ? monthsBetween(ta, tb) : Math.trunc(monthsBetween(ta, tb) / 12);
  return r === 0 ? 0 : r; // NOTE: no -0.
}

function partFn(name: string, part: (d: Date) => number): (a: JsonValue) => JsonValue {
  return (a) => {
    const t = dateArg(name, a);
    return t === null ? null : part(new Date(t));
  };
}

/** `year(d)`, `month(d)` (1 to 12), `day(d)` (1 to 31), `weekday(d)` (1 = Monday to 7 = Sunday), in UTC. */
export const yearFn = partFn('year', (d) => d.getUTCFullYear());
export const monthFn = partFn('month', (d) => d.getUTCMonth() + 1);
export const dayFn = partFn('day', (d) => d.getUTCDate());
export const weekdayFn = partFn('weekday', (d) => ((d.getUTCDay() + 6) % 7) + 1);

/**
 * The execution's time. NOTE (speed): like the work budget's meter, one module-level state
 * (evaluation is synchronous): `request` is the `"now"` of the request being answered (set by the
 * transport around the service call), `current` the value `now()` answers in the running
 * execution, null until the first call reads the clock. Only executions of rulesets that call
 * now() (known at compile time) reset it, so other executions do no work for it.
 */
export const nowState: { request: string | null; current: string | null; clock: () => number } = {
  request: null,
  current: null,
  clock: Date.now,
};

/** Sets the `"now"` of the request being answered (canonical text, or null: the clock). */
export function setRequestNow(canonical: string | null): void {
  nowState.request = canonical;
  nowState.current = canonical;
}

/** Starts an execution's time: the request's `"now"`, else the clock at the first `now()`. */
export function beginNow(): void {
  nowState.current = nowState.request;
}

/** `now()`: the execution's time as canonical text. */
export function nowFn(): string {
  const c = nowState.current;
  if (c !== null) return c;
  return (nowState.current = canonicalDate(nowState.clock()));
}

/** True when the syntax tree calls `now()` anywhere. */
export function callsNow(node: Node): boolean {
  switch (node.kind) {
    case 'literal':
    case 'path':
      return false;
    case 'array':
      return node.items.some(callsNow);
    case 'unary':
      return callsNow(node.operand);
    case 'binary':
      return callsNow(node.left) || callsNow(node.right);
    case 'if':
      return callsNow(node.cond) || callsNow(node.then) || callsNow(node.else);
    case 'call':
      return node.name === 'now' || node.args.some(callsNow);
  }
}
