/**
 * The path planner (SPEC.md filter rules 2-5): the partial walk. A depth-first walk from the
 * entry step that collects, for every way to reach a terminal whose code is a target, the
 * conditions that lead there. It follows the step meanings of ruleset/steps.ts (one exhaustive
 * case per step kind):
 *
 * - Decision: an always-false branch is skipped and its negation accumulates; an always-true one
 *   is taken and ends the step; an undecided one is taken with its condition and its negation
 *   flows to later branches and the default path. A condition known to fail ends the path (the
 *   engine fails there). No true branch and no `default_next` ends the path (an engine error).
 * - Action: passed through; variables are not tracked (condition.ts). An action whose value is
 *   known to fail ends the path.
 * - Terminal: a target code ends the path and collects it (unless an output expression is known
 *   to fail, which is an engine error).
 * - Steps from which no target terminal can be reached are not entered.
 * - NOTE (cycles): a step already on the current path is not entered again. Without variables a
 *   step's outcome depends only on the input, so an engine run that comes back to a step loops
 *   until its step limit and yields no result: dropping the path is exact. With variables, every
 *   path through a cycle is contained in the one that skips the cycle (variable conditions count
 *   as "either way"), so dropping it keeps the filter a superset.
 * - Limits: more than `MAX_DEPTH` steps on a path that could still reach a target, more than
 *   `max_paths` paths, or more than `MAX_VISITS` visited steps stops the walk with `truncated`
 *   (the caller then answers always_matches, to avoid false negatives).
 */
import { assertNever, stepExpressions, stepsReaching, type BranchInfo, type StepInfo } from '../ruleset/index.js';
import { toCondition, type Condition } from './condition.js';
import { ignoresKnownInput, partialEval, type KnownInput } from './partial-eval.js';
import type { PreparedRuleset } from './prepare.js';
import { conjoin, type Path } from './simplify.js';

/** Hard maximum of steps on one path (SPEC.md "Limits": filter traversal depth). */
export const MAX_DEPTH = 50;

/** Work limit: steps visited in one walk before it stops as truncated. */
export const MAX_VISITS = 100_000;

/** The collected paths, and whether a limit stopped the walk. */
export interface PlanOutcome {
  readonly paths: readonly Path[];
  readonly truncated: boolean;
}

/** Walks the ruleset and collects the paths to `targets` (`maxPaths` 0 = unlimited). */
export function planPaths(prepared: PreparedRuleset, known: KnownInput, targets: ReadonlySet<string>, maxPaths: number): PlanOutcome {
  const steps = prepared.compiled.steps;
  const shared = prepared.sharedConditions;
  const live = stepsReaching(prepared.compiled.graph, targets);
  const conditions = new Map<BranchInfo, Condition>();
  const runnable = new Map<string, boolean>();
  const onPath = new Set<string>();
  const paths: Path[] = [];
  let truncated = false;
  let visits = 0;

  const condition = (b: BranchInfo): Condition => {
    let c = conditions.get(b);
    if (c !== undefined) return c;
    // Shared only while this request knows none of the condition's fields.
    const isShared = ignoresKnownInput(b.ast, known);
    c = isShared ? shared.get(b) : undefined;
    if (c === undefined) {
      c = toCondition(partialEval(b.ast, known));
      if (isShared) shared.set(b, c);
    }
    conditions.set(b, c);
    return c;
  };

  /** False when an expression that runs whenever the step is entered is known to fail. */
  const canRun = (step: StepInfo): boolean => {
    let ok = runnable.get(step.id);
    if (ok === undefined) {
      ok = stepExpressions(step).every((e) => e.role === 'condition' || partialEval(e.ast, known).kind !== 'error');
      runnable.set(step.id, ok);
    }
    return ok;
  };

  const visit = (id: string, path: Path, depth: number): void => {
    if (truncated || !live.has(id) || onPath.has(id)) return;
    if (depth > MAX_DEPTH || ++visits > MAX_VISITS) {
      truncated = true;
      return;
    }
    const step = steps.get(id)!;
    onPath.add(id);
    switch (step.type) {
      case 'terminal':
        if (targets.has(step.code) && canRun(step)) {
          if (maxPaths > 0 && paths.length >= maxPaths) truncated = true;
          else paths.push(path);
        }
        break;
      case 'action':
        if (canRun(step)) visit(step.nextStep, path, depth + 1);
        break;
      case 'decision': {
        let rest: Path | null = path;
        for (const b of step.branches) {
          const c = condition(b);
          const taken = live.has(b.nextStep) ? conjoin(rest, c.whenTrue) : null;
          if (taken !== null) visit(b.nextStep, taken, depth + 1);
          rest = conjoin(rest, c.whenFalse);
          if (rest === null || truncated) break;
        }
        if (rest !== null && step.defaultNext !== null) visit(step.defaultNext, rest, depth + 1);
        break;
      }
      default:
        assertNever(step);
    }
    onPath.delete(id);
  };

  visit(prepared.compiled.entryStep, [], 1);
  return { paths, truncated };
}
