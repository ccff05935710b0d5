/**
 * INTERNAL: the execution plan a compiled ruleset carries for `execute`. Not part of the public
 * API (the barrel does not export it); tools read `CompiledRuleset.steps` instead.
 */
import type { JsonValue } from '../expr/ast.js';
import type { CompiledExpr } from '../expr/index.js';
import type { LogActionDoc } from './model.js';

/** Level of a log action. */
export type LogLevel = NonNullable<LogActionDoc['level']>;

/** Node kinds as small integers (cheaper to compare than strings in the hot loop). */
export const DECISION = 0;
/** See `DECISION`. */
export const ACTION = 1;
/** See `DECISION`. */
export const TERMINAL = 2;
/** A decision had no true branch and no `default_next`: reaching this node is that error. */
export const NO_MATCH = 3;
/** A call step (`PlanNode.call` says what to call). */
export const CALL = 4;

/** Kind of a plan node. */
export type NodeKind = typeof DECISION | typeof ACTION | typeof TERMINAL | typeof NO_MATCH | typeof CALL;

/** What a call step calls (EXTENSIONS.md 3): resolved by name each time it runs. */
export class PlanCall {
  constructor(
    /** The callee's name. */
    readonly ruleset: string,
    /** The variable that receives `{code, message, output}`. */
    readonly result: string,
    /** The callee's input keys; null: the caller's whole input. */
    readonly keys: readonly string[] | null,
    /** The expressions of `keys` (same index). */
    readonly fns: readonly CompiledExpr[],
  ) {}
}

/** Kind of a plan action. */
export const SET_VARIABLE = 0;
/** See `SET_VARIABLE`. */
export const LOG = 1;
/** A `set` decision table's rows (table.ts): its `fn` stores the variables and returns the row. */
export const TABLE_SET = 2;

/** `PlanNode.table` of a table whose trace entry carries `row`. */
export const TABLE_ROW = 1;
/** `PlanNode.table` of a collect table (its trace entry carries `rows`). */
export const TABLE_ROWS = 2;

/** The test of nodes that have none (and of a decision without branches). */
export const NEVER: CompiledExpr = () => false;

const NO_ACTIONS: readonly PlanAction[] = Object.freeze([]);
const NO_KEYS: readonly string[] = Object.freeze([]);
const NO_EXPRS: readonly CompiledExpr[] = Object.freeze([]);
const NO_OUTPUT: Readonly<Record<string, JsonValue>> = Object.freeze({});

/** One action of an action step. */
export class PlanAction {
  constructor(
    readonly kind: typeof SET_VARIABLE | typeof LOG | typeof TABLE_SET,
    /** Variable name (set_variable) or '' (log). */
    readonly name: string,
    /** Value expression (set_variable) or null (log). */
    readonly fn: CompiledExpr | null,
    /** Log level (log) or 'info'. */
    readonly level: LogLevel,
    /** Log message (log) or ''. */
    readonly message: string,
  ) {}
}

/**
 * One node of the plan. Every step has a head node; a decision step with several branches is a
 * chain of nodes, one per branch: `test` is the branch condition, `then` its target (a head),
 * `else` the next branch of the same step (`cont` true), or `default_next`, or a NO_MATCH node.
 *
 * NOTE (speed): one closure call and one pointer move per branch, like a hand-written walker;
 * every node has the same fields in the same order whatever its kind, so the walker's property
 * loads stay monomorphic. Targets are direct references: no string lookup while executing.
 */
export class PlanNode {
  /** decision: this branch's condition. */
  test: CompiledExpr = NEVER;
  /** decision: target when `test` is true. */
  then: PlanNode | null = null;
  /** decision: next branch (cont), `default_next`, or a NO_MATCH node. */
  else: PlanNode | null = null;
  /** action: its actions, in order. */
  actions: readonly PlanAction[] = NO_ACTIONS;
  /** action: `next_step`. */
  next: PlanNode | null = null;
  /** terminal: `result.code`. */
  code = '';
  /** terminal: `result.message` (default ""). */
  message = '';
  /** terminal: static output (result keys other than code and message), deep-frozen. */
  staticOutput: Readonly<Record<string, JsonValue>> = NO_OUTPUT;
  /** terminal: keys of `staticOutput`. */
  staticKeys: readonly string[] = NO_KEYS;
  /** terminal: keys of the step's `output` expressions. */
  outKeys: readonly string[] = NO_KEYS;
  /** terminal: the output expressions (same index as `outKeys`). */
  outFns: readonly CompiledExpr[] = NO_EXPRS;
  /** Decision tables: TABLE_ROW on a table's head (the trace reports `row`), TABLE_ROWS on a collect table's (`rows`), else 0. */
  table = 0;
  /** call: what it calls; `next` is its `next_step`. */
  call: PlanCall | null = null;

  constructor(
    readonly kind: NodeKind,
    /** Id of the step this node belongs to. */
    readonly id: string,
    /** Display name of the step (defaults to the id). */
    readonly name: string,
    /** True for a node inside a step (a later branch, a NO_MATCH): moving to it is not a new step. */
    readonly cont: boolean,
    /** decision: index of the branch this node tests (for error messages). */
    readonly branch: number,
  ) {}
}

/** The whole plan. */
export interface ExecutionPlan {
  readonly entry: PlanNode;
  /** The head node of every step, in document order. */
  readonly steps: readonly PlanNode[];
  /** Whether executions need a variables object. */
  readonly hasVariables: boolean;
  /** Whether an expression calls now(), or a step calls another ruleset (its executions then start the execution's time). */
  readonly usesNow: boolean;
  /** `config.timeout_ms`, or -1 when the ruleset has none. */
  readonly timeoutMs: number;
  /** Ruleset name (for log lines). */
  readonly name: string;
}
