/**
 * TYPE_MISMATCH (EXTENSIONS.md 2 "Analysis"): read from the syntax trees alone.
 * - one field compared (`== != < <= > >=`, `in [..]`) with literals of different JSON types
 *   across the ruleset (null is left out: comparing with null is a null check);
 * - arithmetic on a string literal (`-`, `*`, `/`, `%`, unary `-`, and `+` of a string and a
 *   number literal): the engine fails on it (DECISIONS.md 2);
 * - ordering against a boolean literal: always false (DECISIONS.md 2).
 */
import type { Node } from '../expr/ast.js';
import { renderPath } from '../expr/index.js';
import type { CompiledRuleset } from '../ruleset/index.js';
import { joinKey } from '../ruleset/json.js';
import { branchLocation, stepExpressions, valueLocation } from '../ruleset/index.js';
import type { AnalysisWarning } from './types.js';

const COMPARE = new Set(['==', '!=', '<', '<=', '>', '>=']);
const ORDER = new Set(['<', '<=', '>', '>=']);
const ARITHMETIC = new Set(['-', '*', '/', '%']);

interface Use {
  readonly type: string;
  readonly at: string;
}

type LiteralType = 'number' | 'string' | 'boolean';

function literalType(n: Node): LiteralType | null {
  if (n.kind !== 'literal' || n.value === null) return null;
  return typeof n.value as LiteralType;
}

function isStringLiteral(n: Node): boolean {
  return n.kind === 'literal' && typeof n.value === 'string';
}

/** Where each expression of a step lives, as a validation-problem path. */
export function expressionsOf(compiled: CompiledRuleset): Array<{ at: string; ast: Node }> {
  const out: Array<{ at: string; ast: Node }> = [];
  for (const step of compiled.steps.values()) {
    const base = joinKey('steps', step.id);
    for (const e of stepExpressions(step)) {
      // Decision tables point at their rows (ruleset/table.ts).
      if (e.role === 'condition') out.push({ at: branchLocation(step, base, e.index, true), ast: e.ast });
      else if (e.role === 'value') out.push({ at: valueLocation(step, base, e.index), ast: e.ast });
      else if (e.role === 'argument') out.push({ at: joinKey(`${base}.input`, e.key), ast: e.ast });
      else out.push({ at: joinKey(`${base}.output`, e.key), ast: e.ast });
    }
  }
  return out;
}

/** The TYPE_MISMATCH warnings of a ruleset, in document order. */
export function typeMismatches(compiled: CompiledRuleset): AnalysisWarning[] {
  const uses = new Map<string, Use[]>();
  const out: AnalysisWarning[] = [];
  const seen = new Set<string>();
  const warn = (at: string, message: string): void => {
    const k = `${at}\u0000${message}`;
    if (seen.has(k)) return;
    seen.add(k);
    out.push({ code: 'TYPE_MISMATCH', path: at, message });
  };
  const use = (field: Node, lit: Node, at: string): void => {
    const t = literalType(lit);
    if (field.kind !== 'path' || t === null) return;
    const key = renderPath(field);
    const list = uses.get(key);
    if (list === undefined) uses.set(key, [{ type: t, at }]);
    else list.push({ type: t, at });
  };
  const walk = (n: Node, at: string): void => {
    switch (n.kind) {
      case 'literal':
      case 'path':
        return;
      case 'array':
        for (const i of n.items) walk(i, at);
        return;
      case 'unary':
        if (n.op === '-' && isStringLiteral(n.operand)) warn(at, `arithmetic on the string literal ${show(n.operand)}: unary '-' fails on a string`);
        walk(n.operand, at);
        return;
      case 'binary': {
        const { op, left, right } = n;
        if (COMPARE.has(op)) {
          use(left, right, at);
          use(right, left, at);
          if (ORDER.has(op)) {
            const b = literalType(left) === 'boolean' ? left : literalType(right) === 'boolean' ? right : null;
            if (b !== null) warn(at, `ordering with the boolean ${show(b)} ('${op}') is always false: only two numbers or two strings are ordered`);
          }
        } else if (op === 'in' || op === 'not in') {
          if (right.kind === 'array') for (const item of right.items) use(left, item, at);
        } else if (ARITHMETIC.has(op) || op === '+') {
          const str = isStringLiteral(left) ? left : isStringLiteral(right) ? right : null;
          const other = str === left ? right : left;
          if (str !== null && (op !== '+' || literalType(other) === 'number' || literalType(other) === 'boolean')) {
            warn(at, `arithmetic on the string literal ${show(str)}: '${op}' fails on a string`);
          }
        }
        walk(left, at);
        walk(right, at);
        return;
      }
      case 'if':
        walk(n.cond, at);
        walk(n.then, at);
        walk(n.else, at);
        return;
      case 'call':
        for (const a of n.args) walk(a, at);
        return;
    }
  };
  for (const { at, ast } of expressionsOf(compiled)) walk(ast, at);
  for (const [field, list] of uses) {
    const first = list[0]!;
    const other = list.find((u) => u.type !== first.type);
    if (other === undefined) continue;
    warn(
      other.at,
      `field '${field}' is compared with a ${other.type} here and with a ${first.type} at ${first.at} (equality and ordering never hold across types: is one literal quoted by mistake?)`,
    );
  }
  return out;
}

function show(n: Node): string {
  return n.kind === 'literal' ? JSON.stringify(n.value) : n.kind;
}
