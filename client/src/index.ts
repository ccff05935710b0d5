/**
 * svc-client: a typed client of the svc HTTP API. One method per route (see ./endpoints.ts),
 * typed answers (./types.ts), typed errors (./errors.ts), retries on 429 and 503 (./http.ts).
 * No runtime dependencies: it uses the global `fetch` (or the one given).
 */
import { ENDPOINTS, endpointPath, type EndpointId } from './endpoints.js';
import { DEFAULT_RETRY, retrySettings, send, type Answer, type AnswerKind, type CallOptions, type RetryOptions, type TransportSettings } from './http.js';
import type {
  AnalysisResult,
  AuditSampleRate,
  AuditSampleRateChange,
  BatchResult,
  DataInfo,
  DataPutResult,
  DebugRuleset,
  DiffResult,
  DiffSide,
  DraftValidation,
  EvalResult,
  ExecuteResult,
  ExecutionResult,
  FilterRequest,
  FilterResult,
  HealthInfo,
  OpenApiDocument,
  ImpactCandidate,
  ImpactResult,
  InputSchemaResult,
  JsonObject,
  JsonValue,
  LiveInfo,
  PutRulesetResult,
  RollbackResult,
  RulesetDocument,
  RulesetInfo,
  RulesetTest,
  ShadowPromoteResult,
  ShadowPutResult,
  ShadowState,
  Tenant,
  TenantInput,
  TestReport,
  VersionsResult,
} from './types.js';

export { ENDPOINTS, endpointPath, type EndpointId } from './endpoints.js';
export {
  SvcError,
  SvcRequestError,
  UNEXPECTED_ANSWER,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetails,
  type RequestFailure,
  type TestFailure,
} from './errors.js';
export { DEFAULT_RETRY, type CallOptions, type RetryOptions } from './http.js';
export type * from './types.js';

/** Options of `new SvcClient(...)`. */
export interface ClientOptions {
  /** The server's base URL, e.g. `http://localhost:8080` (a path prefix is kept). */
  baseUrl: string | URL;
  /** An API key (`svck_...`), sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A JWT, or a function giving the current one (called before every attempt), sent as `Authorization: Bearer <token>`. */
  token?: string | (() => string | Promise<string>);
  /** The tenant of every call (`X-Tenant-Id`), unless a call says otherwise; absent: none (the server's `default`). */
  tenant?: string;
  /** Deadline of each call in ms, retries included (default 30000); 0: none. */
  timeoutMs?: number;
  /** Retries on 429 and 503 (defaults: `DEFAULT_RETRY`), or false: never retry. */
  retry?: RetryOptions | false;
  /** Headers sent with every request (e.g. a proxy's). */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** Options of `putRuleset`: a detached signature (instead of the document's `_signature`). */
export interface PutRulesetOptions extends CallOptions {
  /** Base64 Ed25519 signature (`X-Svc-Signature`). */
  signature?: string;
  /** Base64 public key (`X-Svc-Public-Key`). */
  publicKey?: string;
}

/** Options of `execute` and `executeBatch`. */
export interface ExecuteOptions extends CallOptions {
  /** Return the steps taken. */
  trace?: boolean;
}

/** Options of `draftExecute`. */
export interface DraftExecuteOptions extends ExecuteOptions {
  /** The time `now()` reads (ISO 8601). */
  now?: string;
}

/** A client of one svc server. Methods resolve to the answer's body, or throw `SvcError` / `SvcRequestError`. */
export class SvcClient {
  private readonly settings: TransportSettings;

  constructor(options: ClientOptions) {
    if (options.apiKey !== undefined && options.token !== undefined) throw new TypeError('svc-client: give apiKey or token, not both');
    const baseUrl = String(options.baseUrl).replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(baseUrl)) throw new TypeError(`svc-client: baseUrl must be an http or https URL`);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('svc-client: no global fetch; pass the fetch option');
    const { apiKey, token } = options;
    const authorization =
      apiKey !== undefined
        ? () => `Bearer ${apiKey}`
        : typeof token === 'function'
          ? async () => `Bearer ${await token()}`
          : token !== undefined
            ? () => `Bearer ${token}`
            : () => undefined;
    this.settings = {
      baseUrl,
      fetch: (input, init) => fetchImpl(input, init),
      authorization,
      tenant: options.tenant ?? null,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: retrySettings(options.retry ?? DEFAULT_RETRY),
      headers: { ...options.headers },
      random: Math.random,
    };
  }

  // ------------------------------------------------------------------ rulesets

  /** `GET /api/v1/rulesets`: the rulesets of the tenant. */
  listRulesets(options?: CallOptions): Promise<RulesetInfo[]> {
    return this.json('listRulesets', undefined, undefined, true, options);
  }

  /** `POST /api/v1/rulesets`: creates or updates a ruleset (a new version). Not retried on 503. */
  putRuleset(document: RulesetDocument, options: PutRulesetOptions = {}): Promise<PutRulesetResult> {
    const headers: Record<string, string> = {};
    if (options.signature !== undefined) headers['x-svc-signature'] = options.signature;
    if (options.publicKey !== undefined) headers['x-svc-public-key'] = options.publicKey;
    return this.call('putRuleset', undefined, document, false, 'json', options, headers).then((a) => a.value as PutRulesetResult);
  }

  /** `GET /api/v1/rulesets/:name`: the current document. */
  getRuleset(name: string, options?: CallOptions): Promise<RulesetDocument> {
    return this.json('getRuleset', name, undefined, true, options);
  }

  /** `DELETE /api/v1/rulesets/:name`. */
  async deleteRuleset(name: string, options?: CallOptions): Promise<void> {
    await this.call('deleteRuleset', name, undefined, true, 'empty', options);
  }

  /** `GET /api/v1/rulesets/:name/versions`: the current version and the earlier ones. */
  listVersions(name: string, options?: CallOptions): Promise<VersionsResult> {
    return this.json('listVersions', name, undefined, true, options);
  }

  /** `GET /api/v1/rulesets/:name/analysis`: the analysis warnings of the current version. */
  getAnalysis(name: string, options?: CallOptions): Promise<AnalysisResult> {
    return this.json('getAnalysis', name, undefined, true, options);
  }

  /** `POST /api/v1/rulesets/:name/rollback`: makes version `seq` current again (a new version). Not retried on 503. */
  rollback(name: string, seq: number, options?: CallOptions): Promise<RollbackResult> {
    return this.json('rollback', name, { seq }, false, options);
  }

  /** `GET /api/v1/rulesets/:name/schema`: the input schema, or one inferred from the paths read. */
  getInputSchema(name: string, options?: CallOptions): Promise<InputSchemaResult> {
    return this.json('getInputSchema', name, undefined, true, options);
  }

  /** `GET /api/v1/debug/rulesets/:name` (servers started with `--debug-mode`): the compiled view. */
  debugRuleset(name: string, options?: CallOptions): Promise<DebugRuleset> {
    return this.json('debugRuleset', name, undefined, true, options);
  }

  // ------------------------------------------------------------------ execution

  /** `POST /api/v1/execute/:name`: runs the ruleset on `input`; `decisionId` when the server recorded it. */
  async execute(name: string, input: JsonObject, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const answer = await this.call('execute', name, withTrace({ input }, options.trace), true, 'json', options);
    return withDecisionId(answer.value as ExecutionResult, answer);
  }

  /** `POST /api/v1/execute/:name/batch`: one execution per input; failed items hold their error. */
  async executeBatch(name: string, inputs: JsonObject[], options: ExecuteOptions = {}): Promise<BatchResult> {
    const answer = await this.call('executeBatch', name, withTrace({ inputs }, options.trace), true, 'json', options);
    return withDecisionId(answer.value as BatchResult, answer);
  }

  /** `POST /api/v1/eval`: evaluates an expression on `context`. */
  evaluate(expression: string, context?: JsonObject, options?: CallOptions): Promise<EvalResult> {
    return this.json('eval', undefined, context === undefined ? { expression } : { expression, context }, true, options);
  }

  /** `POST /api/v1/rulesets/:name/filter`: a query filter of the inputs that yield the target codes. */
  filter(name: string, request: FilterRequest, options?: CallOptions): Promise<FilterResult> {
    return this.json('filter', name, request, true, options);
  }

  /** `POST /api/v1/rulesets/:name/test`: runs the stored tests, or `tests`, with coverage. */
  testRuleset(name: string, tests?: RulesetTest[], options?: CallOptions): Promise<TestReport> {
    return this.json('testRuleset', name, tests === undefined ? {} : { tests }, true, options);
  }

  // ------------------------------------------------------------------ changes

  /** `POST /api/v1/rulesets/:name/diff`: structural and behavioural diff of two versions or documents. */
  diff(name: string, from: DiffSide, to: DiffSide, options?: CallOptions): Promise<DiffResult> {
    return this.json('diffRuleset', name, { from, to }, true, options);
  }

  /** `POST /api/v1/rulesets/:name/impact`: how the outcomes of `inputs` change with `candidate`. */
  impact(name: string, candidate: ImpactCandidate, inputs: JsonObject[], options?: CallOptions): Promise<ImpactResult> {
    return this.json('impact', name, { candidate, inputs }, true, options);
  }

  /** `POST /api/v1/draft/validate`: problems and warnings of a document (not stored). */
  draftValidate(ruleset: RulesetDocument | JsonObject, options?: CallOptions): Promise<DraftValidation> {
    return this.json('draftValidate', undefined, { ruleset }, true, options);
  }

  /** `POST /api/v1/draft/execute`: runs a document (not stored) on `input`. */
  draftExecute(ruleset: RulesetDocument, input: JsonObject, options: DraftExecuteOptions = {}): Promise<ExecutionResult> {
    const body: Record<string, unknown> = withTrace({ ruleset, input }, options.trace);
    if (options.now !== undefined) body['now'] = options.now;
    return this.json('draftExecute', undefined, body, true, options);
  }

  /** `POST /api/v1/draft/filter`: the filter of a document (not stored). */
  draftFilter(ruleset: RulesetDocument, request: FilterRequest, options?: CallOptions): Promise<FilterResult> {
    return this.json('draftFilter', undefined, { ...request, ruleset }, true, options);
  }

  /** `POST /api/v1/draft/test`: runs a document's tests, or `tests`, with coverage (not stored). */
  draftTest(ruleset: RulesetDocument, tests?: RulesetTest[], options?: CallOptions): Promise<TestReport> {
    return this.json('draftTest', undefined, tests === undefined ? { ruleset } : { ruleset, tests }, true, options);
  }

  // ------------------------------------------------------------------ shadow runs

  /** `PUT /api/v1/rulesets/:name/shadow`: starts (or replaces) a shadow run of `candidate`. */
  putShadow(name: string, candidate: RulesetDocument, sampleRate: number, options?: CallOptions): Promise<ShadowPutResult> {
    return this.json('putShadow', name, { candidate, sample_rate: sampleRate }, true, options);
  }

  /** `GET /api/v1/rulesets/:name/shadow`: the shadow run and the answering instance's counts. */
  getShadow(name: string, options?: CallOptions): Promise<ShadowState> {
    return this.json('getShadow', name, undefined, true, options);
  }

  /** `POST /api/v1/rulesets/:name/shadow/promote`: makes the candidate live. Not retried on 503. */
  promoteShadow(name: string, options?: CallOptions): Promise<ShadowPromoteResult> {
    return this.json('promoteShadow', name, {}, false, options);
  }

  /** `DELETE /api/v1/rulesets/:name/shadow`: ends the shadow run. */
  async deleteShadow(name: string, options?: CallOptions): Promise<void> {
    await this.call('deleteShadow', name, undefined, true, 'empty', options);
  }

  // ------------------------------------------------------------------ reference data

  /** `GET /api/v1/data`: the datasets of the tenant. */
  listData(options?: CallOptions): Promise<DataInfo[]> {
    return this.json('listData', undefined, undefined, true, options);
  }

  /** `GET /api/v1/data/:name`: the dataset. */
  getData<T extends JsonValue = JsonValue>(name: string, options?: CallOptions): Promise<T> {
    return this.json('getData', name, undefined, true, options);
  }

  /** `PUT /api/v1/data/:name`: creates or replaces a dataset. */
  putData(name: string, value: JsonValue, options?: CallOptions): Promise<DataPutResult> {
    return this.json('putData', name, value, true, options);
  }

  /** `DELETE /api/v1/data/:name`. */
  async deleteData(name: string, options?: CallOptions): Promise<void> {
    await this.call('deleteData', name, undefined, true, 'empty', options);
  }

  // ------------------------------------------------------------------ tenants (multi-tenancy)

  /** `GET /api/v1/tenants`: every tenant record. */
  listTenants(options?: CallOptions): Promise<Tenant[]> {
    return this.json('listTenants', undefined, undefined, true, options);
  }

  /** `POST /api/v1/tenants`: creates a tenant (409 CONFLICT when it exists). Not retried on 503. */
  createTenant(record: TenantInput & { id: string }, options?: CallOptions): Promise<Tenant> {
    return this.json('createTenant', undefined, record, false, options);
  }

  /** `GET /api/v1/tenants/:id`. */
  getTenant(id: string, options?: CallOptions): Promise<Tenant> {
    return this.json('getTenant', id, undefined, true, options);
  }

  /** `PUT /api/v1/tenants/:id`: replaces the whole record (omitted fields take their defaults). */
  updateTenant(id: string, record: TenantInput, options?: CallOptions): Promise<Tenant> {
    return this.json('updateTenant', id, record, true, options);
  }

  /** `DELETE /api/v1/tenants/:id` (409 CONFLICT while it owns rulesets). */
  async deleteTenant(id: string, options?: CallOptions): Promise<void> {
    await this.call('deleteTenant', id, undefined, true, 'empty', options);
  }

  // ------------------------------------------------------------------ server

  /** `GET /api/v1/config/audit-sample-rate`. */
  getAuditSampleRate(options?: CallOptions): Promise<AuditSampleRate> {
    return this.json('getAuditSampleRate', undefined, undefined, true, options);
  }

  /** `PUT /api/v1/config/audit-sample-rate`: percent of executions audited (0-100). */
  setAuditSampleRate(sampleRate: number, options?: CallOptions): Promise<AuditSampleRateChange> {
    return this.json('setAuditSampleRate', undefined, { sample_rate: sampleRate }, true, options);
  }

  /** `GET /health`. Unhealthy: throws `SvcError` NOT_READY (503) whose `body` is the health body. Not retried by default. */
  health(options?: CallOptions): Promise<HealthInfo> {
    return this.call('health', undefined, undefined, true, 'json', options, undefined, false).then((a) => a.value as HealthInfo);
  }

  /** `GET /healthz/live`. Not retried by default. */
  live(options?: CallOptions): Promise<LiveInfo> {
    return this.call('live', undefined, undefined, true, 'json', options, undefined, false).then((a) => a.value as LiveInfo);
  }

  /** `GET /healthz/ready`: as `health`. Not retried by default. */
  ready(options?: CallOptions): Promise<HealthInfo> {
    return this.call('ready', undefined, undefined, true, 'json', options, undefined, false).then((a) => a.value as HealthInfo);
  }

  /** `GET /metrics`: the Prometheus text. */
  async metrics(options?: CallOptions): Promise<string> {
    const answer = await this.call('metrics', undefined, undefined, true, 'text', { ...options, headers: { accept: 'text/plain', ...options?.headers } });
    return answer.value as string;
  }

  /**
   * `GET /api/v1/openapi.json`: the server's OpenAPI 3.1 document (open, like `/health`). Typed
   * loosely: it is meant for tools (generators, gateways), not for reading field by field.
   */
  openapi(options?: CallOptions): Promise<OpenApiDocument> {
    return this.json('openapi', undefined, undefined, true, options);
  }

  // ------------------------------------------------------------------ plumbing

  private async json<T>(id: EndpointId, param: string | undefined, body: unknown, idempotent: boolean, options: CallOptions | undefined): Promise<T> {
    return (await this.call(id, param, body, idempotent, 'json', options)).value as T;
  }

  private call(
    id: EndpointId,
    param: string | undefined,
    body: unknown,
    idempotent: boolean,
    answer: AnswerKind,
    options: CallOptions | undefined,
    headers?: Record<string, string>,
    retry?: false,
  ): Promise<Answer> {
    const path = endpointPath(id, param);
    const call = {
      method: ENDPOINTS[id].method,
      path,
      body,
      idempotent,
      answer,
      ...(headers === undefined ? {} : { headers }),
      ...(retry === undefined ? {} : { retry }),
    };
    return send(this.settings, call, options);
  }
}

function withTrace<T extends Record<string, unknown>>(body: T, trace: boolean | undefined): T & { trace?: boolean } {
  return trace === undefined ? body : { ...body, trace };
}

function withDecisionId<T extends object>(value: T, answer: Answer): T & { decisionId?: string } {
  const id = answer.headers.get('x-svc-decision-id');
  return id === null ? value : Object.assign(value, { decisionId: id });
}
