/**
 * A behavioural-diff region written out (EXTENSIONS.md 4): the filter's predicate tree (`json`
 * format) with rule field paths as fields, and the filter's SQL with its default columns (a
 * field's path with `.` replaced by `_`, no `field_mapping`: docs/behavioral-diff.md).
 *
 * NOTE (superset): a condition no format can write (`unsupported`: arithmetic or a function on
 * an input field, two fields compared) is replaced by `always`. The tree is in negation normal
 * form, where `and`/`or` are monotone, so the region becomes a superset of itself: `exact` false.
 */
import { FilterError } from '../filter/errors.js';
import type { JsonFilterNode } from '../filter/index.js';
import { checkCapability } from '../filter/capability.js';
import { resolveColumns } from '../filter/columns.js';
import { toJsonTree } from '../filter/json.js';
import { hasNul } from '../filter/nul.js';
import { ALWAYS, NEVER, and, fieldsOf, or, type Pred } from '../filter/predicate.js';
import type { Path } from '../filter/simplify.js';
import { toSql } from '../filter/sql.js';

/** A region's tree and SQL, and whether they are exact. */
export interface DiffTree {
  readonly condition: JsonFilterNode;
  /** Null when SQL cannot write it (a list or object value, an unsafe column name, a NUL). */
  readonly sql: string | null;
  /** False when an inexpressible condition was widened to `always`. */
  readonly exact: boolean;
}

/** Renders the OR of `paths` (each the AND of its conditions). */
export function filterDefaults(paths: readonly Path[]): DiffTree {
  const state = { widened: false };
  const tree = widen(or(paths.map((p) => and(p))), state);
  const fields = [...fieldsOf(tree)];
  const identity = new Map(fields.map((f) => [f, f]));
  return { condition: toJsonTree(tree, identity), sql: sqlOf(tree, fields), exact: !state.widened };
}

/** `tree` with every `unsupported` node replaced by `always` (rebuilt only where one is). */
function widen(p: Pred, state: { widened: boolean }): Pred {
  if (p.type === 'unsupported') {
    state.widened = true;
    return ALWAYS;
  }
  if (p.type !== 'and' && p.type !== 'or') return p;
  let changed = false;
  const parts = p.conditions.map((c) => {
    const w = widen(c, state);
    changed ||= w !== c;
    return w;
  });
  if (!changed) return p;
  return p.type === 'and' ? and(parts) : or(parts);
}

function sqlOf(tree: Pred, fields: readonly string[]): string | null {
  if (tree === NEVER) return 'FALSE';
  try {
    const columns = resolveColumns(fields, {}, 'sql');
    checkCapability(tree, 'sql');
    const sql = toSql(tree, columns);
    return hasNul(sql) ? null : sql;
  } catch (err) {
    if (err instanceof FilterError) return null;
    throw err;
  }
}
