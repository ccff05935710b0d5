/**
 * Reference implementation of the date functions for tests (docs/expressions.md "Dates"),
 * written from the documentation and independent of src/expr/dates.ts: no `Date` object, civil
 * calendar arithmetic on day numbers (the days-from-civil algorithm), its own ISO 8601 reader, and
 * `date_diff` in months and years found by the documented search ("the largest whole count `m`
 * toward zero for which `date_add(a, m, unit)` does not pass `b`"). The error messages are the
 * documented ones (the compiled evaluator must answer the same code and message).
 */
import type { JsonValue } from '../../src/expr/ast.js';
import { ExprRuntimeError } from '../../src/expr/errors.js';
import { typeName } from '../../src/expr/semantics.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Fixed-length units in ms; months and years are calendar units (null). */
const UNIT_MS: ReadonlyMap<string, number | null> = new Map([
  ['years', null],
  ['months', null],
  ['days', DAY],
  ['hours', HOUR],
  ['minutes', MINUTE],
  ['seconds', SECOND],
]);

/** Day number (days since 1970-01-01) of a proleptic Gregorian date; month 1 to 12. */
function dayNumber(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date [year, month 1 to 12, day] of a day number. */
function civil(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function monthLength(y: number, m: number): number {
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

const FIRST = dayNumber(0, 1, 1) * DAY;
const LAST = (dayNumber(9999, 12, 31) + 1) * DAY - 1;

const DATE_PART = /^(\d\d\d\d)-(\d\d)-(\d\d)$/;
const TIME_PART = /^(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?$/;
const OFFSET_PART = /^([+-])(\d\d)(?::?(\d\d))?$/;

/** The time in ms of an ISO 8601 date or date-time text as documented, or null. */
export function referenceParse(text: string): number | null {
  const t = text.indexOf('T');
  const datePart = DATE_PART.exec(t < 0 ? text : text.slice(0, t));
  if (datePart === null) return null;
  const [y, m, d] = [Number(datePart[1]), Number(datePart[2]), Number(datePart[3])];
  if (m < 1 || m > 12 || d < 1 || d > monthLength(y, m)) return null;
  let ms = dayNumber(y, m, d) * DAY;
  if (t >= 0) {
    let rest = text.slice(t + 1);
    let offset = 0;
    if (rest.endsWith('Z')) rest = rest.slice(0, -1);
    else {
      const at = Math.max(rest.lastIndexOf('+'), rest.lastIndexOf('-'));
      if (at >= 0) {
        const o = OFFSET_PART.exec(rest.slice(at));
        if (o === null) return null;
        const [oh, om] = [Number(o[2]), o[3] === undefined ? 0 : Number(o[3])];
        if (oh > 23 || om > 59) return null;
        offset = (o[1] === '-' ? -1 : 1) * (oh * HOUR + om * MINUTE);
        rest = rest.slice(0, at);
      }
    }
    const time = TIME_PART.exec(rest);
    if (time === null) return null;
    const [h, mi, s] = [Number(time[1]), Number(time[2]), time[3] === undefined ? 0 : Number(time[3])];
    if (h > 23 || mi > 59 || s > 59) return null;
    const millis = time[4] === undefined ? 0 : Number((time[4] + '00').slice(0, 3));
    ms += h * HOUR + mi * MINUTE + s * SECOND + millis - offset;
  }
  return ms < FIRST || ms > LAST ? null : ms;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** The canonical text `YYYY-MM-DDTHH:MM:SS.sssZ` of a time in range. */
export function referenceCanonical(ms: number): string {
  const days = Math.floor(ms / DAY);
  let r = ms - days * DAY;
  const [y, m, d] = civil(days);
  const h = Math.floor(r / HOUR);
  r -= h * HOUR;
  const mi = Math.floor(r / MINUTE);
  r -= mi * MINUTE;
  const s = Math.floor(r / SECOND);
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(r - s * SECOND, 3)}Z`;
}

function quoted(v: string): string {
  return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
}

function typeError(message: string): ExprRuntimeError {
  return new ExprRuntimeError('TYPE_ERROR', message);
}

function dateOf(fn: string, v: JsonValue): number | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw typeError(`${fn} expects a date string, got ${typeName(v)}`);
  const ms = referenceParse(v);
  if (ms === null) throw typeError(`${fn}: invalid date ${quoted(v)} (expected ISO 8601, e.g. "2026-11-24" or "2026-11-24T10:00:00Z")`);
  return ms;
}

function unitOf(fn: string, v: JsonValue): string {
  if (typeof v === 'string' && UNIT_MS.has(v)) return v;
  throw typeError(`${fn} expects a unit (${[...UNIT_MS.keys()].join(', ')}), got ${typeof v === 'string' ? quoted(v) : typeName(v)}`);
}

/** `ms` plus `n` calendar months (day clamped to the month's end), or null outside years 0000 to 9999. */
function plusMonths(ms: number, n: number): number | null {
  const days = Math.floor(ms / DAY);
  const [y, m, d] = civil(days);
  const total = y * 12 + (m - 1) + n;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  if (!(ny >= 0 && ny <= 9999)) return null;
  return dayNumber(ny, nm, Math.min(d, monthLength(ny, nm))) * DAY + (ms - days * DAY);
}

/** Whole calendar steps of `size` months from `a` to `b`, by the documented search. */
function calendarDiff(a: number, b: number, size: number): number {
  const [ya, ma] = civil(Math.floor(a / DAY));
  const [yb, mb] = civil(Math.floor(b / DAY));
  let k = Math.trunc(((yb - ya) * 12 + (mb - ma)) / size);
  // Outside the years 0000 to 9999: past any date in range, on its side.
  const at = (n: number): number => plusMonths(a, n * size) ?? (n > 0 ? Infinity : -Infinity);
  if (b >= a) {
    while (k > 0 && at(k) > b) k--;
    while (at(k + 1) <= b) k++;
  } else {
    while (k < 0 && at(k) < b) k++;
    while (at(k - 1) >= b) k--;
  }
  return k;
}

function part(fn: string, v: JsonValue, pick: (ms: number) => number): JsonValue {
  const ms = dateOf(fn, v);
  return ms === null ? null : pick(ms);
}

/** True when `name` is a date function (other than now()). */
export function isReferenceDateFunction(name: string): boolean {
  return ['date', 'date_add', 'date_diff', 'year', 'month', 'day', 'weekday'].includes(name);
}

/** Calls date function `name` (see isReferenceDateFunction) on evaluated arguments. */
export function referenceDateCall(name: string, args: readonly JsonValue[]): JsonValue {
  const [a, b, c] = args as [JsonValue, JsonValue, JsonValue];
  switch (name) {
    case 'date': {
      const ms = dateOf('date', a);
      return ms === null ? null : referenceCanonical(ms);
    }
    case 'date_add': {
      const unit = unitOf('date_add', c);
      const ms = dateOf('date_add', a);
      if (ms === null || b === null) return null;
      if (typeof b !== 'number' || !Number.isInteger(b))
        throw typeError(`date_add expects a whole number of ${unit}, got ${typeof b === 'number' ? String(b) : typeName(b)}`);
      const size = UNIT_MS.get(unit)!;
      const r = size === null ? plusMonths(ms, unit === 'years' ? b * 12 : b) : ms + b * size;
      if (r === null || !(r >= FIRST && r <= LAST)) throw typeError('result of date_add is outside the years 0000 to 9999');
      return referenceCanonical(r);
    }
    case 'date_diff': {
      const unit = unitOf('date_diff', c);
      const from = dateOf('date_diff', a);
      const to = dateOf('date_diff', b);
      if (from === null || to === null) return null;
      const size = UNIT_MS.get(unit)!;
      const r = size === null ? calendarDiff(from, to, unit === 'years' ? 12 : 1) : Math.trunc((to - from) / size);
      return r === 0 ? 0 : r;
    }
    case 'year':
      return part('year', a, (ms) => civil(Math.floor(ms / DAY))[0]);
    case 'month':
      return part('month', a, (ms) => civil(Math.floor(ms / DAY))[1]);
    case 'day':
      return part('day', a, (ms) => civil(Math.floor(ms / DAY))[2]);
    case 'weekday':
      // 1970-01-01 (day 0) was a Thursday (4); 1 = Monday.
      return part('weekday', a, (ms) => (((Math.floor(ms / DAY) % 7) + 7 + 3) % 7) + 1);
    default:
      throw new Error(`not a date function: ${name}`);
  }
}
