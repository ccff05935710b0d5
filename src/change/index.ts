/**
 * Judging a change before it is live (EXTENSIONS.md 4): the behavioural diff of two compiled
 * versions of a ruleset. Pure: no `node:*` imports.
 */
export {
  DEFAULT_DIFF_MAX_PAIRS,
  DEFAULT_DIFF_MAX_PATHS,
  DEFAULT_DIFF_MAX_REGIONS,
  behaviouralDiff,
  type BehaviourRegion,
  type BehaviouralDiff,
  type BehaviouralDiffOptions,
} from './behavior.js';
