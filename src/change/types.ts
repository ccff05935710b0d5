/**
 * The answers of the change tools (EXTENSIONS.md 4 "Judging a change before it is live"): the
 * structural diff, the seam of the behavioural diff, and impact over inputs. Types only.
 */
import type { JsonValue } from '../expr/ast.js';
import type { DataSnapshot } from '../expr/index.js';
import type { CompiledRuleset } from '../ruleset/compile.js';

/** What happened at one path: present only in `b` (`add`), only in `a` (`remove`), or different (`change`). */
export type ChangeOp = 'add' | 'remove' | 'change';

/**
 * One structural change. `path` is written as validation problems write it
 * (`steps.vip.branches[0].condition`); `from` is the value in the old document (absent for
 * `add`), `to` the value in the new one (absent for `remove`).
 */
export interface StructuralChange {
  readonly op: ChangeOp;
  readonly path: string;
  readonly from?: JsonValue;
  readonly to?: JsonValue;
}

/**
 * The behavioural diff of two compiled versions (EXTENSIONS.md 4 "Behavioural diff"):
 * `{equivalent, exact, regions, truncated}`. Built elsewhere (src/change/behavior.ts); this
 * folder only names its shape for the seam below.
 */
export interface Behavior {
  readonly equivalent: boolean;
  readonly exact: boolean;
  readonly regions: readonly unknown[];
  readonly truncated: boolean;
}

/**
 * The seam of the behavioural diff: given, the diff answer's `behavior` is its result; absent,
 * `behavior` is null (the structural diff still answers).
 */
export type BehaviorFn = (
  from: CompiledRuleset,
  to: CompiledRuleset,
  options: { readonly data?: DataSnapshot | null; readonly calls?: (name: string) => CompiledRuleset | undefined },
) => Behavior;

/** One transition counted by `impact`: how many inputs went from outcome `from` to outcome `to`. */
export interface ImpactTransition {
  readonly from: string;
  readonly to: string;
  count: number;
}

/** One example input whose outcome changed. */
export interface ImpactExample {
  readonly input: unknown;
  readonly from: string;
  readonly to: string;
}

/**
 * Impact of a candidate over inputs. An outcome is the result code, or `error:<REASON>` when
 * the execution failed (`error:INPUT_INVALID`, `error:NO_MATCHING_BRANCH`, ...).
 */
export interface ImpactReport {
  /** Inputs run (each on both versions). */
  total: number;
  /** Inputs whose outcome differs between the two versions. */
  changed: number;
  /** Inputs on which at least one version failed (an `error:` outcome on either side). */
  errors: number;
  /** Every pair of different outcomes with its count (the counts add up to `changed`), most frequent first. */
  transitions: ImpactTransition[];
  /** Up to 20 changed inputs: the first input of each transition first, then in input order. */
  examples: ImpactExample[];
}
