/**
 * Static analysis of a compiled ruleset (EXTENSIONS.md 2 "Analysis"): the warnings a create or
 * update answer carries and `GET /api/v1/rulesets/:name/analysis` returns. Computed once per
 * compiled version and kept on it (`CompiledRuleset.derived`); it runs at create, never on the
 * execute path.
 *
 * - UNREACHABLE_STEP, CYCLE: the graph facts of the compiled ruleset (src/ruleset/graph.ts).
 * - DEAD_BRANCH, SHADOWED_DEFAULT, NO_MATCH_POSSIBLE: each decision step's conditions as the
 *   filter's predicates (conditions.ts), decided with the filter's exact simplification
 *   (solve.ts). A branch is dead, a default shadowed, only when that is proved; where a condition
 *   is outside what the filter handles it stays opaque and nothing is claimed about it.
 *   NO_MATCH_POSSIBLE is reported when an input that takes no branch is proved to exist: either a
 *   witness (a whole input that really ends in NO_MATCHING_BRANCH at that step, checked by
 *   executing it) or, where every condition is exact, literal values satisfying the step's
 *   "no branch is true" conjunction.
 * - TYPE_MISMATCH: the syntax trees (type-checks.ts).
 *
 * Unreachable steps get only UNREACHABLE_STEP (no execution reaches their branches).
 */
import type { JsonValue, Node } from '../expr/ast.js';
import { dataState, renderPath } from '../expr/index.js';
import type { Condition } from '../filter/condition.js';
import type { KnownInput } from '../filter/partial-eval.js';
import type { Pred } from '../filter/predicate.js';
import { conjoin, type Path } from '../filter/simplify.js';
import { DerivedSlot, ExecutionError, branchLocation, execute, type CompiledRuleset, type DecisionInfo } from '../ruleset/index.js';
import { deepFreeze, joinKey } from '../ruleset/json.js';
import { decisionConditions, nothingKnown } from './conditions.js';
import { solve } from './solve.js';
import { expressionsOf, typeMismatches } from './type-checks.js';
import type { AnalysisWarning } from './types.js';
import { inputFor, setPath, type Input } from './witness.js';

const WARNINGS = new DerivedSlot<readonly AnalysisWarning[]>('analysis');

/** The warnings of `compiled` (computed on first use, then kept on it). */
export function analyzeRuleset(compiled: CompiledRuleset): readonly AnalysisWarning[] {
  return compiled.derived.get(WARNINGS, () => deepFreeze(computeWarnings(compiled)) as readonly AnalysisWarning[]);
}

/** Bounds of the witness search (per NO_MATCH_POSSIBLE step). */
const MAX_WALK = 150;
const TOTAL_WALK = 1000;
const MAX_TRIES = 12;
const LOCAL_TRIES = 6;
const LEAVES_PER_PATH = 4;

/** Per-analysis state: the conditions of each decision (built once) and the inputs tried. */
class Analysis {
  readonly known: KnownInput;
  readonly conditions = new Map<string, Condition[]>();
  /** Input paths any expression reads (strict rulesets need each one present in a witness). */
  readonly fill: readonly string[];
  readonly fieldsByStep = new Map<string, string[]>();
  /** Steps the witness searches may still walk, over the whole ruleset (bounds the analysis time). */
  walkBudget = TOTAL_WALK;

  constructor(readonly compiled: CompiledRuleset) {
    this.known = nothingKnown(compiled);
    const fields = new Set<string>();
    for (const { ast } of expressionsOf(compiled)) collectPaths(ast, fields);
    // Deeper paths first, so `a.b` is set before a filler for `a` would block it.
    this.fill = compiled.fieldMissing === 'strict' ? [...fields].sort((a, b) => b.length - a.length) : [];
  }

  conditionsOf(step: DecisionInfo): Condition[] {
    let c = this.conditions.get(step.id);
    if (c === undefined) {
      c = decisionConditions(this.compiled, step, this.known);
      this.conditions.set(step.id, c);
    }
    return c;
  }
}

function computeWarnings(compiled: CompiledRuleset): AnalysisWarning[] {
  const a = new Analysis(compiled);
  const out: AnalysisWarning[] = [];
  const { graph } = compiled;
  const cycles = cycleWarnings(compiled);
  for (const step of compiled.steps.values()) {
    const at = joinKey('steps', step.id);
    if (!graph.reachable.has(step.id)) {
      out.push({
        code: 'UNREACHABLE_STEP',
        path: at,
        message: `step '${step.id}' is never reached: no path leads to it from the entry step '${compiled.entryStep}'`,
      });
    }
    const cycle = cycles.get(step.id);
    if (cycle !== undefined) out.push(cycle);
    if (step.type === 'decision' && graph.reachable.has(step.id)) out.push(...decisionWarnings(a, step, at));
  }
  out.push(...typeMismatches(compiled));
  return out;
}

function decisionWarnings(a: Analysis, step: DecisionInfo, at: string): AnalysisWarning[] {
  const out: AnalysisWarning[] = [];
  const conds = a.conditionsOf(step);
  const earlier: Pred[] = [];
  conds.forEach((c, i) => {
    if (solve([...earlier, c.whenTrue]).unsat) {
      const never = i === 0 || solve([c.whenTrue]).unsat;
      const why = never ? 'its condition is never true' : 'its condition is false whenever the earlier branches are false';
      out.push({
        code: 'DEAD_BRANCH',
        path: branchLocation(step, at, i), // a decision table's row i is `rows[i]`
        message: `${step.table !== undefined ? 'row' : 'branch'} ${i} of step '${step.id}' ('${step.branches[i]!.condition}') can never be taken: ${why}`,
      });
    }
    earlier.push(c.whenFalse);
  });
  if (step.defaultNext !== null) {
    if (solve(earlier).unsat) {
      out.push({
        code: 'SHADOWED_DEFAULT',
        path: `${at}.default_next`,
        message: `default_next of step '${step.id}' is never taken: the branches cover every input`,
      });
    }
    return out;
  }
  const none = solve(earlier, 8);
  if (none.unsat) return out;
  const message = `step '${step.id}' has no default_next and some inputs make no branch true: they end in NO_MATCHING_BRANCH`;
  // First the step's own "no branch" conjunction alone (often reached as it is), then the paths.
  let local = 0;
  const witness = tryPath(a, step, [], earlier, () => ++local <= LOCAL_TRIES) ?? findNoMatchWitness(a, step, earlier);
  if (witness !== undefined) {
    out.push({ code: 'NO_MATCH_POSSIBLE', path: at, message, witness });
    return out;
  }
  // Without a witness: only when the conjunction is proved satisfiable (exact conditions, a leaf
  // of literals only, values found for every field).
  const proved = conds.every((c) => c.exact) && none.leaves.some((leaf) => leaf.every((p) => p.type !== 'unsupported') && inputFor(leaf, []) !== undefined);
  if (proved) out.push({ code: 'NO_MATCH_POSSIBLE', path: at, message });
  return out;
}

/**
 * A whole input that reaches `target` and makes none of its branches true: the simple paths from
 * the entry (each step at most once: a walk through a cycle asks at least as much of the input
 * as the path that skips the cycle) carry their conditions; each candidate is executed.
 */
function findNoMatchWitness(a: Analysis, target: DecisionInfo, none: readonly Pred[]): Input | undefined {
  const { compiled } = a;
  let walked = 0;
  let tries = 0;
  const onPath = new Set<string>();
  // NOTE (speed): only the steps from which the target can be reached are walked.
  const leadsThere = stepsLeadingTo(compiled, target.id);
  const visit = (id: string, path: Path): Input | undefined => {
    if (++walked > MAX_WALK || --a.walkBudget < 0 || tries >= MAX_TRIES || onPath.has(id) || !leadsThere.has(id)) return undefined;
    if (id === target.id) return tryPath(a, target, path, none, () => ++tries <= MAX_TRIES);
    const step = compiled.steps.get(id)!;
    onPath.add(id);
    try {
      // A call's result is not known here: its executed candidates say whether a path holds.
      if (step.type === 'action' || step.type === 'call') return visit(step.nextStep, path);
      if (step.type !== 'decision') return undefined;
      const conds = a.conditionsOf(step);
      let cur: Path | null = path;
      for (let i = 0; i < conds.length && cur !== null; i++) {
        const taken = conjoin(cur, conds[i]!.whenTrue);
        if (taken !== null) {
          const found = visit(step.branches[i]!.nextStep, taken);
          if (found !== undefined) return found;
        }
        cur = conjoin(cur, conds[i]!.whenFalse);
      }
      return cur !== null && step.defaultNext !== null ? visit(step.defaultNext, cur) : undefined;
    } finally {
      onPath.delete(id);
    }
  };
  return visit(compiled.entryStep, []);
}

/** The steps from which `target` can be reached (`target` included). */
function stepsLeadingTo(compiled: CompiledRuleset, target: string): Set<string> {
  const seen = new Set([target]);
  const stack = [target];
  while (stack.length > 0) {
    for (const from of compiled.graph.predecessors.get(stack.pop()!) ?? []) {
      if (!seen.has(from)) {
        seen.add(from);
        stack.push(from);
      }
    }
  }
  return seen;
}

/** Candidates for one path to `target`: the leaves of its conjunction, each with a few fillers. */
function tryPath(a: Analysis, target: DecisionInfo, path: Path, none: readonly Pred[], more: () => boolean): Input | undefined {
  const sol = solve([...path, ...none], LEAVES_PER_PATH);
  for (const leaf of sol.leaves) {
    const base = inputFor(leaf, a.fill);
    if (base === undefined) continue;
    for (const candidate of variants(a, target, base)) {
      if (!more()) return undefined;
      if (endsInNoMatch(a.compiled, candidate, target.id)) return candidate;
    }
  }
  return undefined;
}

/** Values tried for the fields of the target's conditions that the literals left open (opaque conditions). */
const FILLERS: readonly JsonValue[] = Object.freeze([null, 0, '', false, 1, 'x', -1, true]);

function* variants(a: Analysis, target: DecisionInfo, base: Input): Generator<Input> {
  yield base;
  let fields = a.fieldsByStep.get(target.id);
  if (fields === undefined) {
    const set = new Set<string>();
    for (const b of target.branches) collectPaths(b.ast, set);
    fields = [...set].sort((x, y) => y.length - x.length);
    a.fieldsByStep.set(target.id, fields);
  }
  if (fields.length === 0) return;
  for (const v of FILLERS) {
    const input = structuredClone(base);
    for (const f of fields) setPath(input, f, v, true);
    yield input;
  }
}

/** True when executing `input` ends in NO_MATCHING_BRANCH at step `stepId`. */
function endsInNoMatch(compiled: CompiledRuleset, input: Input, stepId: string): boolean {
  // NOTE (speed): most candidates end in an error; its stack trace is never read here.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  // Reference data: the analysis runs without datasets (`@name` reads null), whatever the last
  // execution left in the snapshot (expr/data-ref.ts); restored after.
  const data = dataState.current;
  dataState.current = null;
  try {
    execute(compiled, input, { clock: () => 0, timeoutMs: 0, maxSteps: 10_000 });
    return false;
  } catch (err) {
    return err instanceof ExecutionError && err.code === 'NO_MATCHING_BRANCH' && err.stepId === stepId;
  } finally {
    Error.stackTraceLimit = limit;
    dataState.current = data;
  }
}

/** Input paths an expression reads (rendered: `user.age`), added to `out`. */
export function collectPaths(n: Node, out: Set<string>): void {
  switch (n.kind) {
    case 'path':
      if (n.scope === 'input') out.add(renderPath(n));
      return;
    case 'literal':
      return;
    case 'array':
      for (const i of n.items) collectPaths(i, out);
      return;
    case 'unary':
      collectPaths(n.operand, out);
      return;
    case 'binary':
      collectPaths(n.left, out);
      collectPaths(n.right, out);
      return;
    case 'if':
      collectPaths(n.cond, out);
      collectPaths(n.then, out);
      collectPaths(n.else, out);
      return;
    case 'call':
      for (const x of n.args) collectPaths(x, out);
      return;
  }
}

/**
 * One CYCLE warning per strongly connected group of steps, at its first step in document order,
 * naming one cycle through that step.
 */
function cycleWarnings(compiled: CompiledRuleset): Map<string, AnalysisWarning> {
  const { cyclic, successors } = compiled.graph;
  const out = new Map<string, AnalysisWarning>();
  const done = new Set<string>();
  for (const id of compiled.steps.keys()) {
    if (!cyclic.has(id) || done.has(id)) continue;
    // Breadth-first from `id` back to `id`: the shortest cycle through it.
    const parent = new Map<string, string>();
    const queue = [id];
    let closing: string | null = null;
    for (let k = 0; k < queue.length && closing === null; k++) {
      const cur = queue[k]!;
      for (const next of successors.get(cur) ?? []) {
        if (next === id) {
          closing = cur;
          break;
        }
        if (!parent.has(next) && cyclic.has(next)) {
          parent.set(next, cur);
          queue.push(next);
        }
      }
    }
    const loop = [id];
    if (closing !== null) {
      const back: string[] = [];
      for (let s: string | undefined = closing; s !== undefined && s !== id; s = parent.get(s)) back.push(s);
      loop.push(...back.reverse(), id);
    }
    // The whole group: steps reachable from `id` that reach it back.
    for (const s of componentOf(compiled, id)) done.add(s);
    out.set(id, {
      code: 'CYCLE',
      path: joinKey('steps', id),
      message: `steps form a cycle: ${loop.join(' -> ')}; an execution that keeps going round stops only at the step limit (STEP_LIMIT)`,
    });
  }
  return out;
}

function componentOf(compiled: CompiledRuleset, id: string): Set<string> {
  const { successors, predecessors, cyclic } = compiled.graph;
  const reach = (edges: ReadonlyMap<string, readonly string[]>): Set<string> => {
    const seen = new Set([id]);
    const stack = [id];
    while (stack.length > 0) {
      for (const n of edges.get(stack.pop()!) ?? []) {
        if (cyclic.has(n) && !seen.has(n)) {
          seen.add(n);
          stack.push(n);
        }
      }
    }
    return seen;
  };
  const fwd = reach(successors);
  const back = reach(predecessors);
  return new Set([...fwd].filter((s) => back.has(s)));
}
