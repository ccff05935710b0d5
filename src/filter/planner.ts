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
 * - Action: its `set_variable` values bind their variables on this path (variables.ts,
 *   EXTENSIONS.md 3), read by the conditions, values and outputs after it. The rows on which an
 *   action value fails leave the path (its guard, guard.ts, is added; a known failure ends it).
 * - Terminal: a target code ends the path and collects it with the guards of its output
 *   expressions (a failing output is an engine error: EXTENSIONS.md 6 "Filters and failures").
 * - Steps from which no target terminal can be reached are not entered.
 * - NOTE (cycles): a step already on the current path with the same variables (`VarEnv.key`) is
 *   not entered again: a step's outcome depends only on the input and the variables, so an
 *   engine run that comes back to a step in the same state loops until its step limit and yields
 *   no result: dropping the path is exact. Coming back with other variables (a counter) the walk
 *   goes on; the depth limit bounds it.
 * - Limits: more than `MAX_DEPTH` steps on a path that could still reach a target, more than
 *   `max_paths` paths, or more than `MAX_VISITS` visited steps stops the walk with `truncated`
 *   (the caller then answers always_matches, to avoid false negatives).
 */
import { assertNever, stepExpressions, stepsReaching, type BranchInfo, type StepInfo } from '../ruleset/index.js';
import type { Node } from '../expr/ast.js';
import { toBranch, toCondition, type Branch } from './condition.js';
import { SAFE, both, guardOf, type Guard } from './guard.js';
import { ignoresKnownInput, partialEval, readsVariables, type KnownInput, type Residual } from './partial-eval.js';
import { findUnsupported } from './predicate.js';
import type { PreparedRuleset } from './prepare.js';
import { conjoin, type Path } from './simplify.js';
import { VarEnv, knownWith } from './variables.js';

/** Hard maximum of steps on one path (SPEC.md "Limits": filter traversal depth). */
export const MAX_DEPTH = 50;

/** Work limit: steps visited in one walk before it stops as truncated. */
export const MAX_VISITS = 100_000;

/** The collected paths, and whether a limit stopped the walk. */
export interface PlanOutcome {
  readonly paths: readonly Path[];
  readonly truncated: boolean;
  /** False when a collected path went through a documented superset fallback (an untracked variable, a guard no condition writes). */
  readonly exact: boolean;
}

/** Walks the ruleset and collects the paths to `targets` (`maxPaths` 0 = unlimited). */
export function planPaths(prepared: PreparedRuleset, known: KnownInput, targets: ReadonlySet<string>, maxPaths: number): PlanOutcome {
  const steps = prepared.compiled.steps;
  const shared = prepared.sharedConditions;
  const live = stepsReaching(prepared.compiled.graph, targets);
  const conditions = new Map<BranchInfo, Branch>();
  const guards = new Map<string, Guard>();
  /** The variable states (`VarEnv.key`) in which each step is on the current path. */
  const onPath = new Map<string, string[]>();
  const paths: Path[] = [];
  let truncated = false;
  let exact = true;
  let visits = 0;

  const condition = (b: BranchInfo, env: VarEnv): Branch => {
    // A condition that reads variables depends on the path's bindings (variables.ts).
    if (readsVariables(b.ast, known)) return withVars(b.ast, env, toBranch, (c) => [...c.taken, ...c.past].some((p) => findUnsupported(p) !== null));
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
   * `use` of the partial evaluation of `ast` with the variables of `env`. NOTE (fallback): where
   * a residual substituted for a variable makes the result inexpressible (`$v > 100` with
   * `$v = score * 2`), the variables bound to residuals are read as untracked instead: "either
   * way", not exact (docs/filter.md), as before variables were tracked, never a 500.
   */
  function withVars<T>(ast: Node, env: VarEnv, use: (r: Residual) => T, inexpressible: (t: T) => boolean): T {
    const t = use(partialEval(ast, knownWith(known, env)));
    if (!env.hasResiduals() || !inexpressible(t)) return t;
    return use(partialEval(ast, knownWith(known, env.withoutResiduals())));
  }

  const guardIn = (ast: Node, env: VarEnv): Guard =>
    withVars(
      ast,
      env,
      (r) => guardOf(r, toCondition),
      (g) => findUnsupported(g.pred) !== null,
    );

  /**
   * The rows on which every expression that runs whenever the step is entered (action values,
   * terminal outputs) evaluates without failing (`never` when one is known to fail), and the
   * variables after the step: each `set_variable` binds its name, in order.
   */
  const enter = (step: StepInfo, env: VarEnv): { guard: Guard; env: VarEnv } => {
    const exprs = stepExpressions(step).filter((e) => e.role !== 'condition');
    if (exprs.length === 0) return { guard: SAFE, env };
    const cached = guards.get(step.id);
    let g = SAFE;
    if (cached !== undefined) g = cached;
    let readsVars = false;
    for (const e of exprs) {
      const reads = readsVariables(e.ast, known);
      readsVars ||= reads;
      if (cached === undefined) g = both(g, reads ? guardIn(e.ast, env) : guardOf(partialEval(e.ast, known), toCondition));
      // A collect table's arrays are not substituted: bound untracked (ruleset/step-info.ts).
      if (e.role === 'value') env = env.bind(e.name, partialEval(e.ast, knownWith(known, env)), e.untracked === true);
    }
    // Cached per step only when no expression of it reads a variable (then it is the same on every path).
    if (cached === undefined && !readsVars) guards.set(step.id, g);
    return { guard: g, env };
  };

  const visit = (id: string, path: Path, depth: number, pathExact: boolean, env: VarEnv): void => {
    if (truncated || !live.has(id)) return;
    const states = onPath.get(id) ?? [];
    if (states.includes(env.key)) return; // back at a step in the same state: the engine loops
    if (depth > MAX_DEPTH || ++visits > MAX_VISITS) {
      truncated = true;
      return;
    }
    const step = steps.get(id)!;
    states.push(env.key);
    onPath.set(id, states);
    switch (step.type) {
      case 'terminal': {
        if (!targets.has(step.code)) break;
        const g = enter(step, env).guard;
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
        const { guard: g, env: after } = enter(step, env);
        const guardedPath = conjoin(path, g.pred);
        if (guardedPath !== null) visit(step.nextStep, guardedPath, depth + 1, pathExact && g.exact, after);
        break;
      }
      case 'decision':
        decide(step.branches, 0, step.defaultNext, path, depth, pathExact, env);
        break;
      case 'call': {
        // FALLBACK (until calls are expanded): the result is untracked; a condition on it is
        // "either way" and the answer is not exact.
        const { guard: g } = enter(step, env);
        const guardedPath = conjoin(path, g.pred);
        if (guardedPath !== null) visit(step.nextStep, guardedPath, depth + 1, false, env.bind(step.result, { kind: 'var', path: `$${step.result}` }, true));
        break;
      }
      default:
        assertNever(step);
    }
    states.pop();
    if (states.length === 0) onPath.delete(id);
  };

  /** Branches `from` onwards of a decision, reached by `rest` (each way of a condition is a path of its own). */
  const decide = (
    branches: readonly BranchInfo[],
    from: number,
    defaultNext: string | null,
    rest: Path,
    depth: number,
    pathExact: boolean,
    env: VarEnv,
  ): void => {
    if (from === branches.length) {
      if (defaultNext !== null) visit(defaultNext, rest, depth + 1, pathExact, env);
      return;
    }
    const b = branches[from]!;
    const c = condition(b, env);
    const wayExact = pathExact && c.exact;
    if (live.has(b.nextStep)) {
      for (const w of c.taken) {
        const taken = conjoin(rest, w);
        if (taken !== null) visit(b.nextStep, taken, depth + 1, wayExact, env);
      }
    }
    for (const w of c.past) {
      if (truncated) return;
      const past = conjoin(rest, w);
      if (past !== null) decide(branches, from + 1, defaultNext, past, depth, wayExact, env);
    }
  };

  visit(prepared.compiled.entryStep, [], 1, true, VarEnv.EMPTY);
  return { paths, truncated, exact };
}
