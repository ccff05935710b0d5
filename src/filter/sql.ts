/**
 * SQL emitter (SPEC.md filter "SQL output"). Pure text building over a predicate tree that passed
 * the capability check; every literal goes through escape.ts, every column was checked by
 * columns.ts.
 *
 * Renderings beyond the spec table (decisions, see docs/filter.md):
 * - `x < v`, `x <= v`, `x > v`, `x >= v` as such; `not (x > v)` as `x <= v` (the same in SQL's
 *   three-valued logic: both are NULL for a NULL column).
 * - `not contains` / `not starts_with` / `not ends_with` as `NOT LIKE`.
 * - a bare field used as a condition (engine truthiness) as `col IS TRUE`, its negation as
 *   `col IS NOT TRUE` (exact for boolean columns, NULL included).
 * - `in` / `not in` lists that contain null: `(col IN (...) OR col IS NULL)` and
 *   `(col NOT IN (...) AND col IS NOT NULL)`, because `IN (NULL)` never matches in SQL.
 * - a top-level OR of paths is `(p1) OR (p2)`; nested ones `(a OR b)`; ANDs `(a AND b)`.
 */
import type { JsonValue } from '../expr/ast.js';
import { likePattern, sqlLiteral } from './escape.js';
import { hasNul } from './nul.js';
import { SQL_TEXT, type Pred } from './predicate.js';

const OPS = { eq: '=', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' } as const;
const NOT_OPS = { lt: '>=', le: '>', gt: '<=', ge: '<' } as const;

/** Renders the tree as a SQL boolean expression (the filter text). */
export function toSql(tree: Pred, columns: ReadonlyMap<string, string>): string {
  return toSqlAnswer(tree, columns).text;
}

/**
 * The filter text, and whether it holds a NUL character (nul.ts). NOTE (speed): the flag comes
 * from the cached pieces (each checked once, when it is first written), not from a scan of the
 * whole answer.
 */
export function toSqlAnswer(tree: Pred, columns: ReadonlyMap<string, string>): { readonly text: string; readonly nul: boolean } {
  const r = new Renderer(columns);
  if (tree.type !== 'or') return { text: r.render(tree), nul: r.nul };
  let out = '';
  let first = true;
  for (const c of tree.conditions) {
    if (!first) out += ' OR ';
    first = false;
    out += isGroup(c) ? r.render(c, false) : `(${r.render(c)})`;
  }
  return { text: out, nul: r.nul };
}

/**
 * The SQL text of an atom, cached on the atom with the column it was written for, and of a
 * nested junction with the column map it was written with (the same map object: generate.ts
 * reuses the map of a repeated set of unmapped fields). NOTE (speed): paths share most of their
 * conditions (the same objects: the negations of earlier branches), and the conditions that read
 * no known field are owned by the compiled ruleset (prepare.ts), so the text of most conditions
 * is built once per ruleset and column map, not once per occurrence and request. A symbol key
 * like predicate.ts's caches: invisible to JSON and to the other emitters.
 */
interface SqlText {
  /** The column map of the last answer that read it (an atom: its column is then `column`). */
  readonly columns: ReadonlyMap<string, string>;
  /** An atom's column ('' for a junction, whose text is valid for `columns` only). */
  readonly column: string;
  readonly text: string;
  /** Whether `text` holds a NUL character. */
  readonly nul: boolean;
}
type WithSql = Pred & { [SQL_TEXT]?: SqlText };

/** The field an atom reads (the column its text starts with), or null for a constant. */
function atomField(p: Pred): string | null {
  if (p.type === 'not') return p.condition.field;
  return (p as { field?: string }).field ?? null;
}

/** Renders nodes: junctions as text built in one string, atoms from their cached text. */
class Renderer {
  /** Whether a piece written so far holds a NUL character. */
  nul = false;
  constructor(private readonly columns: ReadonlyMap<string, string>) {}

  render(p: Pred, nested = true): string {
    const cached = (p as WithSql)[SQL_TEXT];
    if (cached !== undefined && cached.columns === this.columns) {
      if (cached.nul) this.nul = true;
      return cached.text;
    }
    if (p.type === 'and' || p.type === 'or') {
      const sep = p.type === 'and' ? ' AND ' : ' OR ';
      const outer = this.nul;
      this.nul = false;
      let out = '(';
      let first = true;
      for (const c of p.conditions) {
        if (!first) out += sep;
        first = false;
        out += this.render(c);
      }
      out += ')';
      const nul = this.nul;
      this.nul = outer || nul;
      // A path's own conjunction (not nested) is written once per answer: not kept.
      if (nested && Object.isExtensible(p)) (p as WithSql)[SQL_TEXT] = { columns: this.columns, column: '', text: flat(out), nul };
      return out;
    }
    const field = atomField(p);
    if (field === null) return render(p, this.columns);
    const col = column(this.columns, field);
    if (cached !== undefined && cached.column === col) {
      if (Object.isExtensible(p)) (p as WithSql)[SQL_TEXT] = { columns: this.columns, column: col, text: cached.text, nul: cached.nul };
      if (cached.nul) this.nul = true;
      return cached.text;
    }
    const text = flat(render(p, this.columns));
    const nul = hasNul(text);
    if (nul) this.nul = true;
    // A frozen atom (none is today) simply goes uncached.
    if (Object.isExtensible(p)) (p as WithSql)[SQL_TEXT] = { columns: this.columns, column: col, text, nul };
    return text;
  }
}

/**
 * `s` stored flat. NOTE (speed): a text built by concatenation is a tree of pieces; reading it as a
 * number makes V8 flatten it in place once, so the many copies of an atom's text into the filter
 * read one flat string instead of walking the tree each time.
 */
function flat(s: string): string {
  void Number(s);
  return s;
}

/** True when `render` already writes `p` as one parenthesised group. */
function isGroup(p: Pred): boolean {
  return p.type === 'and' || p.type === 'or' || ((p.type === 'in' || p.type === 'not_in') && p.values.includes(null));
}

function column(columns: ReadonlyMap<string, string>, field: string): string {
  const c = columns.get(field);
  if (c === undefined) throw new Error(`internal: no column for field ${field}`);
  return c;
}

function render(p: Pred, columns: ReadonlyMap<string, string>): string {
  switch (p.type) {
    case 'always':
      return 'TRUE';
    case 'never':
      return 'FALSE';
    case 'and':
    case 'or':
      return new Renderer(columns).render(p);
    case 'eq':
    case 'ne':
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      return `${column(columns, p.field)} ${OPS[p.type]} ${sqlLiteral(p.value)}`;
    case 'not': {
      const c = p.condition;
      if (c.type === 'contains' || c.type === 'starts_with' || c.type === 'ends_with') {
        return `${column(columns, c.field)} NOT LIKE ${likePattern(c.type, c.value as string)} ESCAPE '!'`;
      }
      if (c.type === 'eq' || c.type === 'ne') throw new Error('internal: not of eq/ne');
      return `${column(columns, c.field)} ${NOT_OPS[c.type]} ${sqlLiteral(c.value)}`;
    }
    case 'in':
    case 'not_in':
      return setTest(p.type, column(columns, p.field), p.values);
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      return `${column(columns, p.field)} LIKE ${likePattern(p.type, p.value as string)} ESCAPE '!'`;
    case 'is_null':
      return `${column(columns, p.field)} IS NULL`;
    case 'not_null':
      return `${column(columns, p.field)} IS NOT NULL`;
    case 'truthy':
      return `${column(columns, p.field)} IS TRUE`;
    case 'falsy':
      return `${column(columns, p.field)} IS NOT TRUE`;
    case 'unsupported':
      throw new Error(`internal: unsupported condition reached the SQL emitter: ${p.reason}`);
  }
}

function setTest(type: 'in' | 'not_in', col: string, values: readonly JsonValue[]): string {
  const literals: string[] = [];
  let hasNull = false;
  for (const v of values) {
    if (v === null) hasNull = true;
    else literals.push(sqlLiteral(v));
  }
  const list = `(${literals.join(', ')})`;
  if (type === 'in') {
    const test = `${col} IN ${list}`;
    // NOTE: `x IN (1, NULL)` is NULL, never TRUE, for a NULL x; the engine's `null in [1, null]` is true.
    return hasNull ? `(${test} OR ${col} IS NULL)` : test;
  }
  const test = `${col} NOT IN ${list}`;
  return hasNull ? `(${test} AND ${col} IS NOT NULL)` : test;
}
