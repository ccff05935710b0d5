/**
 * Rulesets: document model, validation, compilation and execution. Pure (no `node:*`, no
 * logger, no clock): the clock, the trace switch and the log sink are execution options.
 */
export * from './model.js';
export * from './result.js';
export { validateRuleset } from './validate.js';
export {
  compileRuleset,
  type ActionInfo,
  type ActionStepInfo,
  type ArgumentInfo,
  type BranchInfo,
  type CallInfo,
  type CompiledRuleset,
  type DecisionInfo,
  type OutputInfo,
  type StepInfo,
  type TerminalInfo,
} from './compile.js';
export { buildGraph, stepsReaching, type RulesetGraph } from './graph.js';
export { PLAN_KIND, STEP_KINDS, assertNever, stepExpressions, stepSuccessors, type StepExpression, type StepKind } from './steps.js';
export { DerivedSlot, DerivedValues } from './derived.js';
export { MASKED, checkMask, maskCopy, parseMaskPath, parseMaskPaths, type MaskPath, type MaskSegment } from './mask.js';
export { branchLocation, isTable, valueLocation } from './table.js';
export { MAX_CALL_DEPTH, execute, type ExecuteOptions, type ExecutionStats, type LogSink } from './execute.js';
export type { LogLevel } from './plan.js';
export { InputSchema, type InputProblem } from './input-schema.js';
export { inputSchemaAnswer, inferInputSchema, type InputSchemaAnswer } from './schema-infer.js';
