/**
 * Parses and compiles one expression of a ruleset, turning a syntax error into a problem
 * message instead of a throw (validation reports every problem at once).
 */
import type { Node } from '../expr/ast.js';
import { compile, parse, type CompiledExpr } from '../expr/index.js';
import type { FieldMissing } from './model.js';

/** An expression of a ruleset, parsed and compiled once. */
export interface ParsedExpression {
  /** The expression text as written in the document. */
  readonly source: string;
  /** Its syntax tree. */
  readonly ast: Node;
  /** Its compiled evaluator (with the ruleset's `field_missing`). */
  readonly fn: CompiledExpr;
}

/** Outcome of `parseExpression`: the expression, or the error message (with its position). */
export type ParseOutcome = { readonly ok: true; readonly expr: ParsedExpression } | { readonly ok: false; readonly message: string };

/** Parses and compiles `source`; a syntax or static-check error becomes `{ok: false, message}`. */
export function parseExpression(source: string, fieldMissing: FieldMissing): ParseOutcome {
  try {
    const ast = parse(source);
    const fn = compile(ast, { fieldMissing });
    return { ok: true, expr: { source, ast, fn } };
  } catch (err) {
    // ExprSyntaxError's message is `${detail} at ${position}`, exactly what a problem shows.
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
