/**
 * Execution result and execution errors (SPEC.md "Execution result", DECISIONS.md 1 and 3).
 */
import type { JsonValue } from '../expr/ast.js';

/** One visited step in a trace. */
export interface TraceStep {
  id: string;
  name: string;
  duration_us: number;
  /** Decision tables (EXTENSIONS.md 3): the matched row's index, null when none matched. */
  row?: number | null;
  /** Decision tables with hit_policy collect: the indexes of every matched row. */
  rows?: number[];
}

/** Trace of one execution, present only when asked for. */
export interface Trace {
  /** Visited step ids joined with ` -> `. */
  path: string;
  steps: TraceStep[];
}

/** Result of executing a ruleset. `trace` is present only when tracing was requested. */
export interface ExecutionResult {
  code: string;
  message: string;
  output: Record<string, JsonValue>;
  duration_us: number;
  trace?: Trace;
}

/** Kinds of execution failure. */
export type ExecutionErrorCode =
  /** An expression failed (type error, division by zero, missing field in strict mode). */
  | 'EVALUATION_ERROR'
  /** A decision had no true branch and no `default_next`. */
  | 'NO_MATCHING_BRANCH'
  /** The execution timeout elapsed. */
  | 'TIMEOUT'
  /** More steps than the step limit were visited (a runaway cycle). */
  | 'STEP_LIMIT'
  /** An expression exceeded the work budget (`--max-eval-ops`, `--max-value-bytes`, array elements). */
  | 'LIMIT_EXCEEDED'
  /** A call step's ruleset does not exist, or calls nest deeper than 8 (EXTENSIONS.md 3). */
  | 'CALL_FAILED';

/** An execution failed. The message says what failed and where (step id, path, expression). */
export class ExecutionError extends Error {
  override readonly name = 'ExecutionError';
  constructor(
    readonly code: ExecutionErrorCode,
    message: string,
    /** The step where it failed, when known. */
    readonly stepId?: string,
    /** For TIMEOUT: the timeout that elapsed. */
    readonly timeoutMs?: number,
  ) {
    super(message);
  }

  /** Microseconds from the start of the execution until it failed (set by `execute`). */
  durationUs = 0;
}

/** One validation problem: where (e.g. `steps.check.branches[1].condition`) and what. */
export interface Problem {
  path: string;
  message: string;
}

/** A ruleset document is not valid; `problems` lists every problem at once. */
export class RulesetValidationError extends Error {
  override readonly name = 'RulesetValidationError';
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  }
}
