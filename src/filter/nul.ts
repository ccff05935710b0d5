/**
 * NUL characters and SQL (EXTENSIONS.md 6 "Filters and failures": a SQL literal never carries a
 * NUL character). PostgreSQL refuses U+0000 in text and SQLite cuts the statement there, so a
 * SQL filter whose text holds one is refused: a 400 when the character comes from the known
 * input (the caller's value), an inexpressible condition (500) when it comes from the ruleset.
 * Mongo and JSON answers carry it as a JSON string escape (`\u0000`) and are not refused.
 */
import type { JsonValue } from '../expr/ast.js';
import { badFilterRequest, inexpressible, type FilterError } from './errors.js';

/** True when the SQL text holds a NUL. NOTE (speed): one native scan of the answer. */
export function hasNul(sql: string): boolean {
  return sql.includes('\u0000');
}

/** The error for a SQL filter holding a NUL, naming the first known value that contains one. */
export function nulError(known: JsonValue): FilterError {
  const at = nulPath(known, '');
  if (at === null) return inexpressible('a string in the ruleset contains a NUL character, which SQL text cannot carry');
  return badFilterRequest(`known value at ${at} contains a NUL character, which SQL text cannot carry`, { path: at });
}

/** Rule path text (`a.b`, `a[0]`, `a["odd key"]`) of the first string holding a NUL, or null. */
function nulPath(v: JsonValue, path: string): string | null {
  if (typeof v === 'string') return v.includes('\u0000') ? path : null;
  if (v === null || typeof v !== 'object') return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = nulPath(v[i]!, `${path}[${i}]`);
      if (p !== null) return p;
    }
    return null;
  }
  for (const k of Object.keys(v)) {
    const key = /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? (path === '' ? k : `${path}.${k}`) : `${path}[${JSON.stringify(k)}]`;
    const p = nulPath(v[k]!, key);
    if (p !== null) return p;
  }
  return null;
}
