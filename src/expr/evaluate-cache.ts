/**
 * `evaluate` with a bounded cache of compiled expressions: `/eval` callers tend to send
 * the same expressions again and again, and parsing plus compiling costs far more than running
 * the closure. Same results and errors as `evaluate` (a bad expression is not cached: it is
 * parsed again and throws again). Pure: no clock, no I/O.
 */
import { compile, type CompiledExpr } from './compile.js';
import type { EvaluateResult } from './evaluate.js';
import { parse } from './parser.js';
import { render } from './render.js';

/** Default number of expressions kept (each at most MAX_EXPRESSION_LENGTH characters). */
export const DEFAULT_EVAL_CACHE_SIZE = 1024;

interface Entry {
  readonly run: CompiledExpr;
  readonly parsed: string;
}

/**
 * Returns an `evaluate(expression, context)` that keeps up to `maxEntries` compiled expressions.
 * NOTE: eviction is first-in first-out (no reordering on a hit, so a hit costs one Map lookup).
 */
export function cachedEvaluator(maxEntries: number = DEFAULT_EVAL_CACHE_SIZE): (expression: string, context: unknown) => EvaluateResult {
  const cache = new Map<string, Entry>();
  return (expression, context) => {
    let entry = cache.get(expression);
    if (entry === undefined) {
      const ast = parse(expression);
      entry = { run: compile(ast), parsed: render(ast) };
      if (maxEntries > 0) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
        cache.set(expression, entry);
      }
    }
    return { result: entry.run(context === undefined ? {} : context, null), parsed: entry.parsed };
  };
}
