/**
 * Executes a compiled ruleset against an input (SPEC.md "States and transitions", DECISIONS.md
 * 1 and 3): walks the plan from the entry step to a terminal and returns code, message, output
 * and duration; the trace only when asked.
 *
 * This is the product's hot path. Pure: the clock and the log sink come in as options. The walks
 * follow the step meanings of steps.ts on the plan's integer kinds (`PLAN_KIND`).
 */
import type { JsonValue } from '../expr/ast.js';
import { BudgetError, DEFAULT_BUDGET, armBudget, beginNow, disarmBudget, truthy, type BudgetLimits, type CompiledExpr, type Vars } from '../expr/index.js';
import { setOwn } from './json.js';
import { tableProgress } from './table.js';
import {
  ACTION,
  CALL,
  DECISION,
  SET_VARIABLE,
  TABLE_ROW,
  TABLE_ROWS,
  TABLE_SET,
  TERMINAL,
  OP_CONT,
  OP_KIND,
  OP_SLOTS,
  type NO_MATCH,
  type NodeKind,
  type ExecutionPlan,
  type PlanCall,
  type LogLevel,
  type PlanNode,
} from './plan.js';
import type { CompiledRuleset } from './compile.js';
import { ExecutionError, type ExecutionResult, type TraceStep } from './result.js';

/** Receives the lines written by `log` actions. Fields: `{ruleset, step}`. */
export type LogSink = (level: LogLevel, message: string, fields: Record<string, unknown>) => void;

/** Counters an execution writes when asked (`ExecuteOptions.stats`); tracing reads them. */
export interface ExecutionStats {
  /** Steps visited: the entry step through the terminal, or through the step where it failed. */
  steps: number;
}

/** Options of one execution. Build them once and reuse them: the hot path allocates none. */
export interface ExecuteOptions {
  /** Include the trace (and measure each step). Default false. */
  trace?: boolean;
  /**
   * With `trace`: record the visited path only, without a clock read or an entry per step (the
   * result's `trace.steps` is empty). For callers that keep the path and not the timings
   * (decision records).
   */
  pathOnly?: boolean;
  /** Milliseconds, fractional, monotonic (like `performance.now`). */
  clock: () => number;
  /** Timeout in ms used when the ruleset has no `timeout_ms`; 0 disables. */
  timeoutMs: number;
  /** More visited steps than this is a STEP_LIMIT error (ends cycles). 0 or less: no limit. */
  maxSteps: number;
  /**
   * The work budget of the execution (`--max-eval-ops`, `--max-value-bytes`; expr/budget.ts).
   * Default: the flags' defaults. Exceeding it is a LIMIT_EXCEEDED error.
   */
  budget?: BudgetLimits;
  /** Sink of `log` actions; without it they are dropped. */
  log?: LogSink;
  /**
   * Traced executions only (EXTENSIONS.md 2 "Tests", coverage): receives, for each decision the
   * walk passes, the index of the branch taken, or -1 for its `default_next`; one entry per
   * decision in the trace path, in order. Ignored by the untraced walk.
   */
  branchLog?: number[];
  /**
   * Call steps (EXTENSIONS.md 3): the current version of a ruleset of the caller's tenant by
   * name, or undefined when there is none. Asked each time a call step runs, so a callee's
   * update takes effect at once. Without it every call fails with CALL_FAILED.
   */
  calls?: (name: string) => CompiledRuleset | undefined;
  /**
   * Filled at the end of the execution, also when it fails. One object may serve every
   * execution of a caller: `execute` is synchronous, so read it right after the call.
   */
  stats?: ExecutionStats;
}

/**
 * Timeout check period in visited steps. NOTE: DECISIONS.md 3 / SPEC "Limits": the timeout is
 * checked every 16 steps (first at the 16th), so an untraced execution reads the clock only
 * at its start, its end and those checks.
 */
const CHECK_MASK = 15;

/** Runs `compiled` on `input`. Throws `ExecutionError` (code says which failure). */
export function execute(compiled: CompiledRuleset, input: unknown, options: ExecuteOptions): ExecutionResult {
  const plan = compiled._plan;
  const clock = options.clock;
  const start = clock();
  const timeoutMs = plan.timeoutMs >= 0 ? plan.timeoutMs : options.timeoutMs;
  const maxSteps = options.maxSteps > 0 ? options.maxSteps : Infinity;
  // NOTE (work budget, EXTENSIONS.md 6): the meter counts element-wise work and checks the
  // deadline inside it, so one step cannot outrun the timeout; disarmed at every exit.
  armBudget(options.budget ?? DEFAULT_BUDGET, clock, start, timeoutMs);
  if (plan.usesNow) beginNow(); // now(): the request's "now", else the clock read once (expr/dates.ts)
  if (options.trace === true) return executeTraced(plan, input, options, start, timeoutMs, maxSteps);

  // NOTE (speed): no variables object unless the ruleset sets variables.
  const vars: Vars | null = plan.hasVariables ? (Object.create(null) as Vars) : null;
  // NOTE (speed, plan.ts `ops`): the walk reads the plan's one array; `at` is the offset of the
  // current node, the entry first. Actions, calls and errors get the node object (`opNodes`).
  const ops = plan.ops;
  let at = 0;
  let visited = 1;
  let output: Record<string, JsonValue>;
  // NOTE (speed): one try around the whole walk, not one per branch; `at` is still the
  // decision whose test threw when the catch runs (see `failed`).
  try {
    for (;;) {
      const kind = ((ops[at] as number) & OP_KIND) as NodeKind;
      if (kind === DECISION) {
        const v = (ops[at + 1] as CompiledExpr)(input, vars);
        // Conditions mostly yield booleans: test those without calling truthy.
        at = (v === true || (v !== false && truthy(v)) ? ops[at + 2] : ops[at + 3]) as number;
        if (((ops[at] as number) & OP_CONT) !== 0) continue; // a later branch of the same step, or NO_MATCH
      } else if (kind === ACTION) {
        act(plan.opNodes[at / OP_SLOTS]!, input, vars, plan, options.log);
        at = ops[at + 2] as number;
      } else if (kind === TERMINAL) {
        break;
      } else if (kind === CALL) {
        callStep(plan.opNodes[at / OP_SLOTS]!, input, vars as Vars, options, start, timeoutMs, maxSteps, visited, null);
        visited = calls.visited;
        at = ops[at + 2] as number;
      } else {
        throw noMatch(plan.opNodes[at / OP_SLOTS]!, kind);
      }
      visited++;
      if (visited > maxSteps) throw stepLimit(maxSteps, plan.opNodes[at / OP_SLOTS]!);
      if ((visited & CHECK_MASK) === 0 && timeoutMs > 0) {
        const elapsed = clock() - start;
        if (elapsed >= timeoutMs) throw timedOut(timeoutMs, plan.opNodes[at / OP_SLOTS]!, elapsed);
      }
    }
    const fixed = ops[at + 1] as Record<string, JsonValue> | null;
    output = fixed !== null ? fixed : evaluateOutput(plan.opNodes[at / OP_SLOTS]!, input, vars);
  } catch (err) {
    disarmBudget();
    calls.depth = 0;
    if (options.stats !== undefined) options.stats.steps = err instanceof CalleeFailure ? err.visited : visited;
    throw timed(failed(plan.opNodes[at / OP_SLOTS]!, err), clock, start);
  }
  disarmBudget();
  // NOTE (speed): one load and compare when no stats object is given (tracing off).
  if (options.stats !== undefined) options.stats.steps = visited;
  const end = clock();
  // NOTE (speed): one literal shape for every untraced result. `output` may be the terminal's
  // shared frozen static output (when it has no output expressions): callers must not mutate it.
  return { code: ops[at + 2] as string, message: ops[at + 3] as string, output, duration_us: micros(end - start) };
}

/**
 * The traced walk: one clock read per step (its end is the next step's start). NOTE (speed): it
 * repeats the walk of `execute` instead of sharing it, so the untraced loop carries no trace
 * bookkeeping; the golden cases run every scenario both ways.
 */
function executeTraced(plan: ExecutionPlan, input: unknown, options: ExecuteOptions, start: number, timeoutMs: number, maxSteps: number): ExecutionResult {
  const clock = options.clock;
  const vars: Vars | null = plan.hasVariables ? (Object.create(null) as Vars) : null;
  const trace: TraceSink = { ids: [], steps: options.pathOnly === true ? null : [], prefix: '', last: start };
  let node = plan.entry;
  let head = node;
  let visited = 1;
  let output: Record<string, JsonValue>;
  const branchLog = options.branchLog;
  let lastBranch = -1;
  try {
    for (;;) {
      const kind = node.kind;
      if (kind === DECISION) {
        const v = node.test(input, vars);
        const taken = v === true || (v !== false && truthy(v));
        lastBranch = taken ? node.branch : -1;
        // Test coverage (EXTENSIONS.md 2): which branch was taken, -1 for `default_next`.
        if (branchLog !== undefined && taken) branchLog.push(node.branch);
        node = (taken ? node.then : node.else)!;
        if (node.cont) continue;
        if (branchLog !== undefined && !taken) branchLog.push(-1);
      } else if (kind === ACTION) {
        node = act(node, input, vars, plan, options.log);
      } else if (kind === TERMINAL) {
        break;
      } else if (kind === CALL) {
        // The call's own entry comes first, then the callee's steps as `<callee>/<step>`.
        trace.ids.push(head.id);
        if (trace.steps !== null) {
          const now = clock();
          trace.steps.push({ id: head.id, name: head.name, duration_us: micros(now - trace.last) });
          trace.last = now;
        }
        node = callStep(node, input, vars as Vars, options, start, timeoutMs, maxSteps, visited, trace);
        visited = calls.visited;
        head = node;
        visited++;
        if (visited > maxSteps) throw stepLimit(maxSteps, node);
        if ((visited & CHECK_MASK) === 0 && timeoutMs > 0) checkDeadline(trace, clock, start, timeoutMs, node);
        continue;
      } else {
        throw noMatch(node, kind);
      }
      trace.ids.push(head.id);
      if (trace.steps !== null) {
        const now = clock();
        trace.steps.push(traceEntry(head, head.id, micros(now - trace.last), lastBranch));
        trace.last = now;
      }
      head = node;
      visited++;
      if (visited > maxSteps) throw stepLimit(maxSteps, node);
      // The last read is recent enough: tracing adds no extra read for the timeout check.
      if ((visited & CHECK_MASK) === 0 && timeoutMs > 0) checkDeadline(trace, clock, start, timeoutMs, node);
    }
    output = node.outFns.length === 0 ? node.staticOutput : evaluateOutput(node, input, vars);
  } catch (err) {
    disarmBudget();
    calls.depth = 0;
    if (options.stats !== undefined) options.stats.steps = err instanceof CalleeFailure ? err.visited : visited;
    throw timed(failed(node, err), clock, start);
  }
  disarmBudget();
  if (options.stats !== undefined) options.stats.steps = visited;
  const end = clock();
  trace.ids.push(node.id);
  if (trace.steps !== null) trace.steps.push({ id: node.id, name: node.name, duration_us: micros(end - trace.last) });
  return {
    code: node.code,
    message: node.message,
    output: output as Record<string, JsonValue>,
    duration_us: micros(end - start),
    trace: { path: trace.ids.join(' -> '), steps: trace.steps ?? (NO_STEPS as TraceStep[]) },
  };
}

/** The steps of a path-only trace. */
const NO_STEPS: readonly TraceStep[] = Object.freeze([]);

/**
 * The timeout check of a traced walk (every 16 steps): the last step's clock reading, or with
 * a path-only trace (no reading per step) a fresh one.
 */
function checkDeadline(trace: TraceSink, clock: () => number, start: number, timeoutMs: number, node: PlanNode): void {
  const now = trace.steps === null ? clock() : trace.last;
  if (now - start >= timeoutMs) throw timedOut(timeoutMs, node, now - start);
}

/** Where a traced walk writes its steps (a callee's walk writes into its caller's, ids prefixed). */
interface TraceSink {
  readonly ids: string[];
  /** Null: a path-only trace (no timings). */
  readonly steps: TraceStep[] | null;
  /** Prepended to step ids: '' for the executed ruleset, `<callee>/` inside a call. */
  readonly prefix: string;
  /** Clock reading at the end of the last step written. */
  last: number;
}

/** The trace entry of the step `head` (a decision table's carries its matched row or rows). */
function traceEntry(head: PlanNode, id: string, durationUs: number, lastBranch: number): TraceStep {
  if (head.table === TABLE_ROWS) {
    // Decision tables (EXTENSIONS.md 3): collect reports every matched row.
    return { id, name: head.name, duration_us: durationUs, rows: lastTableRow as number[] };
  }
  if (head.table === TABLE_ROW) {
    // The matched row, null when none matched.
    const row = head.kind === DECISION ? (lastBranch >= 0 ? lastBranch : null) : (lastTableRow as number | null);
    return { id, name: head.name, duration_us: durationUs, row };
  }
  return { id, name: head.name, duration_us: durationUs };
}

/** Deepest nesting of calls (EXTENSIONS.md 3 "Calling another ruleset"). */
export const MAX_CALL_DEPTH = 8;

/**
 * State shared by a call and its callee's walk: the nesting depth, and the steps visited so far
 * (the caller's count goes on in the callee, so the step limit bounds the whole execution).
 */
const calls = { depth: 0, visited: 0 };

/** A callee's walk failed after `visited` steps of the whole execution (the error says where). */
class CalleeFailure extends ExecutionError {
  constructor(
    cause: ExecutionError,
    readonly visited: number,
    stepId: string | undefined,
  ) {
    super(cause.code, cause.message, stepId, cause.timeoutMs);
    this.durationUs = cause.durationUs;
  }
}

/**
 * Runs call step `node`: its input, then the callee's current version on it (its own variables;
 * the caller's deadline, step count and work budget), stores `{code, message, output}` as
 * `$result` and returns `next_step`. `visited` counts the steps so far; the total after the
 * callee is left in `calls.visited`. A failure inside the callee is rethrown as that failure,
 * its step named `<callee>/<step>`.
 */
function callStep(
  node: PlanNode,
  input: unknown,
  vars: Vars,
  options: ExecuteOptions,
  start: number,
  timeoutMs: number,
  maxSteps: number,
  visited: number,
  trace: TraceSink | null,
): PlanNode {
  const call = node.call!;
  const callee = options.calls?.(call.ruleset);
  if (callee === undefined) {
    throw new ExecutionError('CALL_FAILED', `step '${node.id}': the called ruleset '${call.ruleset}' does not exist`, node.id);
  }
  if (calls.depth >= MAX_CALL_DEPTH) {
    throw new ExecutionError('CALL_FAILED', `step '${node.id}': calling '${call.ruleset}' exceeds the call depth limit of ${MAX_CALL_DEPTH}`, node.id);
  }
  const arg = call.keys === null ? input : callInput(node, call, input, vars);
  calls.depth++;
  let result: JsonValue;
  try {
    result = walkCallee(
      callee,
      arg,
      options,
      start,
      timeoutMs,
      maxSteps,
      visited,
      trace === null ? null : { ids: trace.ids, steps: trace.steps, prefix: `${trace.prefix}${call.ruleset}/`, last: trace.last },
      trace,
    );
  } finally {
    calls.depth--;
  }
  vars[call.result] = result;
  return node.next!;
}

/** The callee's input of a call step with `input`: its keys' expressions, in key order. */
function callInput(node: PlanNode, call: PlanCall, input: unknown, vars: Vars): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const keys = call.keys!;
  let i = 0;
  try {
    for (; i < keys.length; i++) setOwn(out, keys[i]!, call.fns[i]!(input, vars));
  } catch (err) {
    throw evaluationError(node, `input '${keys[i]}'`, err);
  }
  return out;
}

/**
 * The callee's walk: the same step meanings as `execute` (decisions, actions, nested calls,
 * terminal output), counting on from `visited`, tracing into `trace` when given (then `outer`,
 * the caller's sink, gets the time of the last step back). Returns `{code, message, output}`.
 * NOTE (speed): one walk for traced and untraced calls (a null test per step): the top-level
 * walks stay free of call bookkeeping.
 */
function walkCallee(
  compiled: CompiledRuleset,
  input: unknown,
  options: ExecuteOptions,
  start: number,
  timeoutMs: number,
  maxSteps: number,
  visited: number,
  trace: TraceSink | null,
  outer: TraceSink | null,
): JsonValue {
  const plan = compiled._plan;
  const clock = options.clock;
  const vars: Vars | null = plan.hasVariables ? (Object.create(null) as Vars) : null;
  let node = plan.entry;
  let head = node;
  let lastBranch = -1;
  let output: Record<string, JsonValue>;
  try {
    visited++; // the callee's entry step
    if (visited > maxSteps) throw stepLimit(maxSteps, node);
    for (;;) {
      const kind = node.kind;
      if (kind === DECISION) {
        const v = node.test(input, vars);
        const taken = v === true || (v !== false && truthy(v));
        lastBranch = taken ? node.branch : -1;
        node = (taken ? node.then : node.else)!;
        if (node.cont) continue;
      } else if (kind === ACTION) {
        node = act(node, input, vars, plan, options.log);
      } else if (kind === TERMINAL) {
        break;
      } else if (kind === CALL) {
        if (trace !== null) {
          trace.ids.push(trace.prefix + head.id);
          if (trace.steps !== null) {
            const now = clock();
            trace.steps.push({ id: trace.prefix + head.id, name: head.name, duration_us: micros(now - trace.last) });
            trace.last = now;
          }
        }
        node = callStep(node, input, vars as Vars, options, start, timeoutMs, maxSteps, visited, trace);
        visited = calls.visited;
        head = node;
        visited++;
        if (visited > maxSteps) throw stepLimit(maxSteps, node);
        if ((visited & CHECK_MASK) === 0 && timeoutMs > 0) {
          const elapsed = clock() - start;
          if (elapsed >= timeoutMs) throw timedOut(timeoutMs, node, elapsed);
        }
        continue;
      } else {
        throw noMatch(node, kind);
      }
      if (trace !== null) {
        trace.ids.push(trace.prefix + head.id);
        if (trace.steps !== null) {
          const now = clock();
          trace.steps.push(traceEntry(head, trace.prefix + head.id, micros(now - trace.last), lastBranch));
          trace.last = now;
        }
      }
      head = node;
      visited++;
      if (visited > maxSteps) throw stepLimit(maxSteps, node);
      if ((visited & CHECK_MASK) === 0 && timeoutMs > 0) {
        const elapsed = clock() - start;
        if (elapsed >= timeoutMs) throw timedOut(timeoutMs, node, elapsed);
      }
    }
    output = node.outFns.length === 0 ? node.staticOutput : evaluateOutput(node, input, vars);
  } catch (err) {
    // The failing step is named from the caller's side: `<callee>/<step>`, one prefix per call.
    const name = compiled.name;
    if (err instanceof CalleeFailure) throw new CalleeFailure(err, err.visited, `${name}/${err.stepId}`);
    const e = failed(node, err) as ExecutionError;
    const cause = new ExecutionError(e.code, `in ruleset '${name}': ${e.message}`, e.stepId, e.timeoutMs);
    cause.durationUs = e.durationUs;
    throw new CalleeFailure(cause, visited, e.stepId === undefined ? undefined : `${name}/${e.stepId}`);
  }
  if (trace !== null) {
    trace.ids.push(trace.prefix + node.id);
    if (trace.steps !== null) {
      const now = clock();
      trace.steps.push({ id: trace.prefix + node.id, name: node.name, duration_us: micros(now - trace.last) });
      trace.last = now;
      outer!.last = now;
    }
  }
  calls.visited = visited;
  return { code: node.code, message: node.message, output };
}

/**
 * Stamps an execution error with the time until it failed: one clock read, on the error path
 * only; a TIMEOUT already carries the elapsed time of the check that fired.
 */
function timed(err: unknown, clock: () => number, start: number): unknown {
  if (err instanceof ExecutionError && err.code !== 'TIMEOUT') err.durationUs = micros(clock() - start);
  return err;
}

/** An error thrown during the walk: execution errors pass; a branch test's error is wrapped. */
function failed(node: PlanNode, err: unknown): unknown {
  if (err instanceof ExecutionError) return err;
  return evaluationError(node, `branch ${node.branch}`, err);
}

/** The row the last `set` table matched (read by the traced walk right after `act`). */
let lastTableRow: JsonValue = null;

/** Action step: its actions in order, then `next_step`. */
function act(step: PlanNode, input: unknown, vars: Vars | null, plan: ExecutionPlan, log: LogSink | undefined): PlanNode {
  const actions = step.actions;
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]!;
    if (a.kind === SET_VARIABLE) {
      let value: JsonValue;
      try {
        value = a.fn!(input, vars);
      } catch (err) {
        throw evaluationError(step, `action ${i} (set_variable '${a.name}')`, err);
      }
      (vars as Vars)[a.name] = value;
    } else if (a.kind === TABLE_SET) {
      // A `set` decision table (table.ts): stores its variables, returns the matched row.
      try {
        lastTableRow = a.fn!(input, vars);
      } catch (err) {
        throw evaluationError(step, `row ${tableProgress.row}`, err);
      }
    } else if (log !== undefined) {
      try {
        log(a.level, a.message, { ruleset: plan.name, step: step.id });
      } catch {
        // A failing log sink must not fail the execution.
      }
    }
  }
  return step.next!;
}

/** Terminal output: static keys, then the output expressions (which win over a static key). */
function evaluateOutput(step: PlanNode, input: unknown, vars: Vars | null): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const staticKeys = step.staticKeys;
  for (let i = 0; i < staticKeys.length; i++) setOwn(out, staticKeys[i]!, step.staticOutput[staticKeys[i]!]!);
  const keys = step.outKeys;
  const fns = step.outFns;
  let i = 0;
  try {
    for (; i < keys.length; i++) setOwn(out, keys[i]!, fns[i]!(input, vars));
  } catch (err) {
    throw evaluationError(step, `output '${keys[i]}'`, err);
  }
  return out;
}

/**
 * An expression of `step` failed at `where`: EVALUATION_ERROR, or for a BudgetError
 * LIMIT_EXCEEDED (naming the limit) or TIMEOUT (the deadline passed inside the counting).
 */
function evaluationError(step: PlanNode, where: string, err: unknown): ExecutionError {
  if (err instanceof BudgetError) {
    if (err.kind === 'deadline') return timedOut(err.timeoutMs, step, err.elapsedMs);
    return new ExecutionError('LIMIT_EXCEEDED', `step '${step.id}' ${where}: ${err.message}`, step.id);
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new ExecutionError('EVALUATION_ERROR', `step '${step.id}' ${where}: ${reason}`, step.id);
}

/**
 * The last `else` of both walks. NOTE (exhaustiveness, steps.ts): `kind` is narrowed to NO_MATCH
 * there, so a new plan kind without its own branch in a walker fails to compile here.
 */
function noMatch(node: PlanNode, _kind: typeof NO_MATCH): ExecutionError {
  return new ExecutionError('NO_MATCHING_BRANCH', `step '${node.id}': no branch condition is true and there is no default_next`, node.id);
}

function stepLimit(maxSteps: number, step: PlanNode): ExecutionError {
  return new ExecutionError('STEP_LIMIT', `step limit of ${maxSteps} exceeded at step '${step.id}' (the ruleset may loop)`, step.id);
}

function timedOut(timeoutMs: number, step: PlanNode, elapsedMs: number): ExecutionError {
  const err = new ExecutionError('TIMEOUT', `execution timed out after ${timeoutMs} ms`, step.id, timeoutMs);
  err.durationUs = micros(elapsedMs);
  return err;
}

/** Milliseconds to whole microseconds (never negative). */
function micros(ms: number): number {
  return ms > 0 ? Math.round(ms * 1000) : 0;
}
