/**
 * All escaping of the filter emitters, in one module (SPEC.md filter "String literals ...",
 * "Regex metacharacters ..."). Nothing else in src/filter builds literal text.
 *
 * - SQL string literal: `'...'` with `'` doubled. Backslashes are plain characters, as in
 *   standard SQL (PostgreSQL with standard_conforming_strings on, SQLite; MySQL needs the
 *   NO_BACKSLASH_ESCAPES mode, see docs/filter.md).
 * - LIKE pattern: `!` → `!!`, `%` → `!%`, `_` → `!_`, used with `ESCAPE '!'`; then quoted as
 *   a string literal.
 * - Numbers: JSON number text (`-3`, `1.5`, `1e+21`); booleans `TRUE` / `FALSE`; `NULL`.
 * - Regex (Mongo `$regex`): every metacharacter `\ ^ $ . | ? * + ( ) [ ] { }` backslash-escaped,
 *   so the pattern matches the literal text.
 */
import type { JsonValue } from '../expr/ast.js';

/** A SQL string literal: single quotes doubled. */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** A SQL number literal (JSON number text). */
export function sqlNumber(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  // NOTE: String(-0) is "0"; exponents come out as `1e+21` / `1e-7`, valid SQL numeric literals.
  return String(n);
}

/** A SQL literal for a scalar value: string, number, boolean or null. */
export function sqlLiteral(v: JsonValue): string {
  if (v === null) return 'NULL';
  switch (typeof v) {
    case 'string':
      return sqlString(v);
    case 'number':
      return sqlNumber(v);
    case 'boolean':
      return v ? 'TRUE' : 'FALSE';
    default:
      throw new TypeError('arrays and objects have no SQL literal');
  }
}

/** Escapes the LIKE wildcards and the escape character itself, for `ESCAPE '!'`. */
export function likeEscape(s: string): string {
  return s.replace(/[!%_]/g, '!$&');
}

/** The quoted LIKE pattern of a contains / starts_with / ends_with test. */
export function likePattern(kind: 'contains' | 'starts_with' | 'ends_with', s: string): string {
  const body = likeEscape(s);
  const pattern = kind === 'contains' ? `%${body}%` : kind === 'starts_with' ? `${body}%` : `%${body}`;
  return sqlString(pattern);
}

/** Escapes every regular-expression metacharacter so the text matches literally. */
export function regexEscape(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/** The `$regex` text of a contains / starts_with / ends_with test. */
export function regexPattern(kind: 'contains' | 'starts_with' | 'ends_with', s: string): string {
  const body = regexEscape(s);
  return kind === 'contains' ? body : kind === 'starts_with' ? `^${body}` : `${body}$`;
}
