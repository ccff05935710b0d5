/**
 * Request and answer types of the svc HTTP API, written by hand from the server's route table
 * and checked against real answers (test/integration/client-*.test.ts). Field names are the
 * wire names (snake_case); nothing is renamed.
 */

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

// ------------------------------------------------------------------ ruleset documents

/** One branch of a decision step. */
export interface BranchDoc {
  condition: string;
  next_step: string;
}

interface StepCommon {
  id?: string;
  name?: string;
}

/** Decision step: the first branch whose condition is true wins, else `default_next`. */
export interface DecisionStepDoc extends StepCommon {
  type: 'decision';
  branches: BranchDoc[];
  default_next?: string;
}

/** An action of an action step. */
export type ActionDoc =
  { action: 'set_variable'; name: string; value: string } | { action: 'log'; message: string; level?: 'debug' | 'info' | 'warn' | 'error' };

/** Action step: runs its actions, then goes to `next_step`. */
export interface ActionStepDoc extends StepCommon {
  type: 'action';
  actions: ActionDoc[];
  next_step: string;
}

/** Terminal step: ends the execution with `result` and `output` (key → expression). */
export interface TerminalStepDoc extends StepCommon {
  type: 'terminal';
  result: { code: string; message?: string; [extra: string]: JsonValue | undefined };
  output?: Record<string, string>;
}

/** One row of a decision table. */
export interface TableRowDoc {
  when: string[];
  next_step?: string;
  set?: Record<string, string>;
}

/** Decision table step. */
export interface TableStepDoc extends StepCommon {
  type: 'table';
  inputs: string[];
  rows: TableRowDoc[];
  default_next?: string;
  hit_policy?: 'first' | 'collect';
  next_step?: string;
}

/** Call step: runs another ruleset of the same tenant and stores its result as `$<result>`. */
export interface CallStepDoc extends StepCommon {
  type: 'call';
  ruleset: string;
  input?: Record<string, string>;
  result: string;
  next_step: string;
}

/** Any step document. */
export type StepDoc = DecisionStepDoc | ActionStepDoc | TerminalStepDoc | TableStepDoc | CallStepDoc;

/** The `config` of a ruleset document. */
export interface RulesetConfig {
  name: string;
  /** Version label; "1.0.0" when absent. */
  version?: string;
  description?: string;
  entry_step: string;
  field_missing?: 'lenient' | 'strict';
  timeout_ms?: number;
  metadata?: JsonObject;
  input_schema?: JsonObject | boolean;
  input_validation?: 'reject' | 'off';
  strict?: boolean;
  mask?: string[];
  [extra: string]: JsonValue | undefined;
}

/** What a test expects. */
export interface TestExpect {
  code: string;
  message?: string;
  /** Subset match against the result's output. */
  output?: JsonObject;
  /** The trace path (`a -> b -> c`). */
  path?: string;
}

/** A test of a ruleset. */
export interface RulesetTest {
  name: string;
  input: JsonObject;
  expect: TestExpect;
}

/** An embedded Ed25519 signature block. */
export interface SignatureBlock {
  algorithm: 'ed25519';
  public_key: string;
  signature: string;
  signed_at?: string;
}

/** A ruleset document, as sent to `putRuleset` and answered by `getRuleset`. */
export interface RulesetDocument {
  config: RulesetConfig;
  steps: Record<string, StepDoc>;
  tests?: RulesetTest[];
  _signature?: SignatureBlock;
}

// ------------------------------------------------------------------ common parts

/** A problem of a document, an input or a request: where, and what. */
export interface Problem {
  path: string;
  message: string;
}

/** An analysis warning (dead branch, unreachable step, ...). */
export interface AnalysisWarning {
  code: string;
  path: string;
  message: string;
  /** An input that shows the warning. */
  witness?: JsonObject;
}

// ------------------------------------------------------------------ rulesets

/** An entry of `listRulesets`. */
export interface RulesetInfo {
  name: string;
  version: string;
  description: string | null;
}

/** Answer of `putRuleset`. */
export interface PutRulesetResult {
  status: 'created' | 'updated';
  name: string;
  /** Analysis warnings; absent when there are none. */
  warnings?: AnalysisWarning[];
}

/** A stored earlier version. */
export interface VersionEntry {
  seq: number;
  version: string;
  /** ISO 8601 UTC. */
  timestamp: string;
}

/** Answer of `listVersions`: the current version and the earlier ones (`seq` for rollback and diff). */
export interface VersionsResult {
  name: string;
  current_version: string;
  versions: VersionEntry[];
}

/** Answer of `getAnalysis`. */
export interface AnalysisResult {
  warnings: AnalysisWarning[];
}

/** Answer of `rollback`. */
export interface RollbackResult {
  status: 'rolled_back';
  name: string;
  from_version: string;
  to_version: string;
}

/** Answer of `getInputSchema`. */
export interface InputSchemaResult {
  name: string;
  version: string;
  /** True when the ruleset has no `config.input_schema` and `schema` was inferred. */
  inferred: boolean;
  input_validation: 'reject' | 'off';
  schema: JsonValue;
}

// ------------------------------------------------------------------ execution

/** One visited step of a trace. */
export interface TraceStep {
  id: string;
  name: string;
  duration_us: number;
  /** Decision tables: the matched row, null when none matched. */
  row?: number | null;
  /** Decision tables with hit_policy collect: every matched row. */
  rows?: number[];
}

/** The trace of an execution (only when asked for). */
export interface Trace {
  /** Visited step ids joined with ` -> `. */
  path: string;
  steps: TraceStep[];
}

/** The result of one execution. */
export interface ExecutionResult {
  code: string;
  message: string;
  output: JsonObject;
  duration_us: number;
  trace?: Trace;
}

/**
 * `execute`'s answer: the result, plus `decisionId` when the server recorded the execution
 * (`--decision-log`; the `X-Svc-Decision-Id` header). `decisionId` is not a field of the body.
 */
export type ExecuteResult = ExecutionResult & { decisionId?: string };

/** A failed item of a batch. */
export interface BatchItemError {
  error: string;
  code: string;
  problems?: Problem[];
}

/** One item of a batch answer: a result, or an error in its place. */
export type BatchItem = ExecutionResult | BatchItemError;

/** `executeBatch`'s answer; `decisionId` as for `execute` (items are `<id>.<index>`). */
export interface BatchResult {
  results: BatchItem[];
  summary: { total: number; success: number; failed: number; total_duration_us: number };
  decisionId?: string;
}

/** Answer of `evaluate`. */
export interface EvalResult {
  result: JsonValue;
  /** The parsed expression in prefix form. */
  parsed: string;
}

// ------------------------------------------------------------------ filter

/** The formats of a filter. */
export type FilterFormat = 'sql' | 'json' | 'mongo';

/** A filter request. */
export interface FilterRequest {
  /** Fields known at query time (nested objects address dotted paths). */
  known_input: JsonObject;
  /** Result codes that count as a match (not empty). */
  target_results: string[];
  /** Default `sql`. */
  format?: FilterFormat;
  /** Rule field path → column name. */
  field_mapping?: Record<string, string>;
  /** Paths collected before stopping; 0 = unlimited; default 100. */
  max_paths?: number;
  /** The time `now()` reads (ISO 8601); default: the clock. */
  now?: string | null;
}

/** A node of the `json` filter format. */
export type JsonFilterNode =
  | { type: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'; field: string; value: JsonValue }
  | { type: 'and' | 'or'; conditions: JsonFilterNode[] }
  | { type: 'not'; condition: JsonFilterNode }
  | { type: 'in' | 'not_in'; field: string; values: JsonValue[] }
  | { type: 'contains' | 'starts_with' | 'ends_with'; field: string; value: JsonValue }
  | { type: 'is_null' | 'not_null'; field: string }
  | { type: 'always' | 'never' };

/** Answer of `filter` and `draftFilter`. */
export interface FilterResult {
  format: FilterFormat;
  /** SQL text, predicate tree or Mongo document; null when `never_matches`. */
  filter: string | JsonFilterNode | JsonObject | null;
  always_matches: boolean;
  never_matches: boolean;
  truncated: boolean;
  unknown_fields: string[];
  /** False when a documented fallback made the filter a superset. */
  exact: boolean;
}

// ------------------------------------------------------------------ tests

/** What a test got: the result, or the execution error. */
export type TestActual = { code: string; message: string; output: JsonObject; path: string } | { error: string; code: string };

/** The outcome of one test. */
export interface TestResult {
  name: string;
  passed: boolean;
  expected: TestExpect;
  actual: TestActual;
}

/** Coverage of one kind of element. */
export interface CoverageCount {
  covered: number;
  total: number;
  /** Locations no test reached (`steps.no`, `steps.age.branches[0]`). */
  missing: string[];
}

/** Answer of `testRuleset` and `draftTest`. */
export interface TestReport {
  passed: number;
  failed: number;
  results: TestResult[];
  coverage: { steps: CoverageCount; branches: CoverageCount; terminals: CoverageCount };
}

// ------------------------------------------------------------------ changes

/** A side of a diff: a stored version's `seq`, `"current"`, or a document. */
export type DiffSide = number | 'current' | RulesetDocument;

/** One structural change. */
export interface StructuralChange {
  op: 'add' | 'remove' | 'change';
  path: string;
  from?: JsonValue;
  to?: JsonValue;
}

/** A region of inputs whose outcome differs between two versions. */
export interface BehaviorRegion {
  from_code: string;
  to_code: string;
  /** The inputs of the region, as a `json` filter tree. */
  condition: JsonFilterNode;
  /** The same as SQL text. */
  sql?: string;
  /** An input of the region. */
  witness?: JsonObject;
  [extra: string]: unknown;
}

/** The behavioural diff. */
export interface Behavior {
  equivalent: boolean;
  exact: boolean;
  truncated: boolean;
  regions: BehaviorRegion[];
}

/** Answer of `diff`. */
export interface DiffResult {
  changes: StructuralChange[];
  /** Null when the server does not compute it. */
  behavior: Behavior | null;
}

/** The candidate of `impact`: a document, or `{seq}` of the history. */
export type ImpactCandidate = RulesetDocument | { seq: number };

/** Answer of `impact`. An outcome is a result code, or `error:<CODE>`. */
export interface ImpactResult {
  total: number;
  changed: number;
  errors: number;
  transitions: { from: string; to: string; count: number }[];
  examples: { input: JsonValue; from: string; to: string }[];
}

/** Answer of `draftValidate` (200 also when invalid). */
export interface DraftValidation {
  valid: boolean;
  problems: Problem[];
  warnings: AnalysisWarning[];
}

// ------------------------------------------------------------------ shadows

/** Answer of `putShadow`. */
export interface ShadowPutResult {
  status: 'created' | 'updated';
  name: string;
  candidate_version: string;
  sample_rate: number;
  since: string;
  warnings?: AnalysisWarning[];
}

/** Answer of `getShadow`: the counts of the instance that answered. */
export interface ShadowState {
  name: string;
  live_version: string;
  candidate_version: string;
  sample_rate: number;
  since: string;
  counted_by: 'instance';
  executed: number;
  agreed: number;
  disagreed: number;
  errors: number;
  dropped: number;
  transitions: { from: string; to: string; count: number }[];
  examples: { input: JsonValue; from: string; to: string; at: string }[];
}

/** Answer of `promoteShadow`. */
export interface ShadowPromoteResult {
  status: 'promoted';
  name: string;
  from_version: string;
  to_version: string;
  warnings?: AnalysisWarning[];
}

// ------------------------------------------------------------------ reference data

/** An entry of `listData`. */
export interface DataInfo {
  name: string;
  bytes: number;
  /** Content hash of the dataset. */
  version: string;
}

/** Answer of `putData`. */
export interface DataPutResult extends DataInfo {
  status: 'created' | 'updated';
}

// ------------------------------------------------------------------ tenants

/** A tenant record as answered. */
export interface Tenant {
  id: string;
  name: string;
  enabled: boolean;
  qps_limit: number | null;
  burst: number | null;
  execution_timeout_ms: number | null;
  max_rulesets: number | null;
}

/** A tenant record as sent: omitted fields take their defaults. */
export interface TenantInput {
  id?: string;
  name?: string;
  enabled?: boolean;
  qps_limit?: number | null;
  burst?: number | null;
  execution_timeout_ms?: number | null;
  max_rulesets?: number | null;
}

// ------------------------------------------------------------------ server

/** Answer of `getAuditSampleRate`. */
export interface AuditSampleRate {
  sample_rate: number;
}

/** Answer of `setAuditSampleRate`. */
export interface AuditSampleRateChange {
  sample_rate: number;
  previous: number;
}

/** Answer of `openapi`: an OpenAPI 3.1 document (only its top level is typed). */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Answer of `health` and `ready`. */
export interface HealthInfo {
  status: 'healthy' | 'unhealthy';
  version: string;
  uptime_seconds: number;
  role: 'standalone' | 'writer' | 'reader';
  storage: { mode: 'persistent' | 'memory'; rules_dir: string | null; rules_count: number };
  sync?: Record<string, unknown>;
  error?: string;
}

/** Answer of `live`. */
export interface LiveInfo {
  status: 'alive';
}

/** One step of the debug view: its document fields, each expression with its parsed form. */
export interface DebugStep {
  id: string;
  name: string;
  type: 'decision' | 'action' | 'terminal' | 'table' | 'call' | (string & {});
  [field: string]: unknown;
}

/** Answer of `debugRuleset` (`--debug-mode`): the compiled view of a ruleset. */
export interface DebugRuleset {
  name: string;
  version: string;
  description: string | null;
  entry_step: string;
  field_missing: string;
  steps: DebugStep[];
}
