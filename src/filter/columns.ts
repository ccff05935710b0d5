/**
 * Field → column names (SPEC.md filter `field_mapping`): a mapped field takes its mapping value,
 * an unmapped one its rule path with `.` replaced by `_`.
 *
 * Column names never reach a filter unchecked: a column must be a plain identifier (ASCII
 * letters, digits and `_`, not starting with a digit, at most 63 characters, the PostgreSQL
 * limit past which names are silently truncated); a mapping value may be a dotted name of up to
 * four such parts (`schema.table.column`). Anything else is a `BAD_REQUEST` `FilterError` (a
 * 400 once the service maps it), for every format (in Mongo a `$` key would be an operator).
 * For SQL the first part must also not be a reserved word: `user` or `current_date` as a bare
 * column would silently read a function instead of the column.
 */
import { badFilterRequest, type FilterError } from './errors.js';
import type { FilterFormat } from './types.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const MAX_PARTS = 4;

/**
 * Reserved words of PostgreSQL (including those allowed only as function or type names), plus
 * the ones SQLite and MySQL add that could change the meaning of a bare name.
 */
const SQL_RESERVED: ReadonlySet<string> = new Set(
  (
    'all analyse analyze and any array as asc asymmetric authorization between binary both case cast check collate ' +
    'collation column concurrently constraint create cross current_catalog current_date current_role current_schema ' +
    'current_time current_timestamp current_user default deferrable delete desc distinct div do drop else end escape ' +
    'except exists false fetch for foreign freeze from full glob grant group having ilike in initially inner insert ' +
    'intersect interval into is isnull join lateral leading left like limit localtime localtimestamp match mod natural ' +
    'not notnull null offset on only or order outer overlaps placing primary references regexp replace returning right ' +
    'rlike select session_user similar some symmetric system_user table tablesample then to trailing true union unique ' +
    'update user using variadic verbose when where window with xor'
  ).split(' '),
);

function bad(field: string, column: string, why: string): FilterError {
  return badFilterRequest(`unsafe column name ${JSON.stringify(column)} for field '${field}': ${why}`, { field, column });
}

/** The column of one rule field; throws a `BAD_REQUEST` `FilterError` when it is not a safe identifier. */
export function columnFor(field: string, mapping: Readonly<Record<string, string>>, format: FilterFormat): string {
  const mapped = Object.hasOwn(mapping, field);
  const column = mapped ? mapping[field]! : field.replaceAll('.', '_');
  const parts = mapped ? column.split('.') : [column];
  if (parts.length > MAX_PARTS || !parts.every((p) => IDENTIFIER.test(p))) {
    const hint = mapped ? '' : ' (map the field to a column with field_mapping)';
    return fail(
      bad(
        field,
        column,
        `a column must be a plain identifier: letters, digits and _, not starting with a digit, at most 63 characters${mapped ? ', parts separated by dots' : ''}${hint}`,
      ),
    );
  }
  if (parts.includes('__proto__')) return fail(bad(field, column, '__proto__ is not a usable name'));
  if (format === 'sql' && SQL_RESERVED.has(parts[0]!.toLowerCase())) {
    return fail(bad(field, column, 'it is a reserved SQL word (map the field to another name, e.g. a table-qualified one)'));
  }
  return column;
}

function fail(err: FilterError): never {
  throw err;
}

/**
 * Columns of every field, in the given order (a `BAD_REQUEST` for the first unsafe one). `known`:
 * checked columns of unmapped fields for this format (the caller's cache: the column of an
 * unmapped field depends only on the field and the format); only safe ones are added.
 */
export function resolveColumns(
  fields: Iterable<string>,
  mapping: Readonly<Record<string, string>>,
  format: FilterFormat,
  known?: Map<string, string>,
): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const f of fields) {
    if (known === undefined || Object.hasOwn(mapping, f)) {
      out.set(f, columnFor(f, mapping, format));
      continue;
    }
    let c = known.get(f);
    if (c === undefined) {
      c = columnFor(f, mapping, format);
      known.set(f, c);
    }
    out.set(f, c);
  }
  return out;
}
