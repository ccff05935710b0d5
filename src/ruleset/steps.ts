/**
 * What each step kind means, stated once (SPEC.md "States and transitions"): which expressions
 * a step evaluates, in what order, and where it can go next.
 *
 * - decision: its branch conditions in order; the first true one goes to its `next_step`; none
 *   true goes to `default_next`, or fails with NO_MATCHING_BRANCH when there is none.
 * - action: its `set_variable` values in order (a `log` action evaluates nothing), then
 *   `next_step`.
 * - terminal: its output expressions in key order; the execution ends there.
 * - call (EXTENSIONS.md 3): its `input` expressions in key order (none: the caller's whole
 *   input), then the callee's current version runs on that input (its own variables; the
 *   caller's deadline, step limit and work budget), its `{code, message, output}` is stored as
 *   `$result`, then `next_step`. A callee that fails fails the call; a missing callee or a call
 *   depth over 8 is CALL_FAILED.
 * - table (EXTENSIONS.md 3, table.ts): not a kind of its own here. A routing table resolves to
 *   a decision (branch i = row i, its cells joined with &&) and a `set` table to an action (one
 *   set_variable per variable: the if-chain of its rows for `first`, an untracked value for
 *   `collect`), so every walker reads it as that kind.
 *
 * Built on it: the plan builder (compile.ts), the untraced and traced walkers (execute.ts, on
 * the plan's integer kinds of `PLAN_KIND`), the graph facts (graph.ts) and the filter's partial
 * walk (filter/planner.ts). Each of them switches on the kind with an exhaustive check (a
 * `never` default, or a narrowed kind on the last `else` of the hot loop), so a new step kind is
 * a change here plus one case per walker, each asked for by the compiler.
 */
import type { Node } from '../expr/ast.js';
import { ACTION, CALL, DECISION, TERMINAL, type NodeKind } from './plan.js';
import type { StepInfo } from './step-info.js';

/** A step kind: the `type` of a step. */
export type StepKind = StepInfo['type'];

/**
 * The plan node kind of each step kind's head node (the small integer the walkers compare).
 * NOTE: `satisfies Record<StepKind, ...>` makes a new step kind without a plan kind a compile error.
 */
export const PLAN_KIND = Object.freeze({ decision: DECISION, action: ACTION, terminal: TERMINAL, call: CALL } as const satisfies Record<StepKind, NodeKind>);

/** Every step kind, in the order the docs list them. */
export const STEP_KINDS: readonly StepKind[] = Object.freeze(Object.keys(PLAN_KIND) as StepKind[]);

/** One expression a step evaluates. */
export type StepExpression =
  /** A decision branch's condition: evaluated in branch order until one is true. */
  | { readonly role: 'condition'; readonly index: number; readonly ast: Node; readonly next: string }
  /** A `set_variable` value of an action step (`index` is the action's index). */
  | { readonly role: 'value'; readonly index: number; readonly name: string; readonly ast: Node; readonly untracked?: true }
  /** An output expression of a terminal step. */
  | { readonly role: 'output'; readonly key: string; readonly ast: Node }
  /** A key of a call step's `input` (evaluated in key order before the callee runs). */
  | { readonly role: 'argument'; readonly key: string; readonly ast: Node };

/**
 * The expressions `step` evaluates, in evaluation order. Conditions stop at the first true one;
 * every other expression runs whenever the step is entered, so a known failure of one of them
 * fails the step.
 */
export function stepExpressions(step: StepInfo): StepExpression[] {
  switch (step.type) {
    case 'decision':
      return step.branches.map((b, index) => ({ role: 'condition', index, ast: b.ast, next: b.nextStep }));
    case 'action': {
      const out: StepExpression[] = [];
      step.actions.forEach((a, index) => {
        if (a.kind === 'set_variable')
          out.push(a.untracked ? { role: 'value', index, name: a.name, ast: a.ast, untracked: true } : { role: 'value', index, name: a.name, ast: a.ast });
      });
      return out;
    }
    case 'terminal':
      return step.output.map((o) => ({ role: 'output', key: o.key, ast: o.ast }));
    case 'call':
      return (step.input ?? []).map((a) => ({ role: 'argument', key: a.key, ast: a.ast }));
    default:
      return assertNever(step);
  }
}

/**
 * The steps `step` can go to next, in evaluation order: a decision's branch targets then its
 * `default_next`; an action's `next_step`; none for a terminal. Duplicates are kept.
 */
export function stepSuccessors(step: StepInfo): string[] {
  switch (step.type) {
    case 'decision':
      return step.defaultNext === null ? step.branches.map((b) => b.nextStep) : [...step.branches.map((b) => b.nextStep), step.defaultNext];
    case 'action':
    case 'call':
      return [step.nextStep];
    case 'terminal':
      return [];
    default:
      return assertNever(step);
  }
}

/** The exhaustiveness check of a `switch` on a step kind: unreachable while every kind has a case. */
export function assertNever(x: never): never {
  throw new Error(`internal: unexpected step ${JSON.stringify(x)}`);
}
