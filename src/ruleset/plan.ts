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

// NOTE (speed): the plan's arrays are typed read-only, never frozen: V8 reads the elements of a
// frozen array through a slow generic path in optimized code (bench/NOTES.md "Seventh session").
// Nothing writes them once the plan is built.
const NO_ACTIONS: readonly PlanAction[] = [];
const NO_KEYS: readonly string[] = [];
const NO_EXPRS: readonly CompiledExpr[] = [];
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

/** Slots per node in `ExecutionPlan.ops`. */
export const OP_SLOTS = 4;
/** Mask of the node kind in a node's first slot of `ExecutionPlan.ops`. */
export const OP_KIND = 7;
/** Set in a node's first slot of `ExecutionPlan.ops` when moving to it is not a new step (`PlanNode.cont`). */
export const OP_CONT = 8;

/** One slot of `ExecutionPlan.ops`. */
export type PlanOp = number | string | CompiledExpr | Readonly<Record<string, JsonValue>> | null;

/** The whole plan. */
export interface ExecutionPlan {
  /**
   * The plan as the untraced walk reads it: `OP_SLOTS` slots per node, the entry first, then the
   * nodes reached from it (the `then` of each decision before its `else`), node `k` at `k *
   * OP_SLOTS`. Slot 0 is the kind (`| OP_CONT` for a node inside a step); then, by kind:
   * decision `test`, `then` offset, `else` offset; action and call: unused, `next` offset;
   * terminal: its static output (null when it has output expressions), `code`, `message`.
   *
   * NOTE (speed, bench/NOTES.md "Seventh session"): a walk reads one array of a few cache lines
   * instead of a node object (two lines) per step, which matters when traffic spreads over many
   * rulesets (each ruleset's plan is then cold). Built from the nodes by `encodePlan`, so both
   * always say the same; the traced walk, calls and error messages use the nodes (`opNodes`).
   */
  readonly ops: readonly PlanOp[];
  /** The node of each entry of `ops` (index: offset / OP_SLOTS). */
  readonly opNodes: readonly PlanNode[];
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

/**
 * `ExecutionPlan.ops` and `opNodes` of the plan whose walk starts at `entry`; `all` holds every
 * node of the plan (those not reached from `entry` come last, in its order). Call it once the
 * nodes are linked: it copies their fields.
 */
export function encodePlan(entry: PlanNode, all: readonly PlanNode[]): { ops: PlanOp[]; opNodes: PlanNode[] } {
  const order: PlanNode[] = [];
  const index = new Map<PlanNode, number>();
  const add = (n: PlanNode): void => {
    if (!index.has(n)) {
      index.set(n, order.length);
      order.push(n);
    }
  };
  // Depth first from the entry, a decision's `then` before its `else`: the path of a walk whose
  // conditions hold is one run of consecutive nodes.
  const stack: PlanNode[] = [entry];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (index.has(n)) continue;
    add(n);
    for (const next of [n.next, n.else, n.then]) if (next !== null && !index.has(next)) stack.push(next);
  }
  for (const n of all) add(n);
  const at = (n: PlanNode | null): number => (n === null ? -1 : index.get(n)! * OP_SLOTS);
  const ops: PlanOp[] = [];
  for (const n of order) {
    const word = n.kind | (n.cont ? OP_CONT : 0);
    if (n.kind === DECISION) ops.push(word, n.test, at(n.then), at(n.else));
    else if (n.kind === TERMINAL) ops.push(word, n.outFns.length === 0 ? n.staticOutput : null, n.code, n.message);
    else if (n.kind === ACTION || n.kind === CALL) ops.push(word, null, at(n.next), -1);
    else ops.push(word, null, -1, -1);
  }
  // Copies of exact length (a growing array keeps spare capacity).
  return { ops: ops.slice(), opNodes: order.slice() };
}
