/**
 * Ruleset model as posted by users and stored on disk (SPEC.md "Resources", DECISIONS.md 1).
 * These are the *document* types: conditions are still strings. `compile()` turns a document
 * into an immutable executable.
 */
import type { JsonValue } from '../expr/ast.js';

/** Missing-field policy of a ruleset. */
export type FieldMissing = 'lenient' | 'strict';

/** `config` of a ruleset. */
export interface RulesetConfig {
  name: string;
  /** Version label; defaults to "1.0.0" when absent. */
  version?: string;
  description?: string;
  entry_step: string;
  field_missing?: FieldMissing;
  /** Per-ruleset execution timeout in ms (0 disables); overrides the server default. */
  timeout_ms?: number;
  /** Free-form data of the author (EXTENSIONS.md 2): the one place for keys svc does not know. */
  metadata?: { [key: string]: JsonValue };
  /** JSON Schema (draft 2020-12) of the input (EXTENSIONS.md 2 "Input schema"). */
  input_schema?: { [key: string]: JsonValue } | boolean;
  /** With a schema: `reject` (default) validates every input, `off` does not. */
  input_validation?: 'reject' | 'off';
  /** True: analysis warnings are 400 problems (EXTENSIONS.md 2 "Analysis"). */
  strict?: boolean;
  /** Paths of input and output fields a decision record masks as `"***"` (EXTENSIONS.md 4). */
  mask?: string[];
  [extra: string]: JsonValue | undefined;
}

/** What a stored test expects (EXTENSIONS.md 2 "Tests"). */
export interface RulesetTestExpect {
  code: string;
  message?: string;
  /** Subset match against the result's output. */
  output?: { [key: string]: JsonValue };
  /** The trace path text (`a -> b -> c`). */
  path?: string;
}

/** One test stored in a ruleset document. */
export interface RulesetTestDoc {
  name: string;
  input: { [key: string]: JsonValue };
  expect: RulesetTestExpect;
}

/** One branch of a decision step. */
export interface BranchDoc {
  condition: string;
  next_step: string;
}

interface StepCommon {
  id?: string;
  name?: string;
}

/** Decision step: first branch whose condition is true wins, else `default_next`. */
export interface DecisionStepDoc extends StepCommon {
  type: 'decision';
  branches: BranchDoc[];
  default_next?: string;
}

/** `set_variable` action: evaluates `value` and stores it as `$name`. */
export interface SetVariableActionDoc {
  action: 'set_variable';
  name: string;
  value: string;
}

/** `log` action: writes a log line. */
export interface LogActionDoc {
  action: 'log';
  message: string;
  level?: 'debug' | 'info' | 'warn' | 'error';
}

/** An action of an action step. */
export type ActionDoc = SetVariableActionDoc | LogActionDoc;

/** Action step: runs its actions in order, then goes to `next_step`. */
export interface ActionStepDoc extends StepCommon {
  type: 'action';
  actions: ActionDoc[];
  next_step: string;
}

/** Terminal step: ends execution with `result.code`, `result.message` and output. */
export interface TerminalStepDoc extends StepCommon {
  type: 'terminal';
  result: { code: string; message?: string; [extra: string]: JsonValue | undefined };
  /** Output key → expression, evaluated at the terminal and merged over static result keys. */
  output?: Record<string, string>;
}

/** One row of a decision table: a cell per input, and a target (routing) or values (`set`). */
export interface TableRowDoc {
  when: string[];
  next_step?: string;
  /** Variable name → expression (`set` tables). */
  set?: Record<string, string>;
}

/**
 * Decision table (EXTENSIONS.md 3, table.ts): routing rows (`next_step`) route like a decision's
 * branches; `set` rows with `hit_policy` store variables, then the step's `next_step`.
 */
export interface TableStepDoc extends StepCommon {
  type: 'table';
  inputs: string[];
  rows: TableRowDoc[];
  default_next?: string;
  hit_policy?: 'first' | 'collect';
  next_step?: string;
}

/**
 * Calls another ruleset of the same tenant (EXTENSIONS.md 3 "Calling another ruleset"): runs it
 * on `input` (key → expression; the caller's whole input when absent) and stores
 * `{code, message, output}` as `$<result>`, then goes to `next_step`.
 */
export interface CallStepDoc extends StepCommon {
  type: 'call';
  /** Name of the called ruleset (resolved when the step runs: its current version). */
  ruleset: string;
  /** The callee's input: key → expression over the caller's input and variables. */
  input?: Record<string, string>;
  /** Variable name of the result. */
  result: string;
  next_step: string;
}

/** Any step document. */
export type StepDoc = DecisionStepDoc | ActionStepDoc | TerminalStepDoc | TableStepDoc | CallStepDoc;

/** Embedded Ed25519 signature block (SPEC.md "Authentication"). */
export interface SignatureBlock {
  algorithm: 'ed25519';
  public_key: string;
  signature: string;
  signed_at?: string;
}

/** A ruleset document. */
export interface RulesetDoc {
  config: RulesetConfig;
  steps: Record<string, StepDoc>;
  /** Tests that run before the document is stored (EXTENSIONS.md 2 "Tests"). */
  tests?: RulesetTestDoc[];
  _signature?: SignatureBlock;
}

/** Default version label (DECISIONS.md 1). */
export const DEFAULT_VERSION = '1.0.0';

/** Valid ruleset name: 1-128 of `A-Z a-z 0-9 _ - .`, not starting with `.` (DECISIONS.md 1). */
export const RULESET_NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/** True when `name` is a valid ruleset name (safe as a file name). */
export function isValidRulesetName(name: unknown): name is string {
  return typeof name === 'string' && RULESET_NAME_RE.test(name);
}
