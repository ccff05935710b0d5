/**
 * The resolved steps of a compiled ruleset, as tools read them (the debug endpoint, the filter
 * planner, the graph facts): expressions parsed, step kinds as a discriminated union on `type`.
 */
import type { JsonValue, Node } from '../expr/ast.js';
import type { LogLevel } from './plan.js';

/** A branch of a decision step, for tools (the debug endpoint, the filter planner). */
export interface BranchInfo {
  /** The condition as written. */
  readonly condition: string;
  /** Its syntax tree. */
  readonly ast: Node;
  readonly nextStep: string;
}

/** An action of an action step, for tools. */
export type ActionInfo =
  | {
      readonly kind: 'set_variable';
      readonly name: string;
      readonly value: string;
      readonly ast: Node;
      /**
       * Set on a `collect` decision table's variables: `ast` evaluates what the value reads and
       * where it fails (the rows' conditions, and each row's value only where its row holds), but
       * not the value itself (an array of the holding rows' values), so tools must not substitute it.
       */
      readonly untracked?: true;
    }
  | { readonly kind: 'log'; readonly message: string; readonly level: LogLevel };

/** An output expression of a terminal step, for tools. */
export interface OutputInfo {
  readonly key: string;
  readonly expression: string;
  readonly ast: Node;
}

/**
 * What a decision table step (EXTENSIONS.md 3) was written as. A routing table is resolved as a
 * decision (one branch per row, `branches[i]` is `rows[i]`); a `set` table as an action step
 * (one set_variable per variable, its value the rows' if-chain): tools reuse their logic.
 */
export interface TableOrigin {
  readonly inputs: readonly string[];
  /** null for a routing table. */
  readonly hitPolicy: 'first' | 'collect' | null;
}

/** A decision step, resolved. */
export interface DecisionInfo {
  readonly type: 'decision';
  readonly id: string;
  readonly name: string;
  readonly branches: readonly BranchInfo[];
  readonly defaultNext: string | null;
  /** Set when the step is a routing decision table (`branches[i]` is its row i). */
  readonly table?: TableOrigin;
}

/** An action step, resolved. */
export interface ActionStepInfo {
  readonly type: 'action';
  readonly id: string;
  readonly name: string;
  readonly actions: readonly ActionInfo[];
  readonly nextStep: string;
  /** Set when the step is a `set` decision table. */
  readonly table?: TableOrigin;
}

/** A terminal step, resolved. */
export interface TerminalInfo {
  readonly type: 'terminal';
  readonly id: string;
  readonly name: string;
  readonly code: string;
  /** `result.message`, default "". */
  readonly message: string;
  /** Static output: the result keys other than code and message (deep-frozen). */
  readonly staticOutput: Readonly<Record<string, JsonValue>>;
  /** Step-level `output` expressions, evaluated at the terminal and merged over `staticOutput`. */
  readonly output: readonly OutputInfo[];
}

/** One key of a call step's `input`: the expression that gives the callee's input key. */
export interface ArgumentInfo {
  readonly key: string;
  readonly expression: string;
  readonly ast: Node;
}

/** A call step, resolved (EXTENSIONS.md 3 "Calling another ruleset"). */
export interface CallInfo {
  readonly type: 'call';
  readonly id: string;
  readonly name: string;
  /** The called ruleset's name (same tenant; resolved when the step runs). */
  readonly ruleset: string;
  /** The callee's input, key by key; null: the caller's whole input. */
  readonly input: readonly ArgumentInfo[] | null;
  /** The variable that receives `{code, message, output}`. */
  readonly result: string;
  readonly nextStep: string;
}

/** Any resolved step. Switch on `type`. */
export type StepInfo = DecisionInfo | ActionStepInfo | TerminalInfo | CallInfo;
