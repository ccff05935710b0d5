/**
 * One-shot evaluation for `/eval` and library users: parse, compile, run once.
 * Rulesets compile their expressions once instead (compile.ts).
 */
import type { JsonValue } from './ast.js';
import { compile, type CompileOptions } from './compile.js';
import { beginNow } from './dates.js';
import { parse } from './parser.js';
import { render } from './render.js';

/** Result of `evaluate`: the value and the rendered syntax tree (DECISIONS.md 2 `/eval` `parsed`). */
export interface EvaluateResult {
  readonly result: JsonValue;
  readonly parsed: string;
}

/**
 * Evaluates `expression` against `context` as the input, with no variables set. A missing
 * (`undefined`) context means `{}`. Throws `ExprSyntaxError` for a bad expression and
 * `ExprRuntimeError` when evaluation fails.
 */
export function evaluate(expression: string, context: unknown, options?: CompileOptions): EvaluateResult {
  const ast = parse(expression);
  const parsed = render(ast);
  const run = compile(ast, options);
  beginNow(); // one evaluation is one execution: now() reads the clock afresh (dates.ts)
  return { result: run(context === undefined ? {} : context, null), parsed };
}
