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

/**
 * Compiled evaluators by expression text and `field_missing` mode, shared between rulesets.
 * A compiled expression depends on nothing else (datasets, variables and now() are read when it
 * runs) and keeps no state of one execution, so rulesets that write the same condition (many
 * rulesets made from one template) run one evaluator. NOTE (speed, bench/NOTES.md "Many
 * rulesets"): traffic spread over such rulesets then reads one closure that stays in the CPU
 * caches instead of one each, and a start compiles each text once. Bounded: texts up to
 * `SHARED_TEXT_MAX` characters, `SHARED_MAX` entries; past that, expressions compile as before.
 */
const shared = new Map<string, CompiledExpr>();
const SHARED_MAX = 50_000;
const SHARED_TEXT_MAX = 1024;

/**
 * Compiled parts of expressions (path reads, operands of `&&` / `||`) by mode and rendered text
 * (`compile`'s `share` option; its keys differ from those of whole expressions), shared in the
 * same map under the same bounds.
 */
function share(key: string, make: () => CompiledExpr): CompiledExpr {
  if (key.length > SHARED_TEXT_MAX + 16) return make();
  let fn = shared.get(key);
  if (fn === undefined) {
    fn = make();
    if (shared.size < SHARED_MAX) shared.set(key, fn);
  }
  return fn;
}

/** Parses and compiles `source`; a syntax or static-check error becomes `{ok: false, message}`. */
export function parseExpression(source: string, fieldMissing: FieldMissing): ParseOutcome {
  try {
    const ast = parse(source);
    const key = source.length <= SHARED_TEXT_MAX ? `${fieldMissing}\u0000${source}` : null;
    let fn = key === null ? undefined : shared.get(key);
    if (fn === undefined) {
      fn = compile(ast, { fieldMissing, share });
      if (key !== null && shared.size < SHARED_MAX) shared.set(key, fn);
    }
    return { ok: true, expr: { source, ast, fn } };
  } catch (err) {
    // ExprSyntaxError's message is `${detail} at ${position}`, exactly what a problem shows.
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
