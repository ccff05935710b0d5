/**
 * Decision tables (EXTENSIONS.md 3 "Decision tables"): a `table` step's cells become ordinary
 * expressions, so a table compiles to exactly what the same logic written as decision branches
 * compiles to (one closure per row, no per-row interpretation at run time), and every tool that
 * reads decisions (the filter, coverage, the graph facts) reads a table as the decision it is.
 *
 * A cell, for the column whose value is the input expression `in`:
 * - `-` or empty (after trimming): any value (no test);
 * - an operator and its operand (`> 5`, `!= null`, `in [..]`, `not in [..]`): `(in) > 5`;
 * - a boolean expression in which `?` (outside string literals) stands for the column's value
 *   (`? > 5 && ? < 10`): `(in) > 5 && (in) < 10`;
 * - anything else is a literal compared for equality: `"US"` is `(in) == ("US")`.
 * A row's condition is its cells' expressions joined with `&&` (`true` when every cell is any).
 */
import type { JsonValue, Node } from '../expr/ast.js';
import type { StepInfo } from './step-info.js';
import { truthy, type CompiledExpr, type Vars } from '../expr/index.js';

/** Operators a cell may start with (longest first, so `>=` wins over `>`). */
const OPERATOR_RE = /^(?:==|!=|>=|<=|>|<|not\s+in\b|in\b)/;

/** The expression text of one cell, or null when the cell matches any value. */
export function cellExpression(cell: string, input: string): string | null {
  const text = cell.trim();
  if (text === '' || text === '-') return null;
  const column = `(${input})`;
  const substituted = replacePlaceholders(text, column);
  if (substituted !== null) return substituted;
  if (OPERATOR_RE.test(text)) return `${column} ${text}`;
  return `${column} == (${text})`;
}

/** The condition text of a row (its cells joined with `&&`; `true` when none tests anything). */
export function rowCondition(cells: readonly string[], inputs: readonly string[]): string {
  const parts: string[] = [];
  cells.forEach((cell, j) => {
    const e = cellExpression(cell, inputs[j]!);
    if (e !== null) parts.push(`(${e})`);
  });
  return parts.length === 0 ? 'true' : parts.join(' && ');
}

/**
 * `text` with every `?` outside string literals replaced by `column`; null when it has none.
 * String literals are quoted with `"` or `'` and use `\` escapes (expr/lexer.ts).
 */
function replacePlaceholders(text: string, column: string): string | null {
  let out = '';
  let found = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '?') {
      out += column;
      found = true;
      i++;
    } else {
      out += ch;
      i++;
    }
  }
  return found ? out : null;
}

/** The variables a node reads (`$name` roots), collected into `out`. */
export function variablesRead(node: unknown, out: Set<string>): Set<string> {
  if (typeof node !== 'object' || node === null) return out;
  if (Array.isArray(node)) {
    for (const n of node) variablesRead(n, out);
    return out;
  }
  const n = node as { kind?: unknown; scope?: unknown; segments?: unknown };
  if (n.kind === 'path' && n.scope === 'var' && Array.isArray(n.segments)) out.add(String(n.segments[0]));
  for (const v of Object.values(node)) if (typeof v === 'object') variablesRead(v, out);
  return out;
}

/**
 * The value of variable `name` of a `first` table as one syntax tree: the value of the first row
 * whose condition holds; null when that row does not set it or no row holds. Built as a tree (not
 * text) so a long table is not held to the expression length limit.
 * NOTE: exact because a table's cells and values may not read the variables it sets (validate.ts).
 */
export function firstValueTree(conditions: readonly Node[], values: ReadonlyArray<ReadonlyMap<string, Node>>, name: string): Node {
  const none: Node = { kind: 'literal', value: null, pos: 0 };
  let tree: Node = none;
  for (let i = conditions.length - 1; i >= 0; i--) {
    tree = { kind: 'if', cond: conditions[i]!, then: values[i]!.get(name) ?? none, else: tree, pos: 0 };
  }
  return tree;
}

/** The row index a `set` table's closure is evaluating (for the error message when it fails). */
export const tableProgress = { row: -1 };

/**
 * The run-time closure of a `first` table: the rows' conditions in order; the first that holds
 * stores its values (in key order) and null for every other variable the table sets; none holding
 * stores null for all. Returns the matched row's index, or null.
 */
export function firstTableFn(
  conditions: readonly CompiledExpr[],
  values: ReadonlyArray<ReadonlyArray<readonly [string, CompiledExpr]>>,
  names: readonly string[],
): CompiledExpr {
  return (input, vars) => {
    const store = vars as Vars;
    for (let i = 0; i < conditions.length; i++) {
      tableProgress.row = i;
      const v = conditions[i]!(input, vars);
      if (v === true || (v !== false && truthy(v))) {
        for (let k = 0; k < names.length; k++) store[names[k]!] = null;
        const row = values[i]!;
        for (let k = 0; k < row.length; k++) store[row[k]![0]] = row[k]![1](input, vars);
        return i;
      }
    }
    for (let k = 0; k < names.length; k++) store[names[k]!] = null;
    return null;
  };
}

/**
 * Where tools point at a branch of a resolved decision (`at` is the step's location): a table's
 * row i is `rows[i]`, a decision's branch `branches[i]`. `condition` asks for the expression.
 */
export function branchLocation(step: StepInfo, at: string, i: number, condition = false): string {
  if (isTable(step)) return condition ? `${at}.rows[${i}].when` : `${at}.rows[${i}]`;
  return condition ? `${at}.branches[${i}].condition` : `${at}.branches[${i}]`;
}

/** Where tools point at the value of set_variable `index` of a resolved action (a set table: its rows). */
export function valueLocation(step: StepInfo, at: string, index: number): string {
  return isTable(step) ? `${at}.rows` : `${at}.actions[${index}].value`;
}

/** True when a resolved step was written as a decision table. */
export function isTable(step: StepInfo): boolean {
  return (step.type === 'decision' || step.type === 'action') && step.table !== undefined;
}

/**
 * The run-time closure of a `collect` table: every row's condition in order; each row that holds
 * appends its values (in key order) to its variables' arrays. Every variable the table sets is
 * stored as an array (empty when no holding row sets it). Returns the holding rows' indexes.
 */
export function collectTableFn(
  conditions: readonly CompiledExpr[],
  values: ReadonlyArray<ReadonlyArray<readonly [string, CompiledExpr]>>,
  names: readonly string[],
): CompiledExpr {
  return (input, vars) => {
    const acc: Record<string, JsonValue[]> = Object.create(null) as Record<string, JsonValue[]>;
    for (let k = 0; k < names.length; k++) acc[names[k]!] = [];
    const matched: number[] = [];
    for (let i = 0; i < conditions.length; i++) {
      tableProgress.row = i;
      const v = conditions[i]!(input, vars);
      if (v === true || (v !== false && truthy(v))) {
        matched.push(i);
        const row = values[i]!;
        for (let k = 0; k < row.length; k++) acc[row[k]![0]]!.push(row[k]![1](input, vars));
      }
    }
    const store = vars as Vars;
    for (let k = 0; k < names.length; k++) store[names[k]!] = acc[names[k]!]!;
    return matched;
  };
}

/**
 * What tools read for variable `name` of a `collect` table: `[if row0 then v0 else null, ...]`
 * over the rows that set it. It reads and fails exactly as the table does (each value only where
 * its row holds) but is not the value (the table drops the rows that do not hold): the variable
 * is marked untracked (step-info.ts).
 */
export function collectReadsTree(conditions: readonly Node[], values: ReadonlyArray<ReadonlyMap<string, Node>>, name: string): Node {
  const none: Node = { kind: 'literal', value: null, pos: 0 };
  const items: Node[] = [];
  conditions.forEach((cond, i) => {
    const v = values[i]!.get(name);
    if (v !== undefined) items.push({ kind: 'if', cond, then: v, else: none, pos: 0 });
  });
  return { kind: 'array', items, pos: 0 };
}
