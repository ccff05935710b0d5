/**
 * The expression language (DECISIONS.md 2, docs/expressions.md): parse, compile to closures,
 * fold constants, render, evaluate, and the value semantics shared with the filter.
 */
export type * from './ast.js';
export * from './errors.js';
export { parse } from './parser.js';
export { compile, type CompiledExpr, type CompileOptions, type Vars } from './compile.js';
export { fold } from './fold.js';
export { render, renderPath } from './render.js';
export { evaluate, type EvaluateResult } from './evaluate.js';
export { cachedEvaluator, DEFAULT_EVAL_CACHE_SIZE } from './evaluate-cache.js';
export { FUNCTIONS, callFunction, type FunctionSpec } from './functions.js';
export { applyBinary, applyUnary, compareStrings, compareValues, jsonEquals, readPath, truthy, typeName } from './semantics.js';
export { MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH } from './limits.js';
export {
  armBudget,
  disarmBudget,
  meter,
  DEFAULT_BUDGET,
  DEFAULT_MAX_EVAL_OPS,
  DEFAULT_MAX_VALUE_BYTES,
  MAX_ARRAY_ELEMENTS,
  type BudgetLimits,
} from './budget.js';
export { beginNow, callsNow, canonicalDateText, setRequestNow } from './dates.js';
export { dataState, datasetNames, readDataset, readsData, setDataSnapshot, type DataSnapshot } from './data-ref.js';
