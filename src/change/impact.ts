/**
 * Impact of a candidate version over supplied inputs (EXTENSIONS.md 4 "Impact over inputs"):
 * every input runs on the current and on the candidate compiled version, untraced; the
 * outcomes are counted by transition, with examples. Pure: the clock and the limits come in
 * with the options.
 *
 * An outcome is the result code, or `error:<REASON>` when the execution failed: the input does
 * not match the version's input schema (`error:INPUT_INVALID`) or the engine stopped
 * (`error:NO_MATCHING_BRANCH`, `error:EVALUATION_ERROR`, `error:STEP_LIMIT`, `error:TIMEOUT`,
 * `error:LIMIT_EXCEEDED`). The engine's reason is used rather than the catalog code (which is
 * INTERNAL_ERROR for most of them), so that a transition says what changed.
 *
 * NOTE (speed, bench/impact.ts): both versions are compiled once by the caller; the loop
 * allocates nothing per input beyond the engine's results, and a transition's counter is
 * found through two map lookups on the outcome strings (no key is built).
 */
import { BudgetError, meter } from '../expr/index.js';
import type { CompiledRuleset } from '../ruleset/compile.js';
import { execute, type ExecuteOptions } from '../ruleset/execute.js';
import { ExecutionError } from '../ruleset/result.js';
import type { ImpactExample, ImpactReport, ImpactTransition } from './types.js';

/** Most examples an impact report carries. */
export const MAX_IMPACT_EXAMPLES = 20;

/** Bounds of one impact run, over all its executions. */
export interface ImpactLimits {
  /** Stop when the clock (`executeOptions.clock`) reaches this reading; default: no deadline. */
  readonly deadline?: number;
  /** Stop once the executions together spent this many operations (`--max-eval-ops`); default: no limit. */
  readonly maxOps?: number;
}

/** The run stopped before every input ran: at the deadline, or at the operations budget. */
export class ImpactStopped extends Error {
  override readonly name = 'ImpactStopped';
  constructor(
    readonly reason: 'deadline' | 'ops',
    /** Inputs fully run when it stopped. */
    readonly done: number,
  ) {
    super(reason === 'deadline' ? `impact stopped at the deadline after ${done} inputs` : `impact stopped at the work budget after ${done} inputs`);
  }
}

/** The error prefix of a failed outcome. */
export const ERROR_OUTCOME_PREFIX = 'error:';

/** How often (in inputs) the deadline is checked: one clock read every this many inputs. */
const DEADLINE_PERIOD = 64;

/**
 * Runs every input on `current` and on `candidate` (untraced: `executeOptions.trace` is
 * ignored) and counts the transitions. Inputs are expected to be JSON objects (the service
 * checks them). Throws `ImpactStopped` when a limit is reached.
 */
export function impact(
  current: CompiledRuleset,
  candidate: CompiledRuleset,
  inputs: readonly unknown[],
  executeOptions: ExecuteOptions,
  limits: ImpactLimits = {},
): ImpactReport {
  const options: ExecuteOptions = executeOptions.trace === true ? { ...executeOptions, trace: false } : executeOptions;
  const deadline = limits.deadline ?? Infinity;
  const maxOps = limits.maxOps ?? Infinity;
  const byFrom = new Map<string, Map<string, Counter>>();
  const counters: Counter[] = [];
  let changed = 0;
  let errors = 0;
  let ops = 0;
  for (let i = 0; i < inputs.length; i++) {
    if (i % DEADLINE_PERIOD === 0 && deadline !== Infinity && options.clock() >= deadline) throw new ImpactStopped('deadline', i);
    const input = inputs[i];
    const from = outcome(current, input, options);
    ops += meter.ops;
    const to = outcome(candidate, input, options);
    ops += meter.ops;
    if (ops >= maxOps) throw new ImpactStopped('ops', i + 1);
    if (from.startsWith(ERROR_OUTCOME_PREFIX) || to.startsWith(ERROR_OUTCOME_PREFIX)) errors++;
    if (from === to) continue;
    changed++;
    let row = byFrom.get(from);
    if (row === undefined) byFrom.set(from, (row = new Map()));
    let c = row.get(to);
    if (c === undefined) {
      c = { t: { from, to, count: 0 }, kept: [] };
      row.set(to, c);
      counters.push(c);
    }
    c.t.count++;
    if (c.kept.length < MAX_IMPACT_EXAMPLES) c.kept.push(i);
  }
  return {
    total: inputs.length,
    changed,
    errors,
    transitions: counters.map((c) => c.t).sort((a, b) => b.count - a.count || order(a.from, b.from) || order(a.to, b.to)),
    examples: pickExamples(inputs, counters),
  };
}

/** One transition being counted, with the inputs (indexes) that may become its examples. */
interface Counter {
  readonly t: ImpactTransition;
  readonly kept: number[];
}

/** The outcome of one input on one version: its code, or `error:<REASON>`. */
function outcome(compiled: CompiledRuleset, input: unknown, options: ExecuteOptions): string {
  const schema = compiled.inputSchema;
  if (schema !== null && schema.reject && schema.check(input).length > 0) {
    meter.ops = 0;
    return 'error:INPUT_INVALID';
  }
  try {
    return execute(compiled, input, options).code;
  } catch (err) {
    if (err instanceof ExecutionError) return ERROR_OUTCOME_PREFIX + err.code;
    if (err instanceof BudgetError) return err.kind === 'deadline' ? 'error:TIMEOUT' : 'error:LIMIT_EXCEEDED';
    throw err;
  }
}

/**
 * Up to MAX_IMPACT_EXAMPLES examples: round by round, the next kept input of each transition
 * (in the order transitions first appeared), so that every transition is shown before any
 * has two; then sorted by input order.
 */
function pickExamples(inputs: readonly unknown[], counters: readonly Counter[]): ImpactExample[] {
  const picked: Array<{ i: number; t: ImpactTransition }> = [];
  for (let round = 0; picked.length < MAX_IMPACT_EXAMPLES; round++) {
    let any = false;
    for (let k = 0; k < counters.length && picked.length < MAX_IMPACT_EXAMPLES; k++) {
      const c = counters[k]!;
      const i = c.kept[round];
      if (i === undefined) continue;
      any = true;
      picked.push({ i, t: c.t });
    }
    if (!any) break;
  }
  picked.sort((a, b) => a.i - b.i);
  return picked.map(({ i, t }) => ({ input: inputs[i], from: t.from, to: t.to }));
}

function order(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
