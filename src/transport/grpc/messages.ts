/**
 * TypeScript shapes of the `proto/rules.proto` messages as grpc-js and proto-loader hand them
 * over (`keepCase`, `longs: String`, `defaults`, `oneofs`). Requests arrive with every scalar
 * set (defaults); responses may give 64-bit fields as numbers or decimal strings.
 */

/** A 64-bit integer field: a number on the way out, a decimal string on the way in. */
export type Uint64 = number | string;

/** `ExecuteRequest`. */
export interface ExecuteRequestMsg {
  name: string;
  input_json: string;
  trace: boolean;
  /** `optional string now` (addition): absent (undefined) unless the caller set it. */
  now?: string;
}

/** `StepInfo`; at most one of the `table_match` members is set (table steps only). */
export interface StepInfoMsg {
  id: string;
  name: string;
  duration_us: Uint64;
  /** hit_policy first: the matched row. */
  row?: number;
  /** hit_policy first: no row matched. */
  row_null?: true;
  /** hit_policy collect: every matched row. */
  rows?: TableRowsMsg;
}

/** `TableRows` (addition). */
export interface TableRowsMsg {
  indexes: number[];
}

/** `TraceInfo`. */
export interface TraceInfoMsg {
  path: string;
  steps: StepInfoMsg[];
}

/** `ExecuteResponse`; `trace` is absent unless tracing was requested. */
export interface ExecuteResponseMsg {
  code: string;
  message: string;
  output_json: string;
  duration_us: Uint64;
  trace?: TraceInfoMsg | null;
}

/** `ListRuleSetsRequest` (no fields). */
export type ListRuleSetsRequestMsg = Record<string, never>;

/** `RuleSetInfo`. */
export interface RuleSetInfoMsg {
  name: string;
  version: string;
  description: string;
}

/** `ListRuleSetsResponse`. */
export interface ListRuleSetsResponseMsg {
  rulesets: RuleSetInfoMsg[];
}

/** `GetRuleSetRequest`. */
export interface GetRuleSetRequestMsg {
  name: string;
}

/** `GetRuleSetResponse`. */
export interface GetRuleSetResponseMsg {
  ruleset_json: string;
}

/** `HealthRequest` (no fields). */
export type HealthRequestMsg = Record<string, never>;

/** `HealthResponse`. */
export interface HealthResponseMsg {
  status: string;
  version: string;
  uptime_seconds: Uint64;
  rules_count: number;
}

/** `EvalRequest`. */
export interface EvalRequestMsg {
  expression: string;
  context_json: string;
  /** `optional string now` (addition). */
  now?: string;
}

/** `EvalResponse`. */
export interface EvalResponseMsg {
  result_json: string;
  parsed: string;
}

/** `BatchExecuteRequest` (addition). */
export interface BatchExecuteRequestMsg {
  name: string;
  inputs_json: string[];
  trace: boolean;
  /** `optional string now` (addition). */
  now?: string;
}

/** `BatchItemError` (addition). */
export interface BatchItemErrorMsg {
  error: string;
  code: string;
  status: number;
  /** INPUT_INVALID: JSON text of the item's `problems`; "" (or absent) otherwise. */
  problems_json?: string;
}

/** `BatchItem` (addition): exactly one of `result` and `error`. */
export type BatchItemMsg = { result: ExecuteResponseMsg } | { error: BatchItemErrorMsg };

/** `BatchSummary` (addition). */
export interface BatchSummaryMsg {
  total: number;
  success: number;
  failed: number;
  total_duration_us: Uint64;
}

/** `BatchExecuteResponse` (addition). */
export interface BatchExecuteResponseMsg {
  results: BatchItemMsg[];
  summary: BatchSummaryMsg;
}

// ------------------------------------------------------------ additions: every HTTP capability
// Requests of the RPCs of ./management.ts (responses are built there from the façade's answers).

/**
 * A request naming one ruleset (`DeleteRuleset`, `ListVersions`, `GetAnalysis`, `GetInputSchema`,
 * `DebugRuleset`, `GetShadow`, `DeleteShadow`, `PromoteShadow`).
 */
export interface NameRequestMsg {
  name: string;
}

/** `PutRulesetRequest`. */
export interface PutRulesetRequestMsg {
  ruleset_json: string;
  signature?: string;
  public_key?: string;
}

/** `RollbackRequest`. */
export interface RollbackRequestMsg {
  name: string;
  seq: number;
}

/** `FilterRequest`. */
export interface FilterRequestMsg {
  name: string;
  request_json: string;
}

/** `TestRulesetRequest`. */
export interface TestRulesetRequestMsg {
  name: string;
  tests_json: string;
}

/** `DiffRequest`. */
export interface DiffRequestMsg {
  name: string;
  from_json: string;
  to_json: string;
}

/** `ImpactRequest`. */
export interface ImpactRequestMsg {
  name: string;
  candidate_json: string;
  inputs_json: string[];
}

/** `DraftValidateRequest`. */
export interface DraftValidateRequestMsg {
  ruleset_json: string;
}

/** `DraftExecuteRequest`. */
export interface DraftExecuteRequestMsg {
  ruleset_json: string;
  input_json: string;
  trace: boolean;
  now?: string;
}

/** `DraftFilterRequest`. */
export interface DraftFilterRequestMsg {
  ruleset_json: string;
  request_json: string;
}

/** `DraftTestRequest`. */
export interface DraftTestRequestMsg {
  ruleset_json: string;
  tests_json: string;
}

/** `SetAuditSampleRateRequest`; `sample_rate` is absent unless the caller set it. */
export interface SetAuditSampleRateRequestMsg {
  sample_rate?: number;
}

/** `PutDataRequest`. */
export interface PutDataRequestMsg {
  name: string;
  data_json: string;
}

/** `CreateTenantRequest`. */
export interface CreateTenantRequestMsg {
  tenant_json: string;
}

/** `GetTenantRequest`, `DeleteTenantRequest`. */
export interface TenantIdRequestMsg {
  id: string;
}

/** `UpdateTenantRequest`. */
export interface UpdateTenantRequestMsg {
  id: string;
  tenant_json: string;
}

/** `PutShadowRequest`; `sample_rate` is absent unless the caller set it. */
export interface PutShadowRequestMsg {
  name: string;
  candidate_json: string;
  sample_rate?: number;
}
