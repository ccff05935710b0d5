/**
 * Judging a change before it is live (EXTENSIONS.md 4): the structural diff of two documents
 * and the impact of a candidate over inputs. Pure: no `node:*`, no logger, no clock of its own.
 * The behavioural diff plugs in through `BehaviorFn` (./types.ts).
 */
export { structuralDiff, jsonEqual } from './structural-diff.js';
export { impact, ImpactStopped, MAX_IMPACT_EXAMPLES, ERROR_OUTCOME_PREFIX, type ImpactLimits } from './impact.js';
export type { Behavior, BehaviorFn, ChangeOp, ImpactExample, ImpactReport, ImpactTransition, StructuralChange } from './types.js';
