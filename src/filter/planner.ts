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
 * - Action: passed through; variables are not tracked (condition.ts). The rows on which an
 *   action value fails leave the path (its guard, guard.ts, is added; a known failure ends it).
 * - Terminal: a target code ends the path and collects it with the guards of its output
 *   expressions (a failing output is an engine error: EXTENSIONS.md 6 "Filters and failures").
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
import { toBranch, toCondition, type Branch } from './condition.js';
import { SAFE, both, guardOf, type Guard } from './guard.js';
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
  /** False when a collected path went through a documented superset fallback (a variable condition, a guard no condition writes). */
  readonly exact: boolean;
}

/** Walks the ruleset and collects the paths to `targets` (`maxPaths` 0 = unlimited). */
export function planPaths(prepared: PreparedRuleset, known: KnownInput, targets: ReadonlySet<string>, maxPaths: number): PlanOutcome {
  const steps = prepared.compiled.steps;
  const shared = prepared.sharedConditions;
  const live = stepsReaching(prepared.compiled.graph, targets);
  const conditions = new Map<BranchInfo, Branch>();
  const guards = new Map<string, Guard>();
  const onPath = new Set<string>();
  const paths: Path[] = [];
  let truncated = false;
  let exact = true;
  let visits = 0;

  const condition = (b: BranchInfo): Branch => {
    let c = conditions.get(b);
    if (c !== undefined) return c;
    // Shared only while this request knows none of the condition's fields.
    const isShared = ignoresKnownInput(b.ast, known);
    c = isShared ? shared.get(b) : undefined;
    if (c === undefined) {
      c = toBranch(partialEval(b.ast, known));
      if (isShared) shared.set(b, c);
    }
    conditions.set(b, c);
    return c;
  };

  /**
   * The rows on which every expression that runs whenever the step is entered (action values,
   * terminal outputs) evaluates without failing: `never` when one is known to fail.
   */
  const stepGuard = (step: StepInfo): Guard => {
    let g = guards.get(step.id);
    if (g === undefined) {
      g = SAFE;
      for (const e of stepExpressions(step)) if (e.role !== 'condition') g = both(g, guardOf(partialEval(e.ast, known), toCondition));
      guards.set(step.id, g);
    }
    return g;
  };

  const visit = (id: string, path: Path, depth: number, pathExact: boolean): void => {
    if (truncated || !live.has(id) || onPath.has(id)) return;
    if (depth > MAX_DEPTH || ++visits > MAX_VISITS) {
      truncated = true;
      return;
    }
    const step = steps.get(id)!;
    onPath.add(id);
    switch (step.type) {
      case 'terminal': {
        if (!targets.has(step.code)) break;
        const g = stepGuard(step);
        const guardedPath = conjoin(path, g.pred);
        if (guardedPath === null) break;
        if (maxPaths > 0 && paths.length >= maxPaths) truncated = true;
        else {
          paths.push(guardedPath);
          if (!pathExact || !g.exact) exact = false;
        }
        break;
      }
      case 'action': {
        const g = stepGuard(step);
        const guardedPath = conjoin(path, g.pred);
        if (guardedPath !== null) visit(step.nextStep, guardedPath, depth + 1, pathExact && g.exact);
        break;
      }
      case 'decision':
        decide(step.branches, 0, step.defaultNext, path, depth, pathExact);
        break;
      default:
        assertNever(step);
    }
    onPath.delete(id);
  };

  /** Branches `from` onwards of a decision, reached by `rest` (each way of a condition is a path of its own). */
  const decide = (branches: readonly BranchInfo[], from: number, defaultNext: string | null, rest: Path, depth: number, pathExact: boolean): void => {
    if (from === branches.length) {
      if (defaultNext !== null) visit(defaultNext, rest, depth + 1, pathExact);
      return;
    }
    const b = branches[from]!;
    const c = condition(b);
    const wayExact = pathExact && c.exact;
    if (live.has(b.nextStep)) {
      for (const w of c.taken) {
        const taken = conjoin(rest, w);
        if (taken !== null) visit(b.nextStep, taken, depth + 1, wayExact);
      }
    }
    for (const w of c.past) {
      if (truncated) return;
      const past = conjoin(rest, w);
      if (past !== null) decide(branches, from + 1, defaultNext, past, depth, wayExact);
    }
  };

  visit(prepared.compiled.entryStep, [], 1, true);
  return { paths, truncated, exact };
}
