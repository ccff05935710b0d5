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
 * - Call (EXTENSIONS.md 3 "Calling another ruleset"): the callee's current version (the
 *   resolver's) is walked from its entry by the same code, with fresh variables, its own
 *   `field_missing` and its input modelled (the caller's fields without `input`, the arguments
 *   partially evaluated in the caller's state with it: call-input.ts). Each callee terminal
 *   reached continues the caller's walk with the callee path's conditions and `$result` bound to
 *   `{code, message, output}` (a value, or a struct whose residual leaves are the outputs:
 *   variables.ts). A missing callee, no resolver, or a call deeper than MAX_CALL_DEPTH ends the
 *   path (the engine fails there with CALL_FAILED).
 * - Steps from which no target terminal can be reached are not entered.
 * - NOTE (cycles): a step already on the current path with the same variables (`VarEnv.key`) is
 *   not entered again: a step's outcome depends only on the input and the variables, so an
 *   engine run that comes back to a step in the same state loops until its step limit and yields
 *   no result: dropping the path is exact. Coming back with other variables (a counter) the walk
 *   goes on; the depth limit bounds it.
 * - Limits (shared by a walk and its callees' walks: the engine counts a callee's steps too):
 *   more than `MAX_DEPTH` steps on a path that could still reach a target, more than
 *   `max_paths` paths, or more than `MAX_VISITS` visited steps stops the walk with `truncated`
 *   (the caller then answers always_matches, to avoid false negatives).
 */
import {
  MAX_CALL_DEPTH,
  assertNever,
  stepExpressions,
  type BranchInfo,
  type CallInfo,
  type CompiledRuleset,
  type StepInfo,
  type TerminalInfo,
} from '../ruleset/index.js';
import type { JsonValue, Node } from '../expr/ast.js';
import { mappedCallee, type CallSites, type MappedCallee } from './call-input.js';
import { toBranch, toCondition, type Branch } from './condition.js';
import { SAFE, both, guardOf, type Guard } from './guard.js';
import { ignoresKnownInput, isKnownPresent, knownKey, partialEval, readsVariables, type KnownInput, type Residual, type StructLeaf } from './partial-eval.js';
import { findUnsupported } from './predicate.js';
import { KNOWN_MAX, liveFor, prepare, type PreparedRuleset } from './prepare.js';
import { EMPTY_PLAN_PATH, PathIds, conjoinPlan, type PlanPath } from './plan-path.js';
import type { Path } from './simplify.js';
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

/** The current version of a ruleset of the caller's tenant by name (what call steps run), or undefined. */
export type CalleeResolver = (name: string) => CompiledRuleset | undefined;

/**
 * One ruleset as the walk reads it: the ruleset walked, or a callee seen through a call step.
 * The caches are per request.
 */
interface Scope {
  readonly steps: ReadonlyMap<string, StepInfo>;
  readonly entry: string;
  /** The steps from which a terminal that matters can be reached. */
  readonly live: ReadonlySet<string>;
  readonly known: KnownInput;
  readonly shared: Map<BranchInfo, Branch>;
  /** Conditions that read known fields, by the values they read (prepare.ts); null: not memoized. */
  readonly byKnown: Map<BranchInfo, Map<string, Branch>> | null;
  readonly conditions: Map<BranchInfo, Branch>;
  readonly guards: Map<string, Guard>;
  /** The callee seen through an input mapping (call-input.ts); null: it reads the walked ruleset's input. */
  readonly mapped: MappedCallee | null;
  /** Where the mapped callees of its call steps are memoized (call-input.ts). */
  readonly callSites: CallSites;
}

/** One run of a scope on the current path: the ruleset walked, or one execution of a call. */
interface Frame {
  readonly scope: Scope;
  /** The variable states (`VarEnv.key`) in which each step is on the current path. */
  readonly onPath: Map<string, string[]>;
  /** Calls around this run (0 for the ruleset walked). */
  readonly callDepth: number;
  /** A terminal was reached on `path`: collect it (the ruleset walked) or go on in the caller. */
  readonly terminal: (step: TerminalInfo, path: PlanPath, depth: number, pathExact: boolean, env: VarEnv) => void;
}

/** Sets own key `key` of `obj` (a `__proto__` key included), as the engine builds objects. */
function setKey(obj: Record<string, JsonValue>, key: string, value: JsonValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Walks the ruleset and collects the paths to `targets` (`maxPaths` 0 = unlimited). `calls`
 * resolves the callees of call steps; without it every call ends its path.
 */
export function planPaths(prepared: PreparedRuleset, known: KnownInput, targets: ReadonlySet<string>, maxPaths: number, calls?: CalleeResolver): PlanOutcome {
  const paths: Path[] = [];
  const ids = new PathIds();
  let truncated = false;
  let exact = true;
  let visits = 0;
  const root = known.root;

  const newScope = (
    steps: ReadonlyMap<string, StepInfo>,
    entry: string,
    live: ReadonlySet<string>,
    k: KnownInput,
    shared: Map<BranchInfo, Branch>,
    byKnown: Map<BranchInfo, Map<string, Branch>> | null,
    mapped: MappedCallee | null,
    callSites: CallSites,
  ): Scope => ({ steps, entry, live, known: k, shared, byKnown, conditions: new Map(), guards: new Map(), mapped, callSites });

  const compiled = prepared.compiled;
  const top = newScope(
    compiled.steps,
    compiled.entryStep,
    liveFor(prepared, targets),
    known,
    prepared.sharedConditions,
    prepared.knownConditions,
    null,
    prepared.callSites,
  );

  /**
   * Callee scopes of this request: per callee when it reads the walked ruleset's input, per
   * (call step, callee) when it reads a mapped input (its call's, or for a call without `input`
   * inside a mapped callee, that callee's: the same input object passes on).
   */
  const plainScopes = new Map<CompiledRuleset, Scope>();
  const present = (segments: readonly (string | number)[]): boolean => isKnownPresent(root, segments);
  const mappedScopes = new Map<CallInfo, Map<CompiledRuleset, Scope>>();
  const calleeScope = (owner: Scope, call: CallInfo, callee: CompiledRuleset): Scope => {
    if (call.input === null && owner.mapped === null) {
      let s = plainScopes.get(callee);
      if (s === undefined) {
        const p = prepare(callee);
        // The callee reads the caller's input: the same known root, with its own field_missing.
        s = newScope(
          callee.steps,
          callee.entryStep,
          p.calleeLive,
          { root, fieldMissing: callee.fieldMissing, memo: p.memo },
          p.sharedConditions,
          p.knownConditions,
          null,
          p.callSites,
        );
        plainScopes.set(callee, s);
      }
      return s;
    }
    let byCallee = mappedScopes.get(call);
    if (byCallee === undefined) mappedScopes.set(call, (byCallee = new Map()));
    let s = byCallee.get(callee);
    if (s === undefined) {
      const m =
        call.input !== null
          ? mappedCallee(owner.callSites, call, callee, call.input, owner.known.fieldMissing, present)
          : mappedCallee(owner.callSites, call, callee, owner.mapped!.args, owner.mapped!.argsFieldMissing, present);
      s = newScope(
        m.steps,
        callee.entryStep,
        prepare(callee).calleeLive,
        { root, fieldMissing: callee.fieldMissing, memo: m.memo },
        m.sharedConditions,
        null,
        m,
        m.callSites,
      );
      byCallee.set(callee, s);
    }
    return s;
  };

  const condition = (scope: Scope, b: BranchInfo, env: VarEnv): Branch => {
    const k = scope.known;
    // A condition that reads variables depends on the path's bindings (variables.ts).
    if (readsVariables(b.ast, k)) return withVars(k, b.ast, env, toBranch, (c) => [...c.taken, ...c.past].some((p) => findUnsupported(p) !== null));
    let c = scope.conditions.get(b);
    if (c !== undefined) return c;
    // Shared only while this request knows none of the condition's fields.
    const isShared = ignoresKnownInput(b.ast, k);
    if (isShared) {
      c = scope.shared.get(b);
      if (c === undefined) scope.shared.set(b, (c = toBranch(partialEval(b.ast, k))));
    } else {
      // Memoized by the known values it reads (the same values give the same predicates).
      const key = scope.byKnown === null ? null : knownKey(b.ast, k);
      let byKey = key === null ? undefined : scope.byKnown!.get(b);
      c = byKey?.get(key!);
      if (c === undefined) {
        c = toBranch(partialEval(b.ast, k));
        if (key !== null) {
          if (byKey === undefined) scope.byKnown!.set(b, (byKey = new Map()));
          if (byKey.size >= KNOWN_MAX) byKey.clear();
          byKey.set(key, c);
        }
      }
    }
    scope.conditions.set(b, c);
    return c;
  };

  /**
   * `use` of the partial evaluation of `ast` with the variables of `env`. NOTE (fallback): where
   * a residual substituted for a variable makes the result inexpressible (`$v > 100` with
   * `$v = score * 2`), the variables bound to residuals are read as untracked instead: "either
   * way", not exact (docs/filter.md), as before variables were tracked, never a 500.
   */
  function withVars<T>(k: KnownInput, ast: Node, env: VarEnv, use: (r: Residual) => T, inexpressible: (t: T) => boolean): T {
    const t = use(partialEval(ast, knownWith(k, env)));
    if (!env.hasResiduals() || !inexpressible(t)) return t;
    return use(partialEval(ast, knownWith(k, env.withoutResiduals())));
  }

  const guardIn = (k: KnownInput, ast: Node, env: VarEnv): Guard =>
    withVars(
      k,
      ast,
      env,
      (r) => guardOf(r, toCondition),
      (g) => findUnsupported(g.pred) !== null,
    );

  /**
   * The rows on which every expression that runs whenever the step is entered (action values,
   * terminal outputs, call arguments) evaluates without failing (`never` when one is known to
   * fail), and the variables after the step: each `set_variable` binds its name, in order.
   */
  const enter = (scope: Scope, step: StepInfo, env: VarEnv): { guard: Guard; env: VarEnv } => {
    const exprs = stepExpressions(step).filter((e) => e.role !== 'condition');
    if (exprs.length === 0) return { guard: SAFE, env };
    const k = scope.known;
    const cached = scope.guards.get(step.id);
    let g = SAFE;
    if (cached !== undefined) g = cached;
    let readsVars = false;
    for (const e of exprs) {
      const reads = readsVariables(e.ast, k);
      readsVars ||= reads;
      if (cached === undefined) g = both(g, reads ? guardIn(k, e.ast, env) : guardOf(partialEval(e.ast, k), toCondition));
      // A collect table's arrays are not substituted: bound untracked (ruleset/step-info.ts).
      if (e.role === 'value') env = env.bind(e.name, partialEval(e.ast, knownWith(k, env)), e.untracked === true);
    }
    // Cached per step only when no expression of it reads a variable (then it is the same on every path).
    if (cached === undefined && !readsVars) scope.guards.set(step.id, g);
    return { guard: g, env };
  };

  /**
   * A call step: the callee's walk from its entry (fresh variables; its input bound when mapped),
   * each of its terminals going on at `next_step` with `$result` bound.
   */
  const call = (frame: Frame, step: CallInfo, path: PlanPath, depth: number, pathExact: boolean, env: VarEnv): void => {
    // The engine fails here (CALL_FAILED): no result, the path ends (exact).
    const callee = calls?.(step.ruleset);
    if (callee === undefined || frame.callDepth >= MAX_CALL_DEPTH) return;
    const scope = frame.scope;
    const { guard: g } = enter(scope, step, env);
    const guardedPath = conjoinPlan(path, g.pred, ids);
    if (guardedPath === null) return;
    const sub = calleeScope(scope, step, callee);
    let calleeEnv = VarEnv.EMPTY;
    if (step.input === null && scope.mapped !== null) {
      // No `input` inside a mapped callee: the same input object passes on.
      const b = env.get(scope.mapped.inputVar);
      if (b?.kind === 'struct') calleeEnv = calleeEnv.bindStruct(sub.mapped!.inputVar, b.skeleton, b.leaves);
      else if (b?.kind === 'value') calleeEnv = calleeEnv.bind(sub.mapped!.inputVar, { kind: 'value', value: b.value });
    } else if (step.input !== null) {
      // The callee's input object `{k: r_k}`: known arguments in the skeleton, residual ones as leaves.
      const skeleton: Record<string, JsonValue> = {};
      const leaves: StructLeaf[] = [];
      const k = knownWith(scope.known, env);
      for (const a of step.input) {
        const r = partialEval(a.ast, k);
        setKey(skeleton, a.key, r.kind === 'value' ? r.value : null);
        if (r.kind !== 'value') leaves.push({ path: [a.key], residual: r });
      }
      calleeEnv = calleeEnv.bindStruct(sub.mapped!.inputVar, skeleton, leaves);
    }
    const inner: Frame = {
      scope: sub,
      onPath: new Map(),
      callDepth: frame.callDepth + 1,
      terminal: (t, p, d, ex, calleeVars) => {
        // The callee's outputs run (a failure fails the whole execution), then `$result` is set.
        const { guard: og } = enter(sub, t, calleeVars);
        const outPath = conjoinPlan(p, og.pred, ids);
        if (outPath === null) return;
        const output: Record<string, JsonValue> = {};
        const leaves: StructLeaf[] = [];
        const k = knownWith(sub.known, calleeVars);
        for (const o of t.output) {
          const r = partialEval(o.ast, k);
          setKey(output, o.key, r.kind === 'value' ? r.value : null);
          if (r.kind !== 'value') leaves.push({ path: ['output', o.key], residual: r });
        }
        const result = { code: t.code, message: t.message, output };
        visit(frame, step.nextStep, outPath, d + 1, ex && og.exact, env.bindStruct(step.result, result, leaves));
      },
    };
    visit(inner, sub.entry, guardedPath, depth + 1, pathExact && g.exact, calleeEnv);
  };

  const visit = (frame: Frame, id: string, path: PlanPath, depth: number, pathExact: boolean, env: VarEnv): void => {
    const scope = frame.scope;
    if (truncated || !scope.live.has(id)) return;
    const onPath = frame.onPath;
    const states = onPath.get(id) ?? [];
    if (states.includes(env.key)) return; // back at a step in the same state: the engine loops
    if (depth > MAX_DEPTH || ++visits > MAX_VISITS) {
      truncated = true;
      return;
    }
    const step = scope.steps.get(id)!;
    states.push(env.key);
    onPath.set(id, states);
    switch (step.type) {
      case 'terminal':
        frame.terminal(step, path, depth, pathExact, env);
        break;
      case 'action': {
        const { guard: g, env: after } = enter(scope, step, env);
        const guardedPath = conjoinPlan(path, g.pred, ids);
        if (guardedPath !== null) visit(frame, step.nextStep, guardedPath, depth + 1, pathExact && g.exact, after);
        break;
      }
      case 'decision':
        decide(frame, step.branches, 0, step.defaultNext, path, depth, pathExact, env);
        break;
      case 'call':
        call(frame, step, path, depth, pathExact, env);
        break;
      default:
        assertNever(step);
    }
    states.pop();
    if (states.length === 0) onPath.delete(id);
  };

  /** Branches `from` onwards of a decision, reached by `rest` (each way of a condition is a path of its own). */
  const decide = (
    frame: Frame,
    branches: readonly BranchInfo[],
    from: number,
    defaultNext: string | null,
    rest: PlanPath,
    depth: number,
    pathExact: boolean,
    env: VarEnv,
  ): void => {
    if (from === branches.length) {
      if (defaultNext !== null) visit(frame, defaultNext, rest, depth + 1, pathExact, env);
      return;
    }
    const b = branches[from]!;
    const c = condition(frame.scope, b, env);
    const wayExact = pathExact && c.exact;
    if (frame.scope.live.has(b.nextStep)) {
      for (const w of c.taken) {
        const taken = conjoinPlan(rest, w, ids);
        if (taken !== null) visit(frame, b.nextStep, taken, depth + 1, wayExact, env);
      }
    }
    for (const w of c.past) {
      if (truncated) return;
      const past = conjoinPlan(rest, w, ids);
      if (past !== null) decide(frame, branches, from + 1, defaultNext, past, depth, wayExact, env);
    }
  };

  const main: Frame = {
    scope: top,
    onPath: new Map(),
    callDepth: 0,
    terminal: (step, path, _depth, pathExact, env) => {
      if (!targets.has(step.code)) return;
      const g = enter(top, step, env).guard;
      const guardedPath = conjoinPlan(path, g.pred, ids);
      if (guardedPath === null) return;
      if (maxPaths > 0 && paths.length >= maxPaths) truncated = true;
      else {
        paths.push(guardedPath.items);
        if (!pathExact || !g.exact) exact = false;
      }
    },
  };
  visit(main, top.entry, EMPTY_PLAN_PATH, 1, true, VarEnv.EMPTY);
  return { paths, truncated, exact };
}
