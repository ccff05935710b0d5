/**
 * Judging a change before it is live (EXTENSIONS.md 4): the structural diff of two documents,
 * the behavioural diff of two compiled versions, and the impact of a candidate over inputs.
 * Pure: no `node:*`, no logger, no clock of its own.
 */
export { structuralDiff } from './structural-diff.js';
export { jsonEqual } from '../ruleset/json.js';
export { impact, ImpactStopped, MAX_IMPACT_EXAMPLES, ERROR_OUTCOME_PREFIX, type ImpactLimits } from './impact.js';
export type { Behavior, BehaviorFn, ChangeOp, ImpactExample, ImpactReport, ImpactTransition, StructuralChange } from './types.js';
export {
  DEFAULT_DIFF_MAX_PAIRS,
  DEFAULT_DIFF_MAX_PATHS,
  DEFAULT_DIFF_MAX_REGIONS,
  behaviouralDiff,
  type BehaviourRegion,
  type BehaviouralDiff,
  type BehaviouralDiffOptions,
} from './behavior.js';
