/**
 * The contract of the `RuleService` façade (architecture guide, point 3): every operation of
 * the service, called by the HTTP and gRPC adapters (which only decode, call one method and
 * encode) and by the sync adapters. Every method throws `ServiceError` (./errors.ts) and nothing
 * else. Metrics, audit and tracing are attached inside the façade, once for all transports.
 */
import type { AnalysisWarning } from '../analysis/index.js';
import type { Behavior, ImpactReport, StructuralChange } from '../change/index.js';
import type { JsonValue } from '../expr/ast.js';
import type { FilterResponse } from '../filter/index.js';
import type { RulesetDoc } from '../ruleset/model.js';
import type { InputSchemaAnswer } from '../ruleset/schema-infer.js';
import type { ExecutionResult, Problem } from '../ruleset/result.js';
import type { TestReport } from '../ruleset/testing.js';
import type { VersionEntry } from '../store/types.js';

/** Who is calling: resolved by the transport before calling the façade. */
export interface CallContext {
  /** Tenant id from `X-Tenant-ID` / `x-tenant-id` metadata; `default` when absent. */
  readonly tenant: string;
  /** The caller's address, for audit events (`source_ip`). */
  readonly sourceIp: string | null;
  readonly transport: 'http' | 'grpc' | 'internal';
  /**
   * Who is calling, with authentication on: the key id or the JWT `sub` (audit `principal`).
   * Absent when authentication is off.
   */
  readonly principal?: string;
  /**
   * The request span's context, opaque to the façade (an OpenTelemetry `Context`). Set by a
   * transport only when tracing is on; executions become its children.
   */
  readonly traceContext?: unknown;
}

/** Signature carried in headers instead of the body (`X-Svc-Signature`, `X-Svc-Public-Key`). */
export interface HeaderSignature {
  readonly signature?: string;
  readonly publicKey?: string;
}

/** A list entry of `GET /rulesets`. */
export interface RulesetInfo {
  name: string;
  version: string;
  description: string | null;
}

/** Answer of `GET /api/v1/rulesets/:name/analysis` (EXTENSIONS.md 2 "Analysis"). */
export interface AnalysisResult {
  warnings: AnalysisWarning[];
}

/** Answer of `POST /rulesets`. */
export interface PutResult {
  status: 'created' | 'updated';
  name: string;
  /** Analysis warnings (EXTENSIONS.md 2); absent when there are none, so a clean answer stays SPEC's. */
  warnings?: unknown[];
}

/** One item of a batch answer: a result, or an error in place. */
export type BatchItem = ExecutionResult | { error: string; code: string; problems?: { path: string; message: string }[] };

/** Answer of the batch endpoint (DECISIONS.md 3). */
export interface BatchResult {
  results: BatchItem[];
  summary: { total: number; success: number; failed: number; total_duration_us: number };
}

/** Answer of `/eval`. */
export interface EvalResult {
  result: JsonValue;
  parsed: string;
}

/** Answer of the filter endpoint (SPEC.md "POST /rulesets/:name/filter"), as the filter builds it. */
export type FilterAnswer = FilterResponse;

/** Answer of the versions endpoint. */
export interface VersionsResult {
  name: string;
  current_version: string;
  versions: VersionEntry[];
}

/** Answer of rollback. */
export interface RollbackResult {
  status: 'rolled_back';
  name: string;
  from_version: string;
  to_version: string;
}

/** Answer of `POST /api/v1/draft/validate` (EXTENSIONS.md 4 "Drafts"): 200 even when invalid. */
export interface DraftValidation {
  valid: boolean;
  problems: Problem[];
  /** Analysis warnings (empty when the document is invalid: it is not analysed then). */
  warnings: AnalysisWarning[];
}

/** Answer of `POST /api/v1/rulesets/:name/diff` (EXTENSIONS.md 4 "Structural diff"). */
export interface DiffAnswer {
  changes: StructuralChange[];
  /** The behavioural diff; null while it is not wired (./change-service.ts `behavior`). */
  behavior: Behavior | null;
}

/** Answer of `POST /api/v1/rulesets/:name/impact` (EXTENSIONS.md 4 "Impact over inputs"). */
export type ImpactAnswer = ImpactReport;

/** Answer of `PUT /api/v1/rulesets/:name/shadow` (EXTENSIONS.md 4 "Shadow runs"). */
export interface ShadowPutResult {
  status: 'created' | 'updated';
  name: string;
  candidate_version: string;
  sample_rate: number;
  since: string;
  /** The candidate's analysis warnings; absent when there are none. */
  warnings?: unknown[];
}

/** Answer of `GET /api/v1/rulesets/:name/shadow`: what this instance counted (not the fleet). */
export interface ShadowAnswer {
  name: string;
  live_version: string;
  candidate_version: string;
  sample_rate: number;
  since: string;
  /** Always `"instance"`: each instance counts the traffic it serves. */
  counted_by: 'instance';
  executed: number;
  agreed: number;
  disagreed: number;
  errors: number;
  dropped: number;
  transitions: { from: string; to: string; count: number }[];
  examples: { input: unknown; from: string; to: string; at: string }[];
}

/** Answer of `POST /api/v1/rulesets/:name/shadow/promote`. */
export interface ShadowPromoteResult {
  status: 'promoted';
  name: string;
  from_version: string;
  to_version: string;
  warnings?: unknown[];
}

/** `/health` body (DECISIONS.md 3), plus `sync` when broker sync or the watcher is on. */
export interface HealthInfo {
  status: 'healthy' | 'unhealthy';
  version: string;
  uptime_seconds: number;
  role: 'standalone' | 'writer' | 'reader';
  storage: { mode: 'persistent' | 'memory'; rules_dir: string | null; rules_count: number };
  sync?: Record<string, unknown>;
  error?: string;
}

/** The façade. */
export interface RuleServiceApi {
  listRulesets(ctx: CallContext): RulesetInfo[];
  putRuleset(ctx: CallContext, body: unknown, headerSignature?: HeaderSignature): Promise<PutResult>;
  /** Shadow runs (EXTENSIONS.md 4): start or replace, read, promote, end. */
  putShadow(ctx: CallContext, name: string, body: unknown): Promise<ShadowPutResult>;
  getShadow(ctx: CallContext, name: string): ShadowAnswer;
  promoteShadow(ctx: CallContext, name: string): Promise<ShadowPromoteResult>;
  deleteShadow(ctx: CallContext, name: string): Promise<void>;
  getRuleset(ctx: CallContext, name: string): RulesetDoc;
  deleteRuleset(ctx: CallContext, name: string): Promise<void>;
  /** Synchronous: the hot path. `input` must be a JSON object. */
  execute(ctx: CallContext, name: string, input: unknown, trace: boolean): ExecutionResult;
  executeBatch(ctx: CallContext, name: string, inputs: unknown, trace: boolean): BatchResult;
  evaluate(ctx: CallContext, expression: unknown, context: unknown): EvalResult;
  /** Filter endpoint (SPEC.md "POST /rulesets/:name/filter"); `request` is the raw body. */
  filter(ctx: CallContext, name: string, request: unknown): FilterAnswer;
  versions(ctx: CallContext, name: string): Promise<VersionsResult>;
  /** EXTENSIONS.md 2 "Analysis": `{warnings}` of the stored version. */
  analysis(ctx: CallContext, name: string): AnalysisResult;
  /** Runs a ruleset's tests (stored, or `{tests}` from `body`) with coverage (EXTENSIONS.md 2 "Tests"). */
  testRuleset(ctx: CallContext, name: string, body: unknown): TestReport;
  rollback(ctx: CallContext, name: string, seq: unknown): Promise<RollbackResult>;
  getAuditSampleRate(ctx: CallContext): { sample_rate: number };
  setAuditSampleRate(ctx: CallContext, rate: unknown): { sample_rate: number; previous: number };
  /** `GET /rulesets/:name/schema` (EXTENSIONS.md 2): the input schema, or one inferred. */
  inputSchema(ctx: CallContext, name: string): InputSchemaAnswer;
  /** `POST /api/v1/draft/validate` `{ruleset}` (EXTENSIONS.md 4 "Drafts"). */
  draftValidate(ctx: CallContext, body: unknown): DraftValidation;
  /** `POST /api/v1/draft/execute`: the document run on `input`, as the stored execute answers. */
  draftExecute(ctx: CallContext, ruleset: unknown, input: unknown, trace: boolean): ExecutionResult;
  /** `POST /api/v1/draft/filter` `{ruleset, ...filter request}`. */
  draftFilter(ctx: CallContext, body: unknown): FilterAnswer;
  /** `POST /api/v1/draft/test` `{ruleset, tests?}`. */
  draftTest(ctx: CallContext, body: unknown): TestReport;
  /** `POST /api/v1/rulesets/:name/diff` `{from, to}`. */
  diff(ctx: CallContext, name: string, body: unknown): Promise<DiffAnswer>;
  /** `POST /api/v1/rulesets/:name/impact` `{candidate, inputs}`. */
  impact(ctx: CallContext, name: string, body: unknown): Promise<ImpactAnswer>;
  /**
   * Decision records (EXTENSIONS.md 4): present only with `--decision-log`. The id of the
   * execute or batch call that just returned, or null when it was not recorded; read it right
   * after that call (executions are synchronous).
   */
  readonly decisionId?: () => string | null;
  /** `/health` without checks (always answers). */
  health(): HealthInfo;
  /** Readiness: resolves to the health body, or throws NOT_READY whose details are the body. */
  ready(): Promise<HealthInfo>;
}

/**
 * The caller fields of an audit line: `source_ip`, and `principal` when authentication is on
 * (EXTENSIONS.md 1 "Audit").
 */
export function callerFields(ctx: CallContext): { source_ip: string | null; principal?: string } {
  return ctx.principal === undefined ? { source_ip: ctx.sourceIp } : { source_ip: ctx.sourceIp, principal: ctx.principal };
}
