/**
 * The `RuleService` façade (architecture guide, point 3): the one entry point of every
 * operation. Transports decode, call one method and encode; the sync adapters read one
 * `snapshot()`, consume one change stream (`subscribe`) and apply through `applyChange`. Metrics and audit are recorded here, once for every transport.
 */
import {
  BudgetError,
  DEFAULT_BUDGET,
  ExprRuntimeError,
  ExprSyntaxError,
  armBudget,
  beginNow,
  cachedEvaluator,
  disarmBudget,
  setDataSnapshot,
  type BudgetLimits,
  type DataSnapshot,
} from '../expr/index.js';
import { generateFilter, parseFilterRequest } from '../filter/index.js';
import { compileRuleset, inputSchemaAnswer, type InputSchemaAnswer } from '../ruleset/index.js';
import type { CompiledRuleset } from '../ruleset/compile.js';
import { isValidRulesetName, type RulesetDoc, type SignatureBlock } from '../ruleset/model.js';
import { RulesetValidationError, type ExecutionResult } from '../ruleset/result.js';
import type { TestReport, TestRunOptions } from '../ruleset/testing.js';
import { canonicalJson, checkSignature, decodeRuleFile, type SignaturePolicy } from '../signing/index.js';
import type { ApplyOutcome, Change, ChangeListener, IncomingChange, SnapshotEntry } from '../store/change.js';
import type { PrepareFile, RuleFiles, RuleRecord, RuleStore, WriteOptions } from '../store/types.js';
import { behaviouralDiff, type BehaviorFn } from '../change/index.js';
import { analysisGate, analysisOf } from './analysis-gate.js';
import { assertCallsAcyclic } from './call-graph.js';
import { needsData } from './needs-data.js';
import { ChangeService } from './change-service.js';
import { debugView, type DebugRuleset } from './debug-view.js';
import { ServiceError, toServiceError } from './errors.js';
import { ExecutionRunner } from './execution-runner.js';
import { DecisionRecorder, type DecisionRecorderOptions } from './decision-recorder.js';
import type { DataRecord } from '../store/data-record.js';
import type { ShadowRecord } from '../store/shadow-record.js';
import { StaleRead, type FileToken } from '../store/own-files.js';
import { ShadowStore } from '../store/shadow-store.js';
import type { DataSyncPort } from './data-service.js';
import { checkKnownInput } from './input-check.js';
import { fromFilterError } from './filter-errors.js';
import { isPlainObject, stripSignature, truncate } from './json-object.js';
import { ShadowService } from './shadow-service.js';
import { assertOwnTestsPass, requestedTests, testReport } from './ruleset-tests.js';
import type { ServiceAudit, ServiceMetrics, ServiceSampler, ServiceTracer } from './ports.js';
import { RoleGuard, type Role } from './role-guard.js';
import type { TenancyPort, TenantSyncPort } from './tenancy-port.js';
import type {
  AnalysisResult,
  BatchResult,
  CallContext,
  DiffAnswer,
  DraftValidation,
  EvalResult,
  FilterAnswer,
  HeaderSignature,
  HealthInfo,
  ImpactAnswer,
  PutResult,
  ShadowAnswer,
  ShadowPromoteResult,
  ShadowPutResult,
  RollbackResult,
  RuleServiceApi,
  RulesetInfo,
  VersionsResult,
} from './types.js';
import { callerFields } from './types.js';
import type { Logger } from '../log.js';

/** `/eval` keeps compiled expressions (pure, shared by every façade): parse and compile once. */
const evaluateExpression = cachedEvaluator();

/** Settings of the façade (a slice of the server config). */
export interface RuleServiceOptions {
  readonly version: string;
  readonly role: Role;
  readonly writerAddr: string | null;
  /** Default execution timeout (ms, 0 disables); a ruleset's `config.timeout_ms` wins. */
  readonly executionTimeoutMs: number;
  readonly maxSteps: number;
  /** Work budget of one execution or `/eval` (`--max-eval-ops`, `--max-value-bytes`). Default: the flags' defaults. */
  readonly budget?: BudgetLimits;
  /** A batch stops at this many ms (`--request-timeout-secs` in ms); 0 or absent: no limit. */
  readonly requestTimeoutMs?: number;
  readonly maxBatchSize: number;
  readonly signature: SignaturePolicy;
  /** Readiness: how long the store read lock may take. */
  readonly readyLockTimeoutMs?: number;
}

/** Collaborators of the façade. */
export interface RuleServiceDeps {
  readonly store: RuleStore;
  readonly metrics: ServiceMetrics;
  readonly audit: ServiceAudit;
  readonly sampler: ServiceSampler;
  readonly logger: Logger;
  /** Monotonic clock in fractional milliseconds (performance.now). */
  readonly clock: () => number;
  /** Wall clock in milliseconds since the epoch (Date.now). */
  readonly now: () => number;
  /** Extra health fields (sync state), when sync is on. */
  readonly syncStatus?: () => Record<string, unknown>;
  /** Execution spans (`--otlp-endpoint`); absent: executions take the untraced path. */
  readonly tracer?: ServiceTracer;
  /** Multi-tenancy (`--multi-tenancy-enabled`, docs/tenancy.md); absent: everything is tenant `default`. */
  readonly tenancy?: TenancyPort;
  /** The tenants collection for sync (multi-tenancy); absent: snapshot and changes hold rulesets only. */
  readonly tenantSync?: TenantSyncPort;
  /** Reference data (EXTENSIONS.md 3, ./data-service.ts): the datasets `@name` reads; absent: none. */
  readonly data?: (tenant: string) => DataSnapshot;
  /** The datasets collection for sync (docs/data-sync.md); absent: snapshot and changes hold no dataset. */
  readonly dataSync?: DataSyncPort;
  /** The behavioural diff (EXTENSIONS.md 4, ./change-service.ts); absent: a diff answers `behavior: null`. */
  readonly behavior?: BehaviorFn;
  /** Shadow runs (EXTENSIONS.md 4): their store; absent: one in the rule store's rules dir (memory only without one). */
  readonly shadowStore?: ShadowStore;
  /** Decision records (`--decision-log`, EXTENSIONS.md 4, ./decision-recorder.ts); absent: off. */
  readonly decisions?: DecisionRecorderOptions;
}

export type { ApplyOutcome } from '../store/change.js';

/** Origin of a change applied by a sync adapter. */
type SyncOrigin = 'sync' | 'watch';

/** The façade. */
export class RuleService implements RuleServiceApi {
  private readonly guard: RoleGuard;
  private readonly startedAt: number;
  /** Executions (engine call, metrics, sampled audit, spans): ./execution-runner.ts. */
  private readonly runner: ExecutionRunner;
  /** Drafts, diff and impact (EXTENSIONS.md 4): ./change-service.ts. */
  private readonly changes: ChangeService;
  private syncStatusFn: (() => Record<string, unknown>) | undefined;
  /** Null without multi-tenancy: every tenant check is then this one field test. */
  private readonly tenancy: TenancyPort | null;
  /** Shadow runs (EXTENSIONS.md 4): ./shadow-service.ts (the live ones are `runner.shadows`). */
  private readonly shadows: ShadowService;
  /**
   * With `--decision-log`: the decision id of the execute or batch call that just returned (null
   * when it was not recorded). Transports read it right after the call (`X-Svc-Decision-Id`,
   * gRPC trailer `svc-decision-id`). Absent when the log is off.
   */
  readonly decisionId?: () => string | null;

  constructor(
    readonly options: RuleServiceOptions,
    private readonly deps: RuleServiceDeps,
  ) {
    this.guard = new RoleGuard(options.role, options.writerAddr);
    this.startedAt = deps.now();
    this.syncStatusFn = deps.syncStatus;
    this.tenancy = deps.tenancy ?? null;
    const files = deps.store.files;
    const shadowStore =
      deps.shadowStore ?? new ShadowStore(files ? { rulesDir: files.rulesDir, own: files.own, logger: deps.logger } : { rulesDir: null, logger: deps.logger });
    const recordShadow = deps.metrics.recordShadow?.bind(deps.metrics);
    const decisions = deps.decisions ? new DecisionRecorder(deps.decisions) : undefined;
    if (decisions) this.decisionId = () => decisions.last;
    this.runner = new ExecutionRunner({
      executionTimeoutMs: options.executionTimeoutMs,
      maxSteps: options.maxSteps,
      budget: options.budget ?? DEFAULT_BUDGET,
      requestTimeoutMs: options.requestTimeoutMs ?? 0,
      metrics: deps.metrics,
      audit: deps.audit,
      sampler: deps.sampler,
      logger: deps.logger,
      clock: deps.clock,
      tenancy: this.tenancy,
      ...(deps.tracer ? { tracer: deps.tracer } : {}),
      ...(deps.data ? { data: deps.data } : {}),
      callee: (tenant, name) => deps.store.get(tenant, name)?.compiled,
      now: deps.now,
      ...(recordShadow ? { recordShadow } : {}),
      ...(decisions ? { decisions } : {}),
    });
    this.changes = new ChangeService({
      executionTimeoutMs: options.executionTimeoutMs,
      maxSteps: options.maxSteps,
      budget: options.budget ?? DEFAULT_BUDGET,
      requestTimeoutMs: options.requestTimeoutMs ?? 0,
      maxBatchSize: options.maxBatchSize,
      clock: deps.clock,
      tenancy: this.tenancy,
      record: (ctx, name, cost) => this.record(ctx, name, cost),
      history: () => deps.store.history,
      ...(deps.data ? { data: deps.data } : {}),
      // The behavioural diff (../change/behavior.ts) unless the deps bring another.
      behavior: deps.behavior ?? behaviouralDiff,
      callee: (tenant, name) => deps.store.get(tenant, name)?.compiled,
    });
    this.shadows = new ShadowService({
      store: shadowStore,
      live: this.runner.shadows,
      guard: this.guard,
      signature: options.signature,
      logger: deps.logger,
      now: deps.now,
      ...(deps.data ? { data: deps.data } : {}),
      record: (ctx, name) => this.record(ctx, name),
      current: (tenant, name) => deps.store.get(tenant, name),
      compile: (tenant, doc) => this.compileRecord(tenant, doc).compiled,
      callees: (tenant) => this.callees(tenant),
      testRunOptions: (tenant) => this.testRunOptions(tenant),
      putRuleset: (ctx, doc) => this.putRuleset(ctx, doc),
      persist: (write) => this.persist(write),
      audit: (ctx, event, fields) => this.auditRule(ctx, event, fields),
    });
  }

  /** Installs the provider of the `sync` block of `/health`. */
  setSyncStatus(fn: () => Record<string, unknown>): void {
    this.syncStatusFn = fn;
  }

  // ---------------------------------------------------------------- reads

  listRulesets(ctx: CallContext): RulesetInfo[] {
    if (this.tenancy !== null) this.tenancy.admit(ctx.tenant, 0);
    return this.deps.store.list(ctx.tenant).map((r) => ({
      name: r.name,
      version: r.version,
      description: r.compiled.description,
    }));
  }

  getRuleset(ctx: CallContext, name: string): RulesetDoc {
    return this.record(ctx, name).doc;
  }

  /** EXTENSIONS.md 2 "Analysis": the warnings of the stored version. */
  analysis(ctx: CallContext, name: string): AnalysisResult {
    return analysisOf(this.record(ctx, name).compiled);
  }

  async versions(ctx: CallContext, name: string): Promise<VersionsResult> {
    const rec = this.record(ctx, name);
    const history = this.deps.store.history;
    const versions = history ? await history.versions(ctx.tenant, name) : [];
    return { name, current_version: rec.version, versions };
  }

  // ---------------------------------------------------------------- writes

  async putRuleset(ctx: CallContext, body: unknown, headerSignature?: HeaderSignature): Promise<PutResult> {
    this.guard.assertWritable();
    if (this.tenancy !== null) this.tenancy.admit(ctx.tenant, 0);
    if (!isPlainObject(body)) throw new ServiceError('BAD_REQUEST', 'request body must be a JSON object (a ruleset)');
    const verdict = checkSignature(body, 'api', this.options.signature, headerSignature);
    if (!verdict.ok) {
      if (verdict.status === 400) throw new ServiceError('BAD_REQUEST', verdict.message);
      throw new ServiceError('FORBIDDEN', 'Forbidden', { message: verdict.message });
    }
    const record = this.compileRecord(ctx.tenant, body, headerBlock(headerSignature));
    // EXTENSIONS.md 3: a call step must not close a call cycle among the tenant's rulesets.
    assertCallsAcyclic(record.compiled, this.callees(ctx.tenant));
    // EXTENSIONS.md 2 "Analysis": the warnings of the answer, or 400 with config.strict.
    const analysis = analysisGate(record.compiled);
    // EXTENSIONS.md 2 "Tests": the document's own tests run on the new content before anything is stored.
    if (needsData(record.compiled)) setDataSnapshot(this.deps.data?.(ctx.tenant) ?? null); // `@name` (./data-service.ts)
    assertOwnTestsPass(record.compiled, this.testRunOptions(ctx.tenant));
    // Tenant max_rulesets: creating one more is refused; updating an existing one is not. Checked
    // by the store under its write lock, so creates in flight together cannot overshoot it.
    const tenancy = this.tenancy;
    const options: WriteOptions = tenancy === null ? { origin: 'api' } : { origin: 'api', beforeCreate: (held) => tenancy.assertCanCreate(ctx.tenant, held) };
    const outcome = await this.persist(() => this.deps.store.put(record, options));
    if (outcome.created) {
      this.auditRule(ctx, 'rule_created', { rule_name: record.name, version: record.version, ...callerFields(ctx) });
    } else {
      this.auditRule(ctx, 'rule_updated', {
        rule_name: record.name,
        from_version: outcome.previous?.version ?? null,
        to_version: record.version,
        ...callerFields(ctx),
      });
    }
    return { status: outcome.created ? 'created' : 'updated', name: record.name, ...analysis };
  }

  async deleteRuleset(ctx: CallContext, name: string): Promise<void> {
    this.guard.assertWritable();
    this.record(ctx, name);
    const removed = await this.persist(() => this.deps.store.delete(ctx.tenant, name, { origin: 'api' }));
    if (!removed) throw notFound(name);
    this.deps.metrics.forgetRuleset(name, ctx.tenant);
    this.auditRule(ctx, 'rule_deleted', { rule_name: name, ...callerFields(ctx) });
    // A shadow of a deleted ruleset has nothing left to shadow: it ends too.
    await this.shadows.endIfAny(ctx, name, 'ruleset_deleted');
  }

  async rollback(ctx: CallContext, name: string, seq: unknown): Promise<RollbackResult> {
    this.guard.assertWritable();
    const current = this.record(ctx, name);
    const history = this.deps.store.history;
    if (!history) {
      throw new ServiceError('BAD_REQUEST', 'version rollback is not available in memory-only mode (start the server with --rules-dir)');
    }
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) {
      throw new ServiceError('BAD_REQUEST', 'seq must be a positive integer');
    }
    const doc = await history.readVersion(ctx.tenant, name, seq);
    if (!doc) throw new ServiceError('NOT_FOUND', `version ${seq} of ruleset '${name}' not found`);
    const record = this.compileRecord(ctx.tenant, doc);
    if (record.name !== name) throw new ServiceError('INTERNAL_ERROR', `stored version ${seq} names another ruleset`);
    assertCallsAcyclic(record.compiled, this.callees(ctx.tenant));
    await this.persist(() => this.deps.store.put(record, { origin: 'api' }));
    this.auditRule(ctx, 'rule_rollback', {
      rule_name: name,
      from_version: current.version,
      to_version: record.version,
      seq,
      ...callerFields(ctx),
    });
    return { status: 'rolled_back', name, from_version: current.version, to_version: record.version };
  }

  // ---------------------------------------------------------------- shadow runs (EXTENSIONS.md 4): ./shadow-service.ts

  putShadow(ctx: CallContext, name: string, body: unknown): Promise<ShadowPutResult> {
    return this.shadows.put(ctx, name, body);
  }

  getShadow(ctx: CallContext, name: string): ShadowAnswer {
    return this.shadows.get(ctx, name);
  }

  promoteShadow(ctx: CallContext, name: string): Promise<ShadowPromoteResult> {
    return this.shadows.promote(ctx, name);
  }

  deleteShadow(ctx: CallContext, name: string): Promise<void> {
    return this.shadows.delete(ctx, name);
  }

  /** Installs the shadows read from the rules dir at start (see `ShadowService.load`). */
  loadShadows(records: readonly ShadowRecord[]): number {
    return this.shadows.load(records);
  }

  // ---------------------------------------------------------------- execution

  execute(ctx: CallContext, name: string, input: unknown, trace: boolean): ExecutionResult {
    const rec = this.record(ctx, name, 1);
    if (!isPlainObject(input)) throw new ServiceError('BAD_REQUEST', 'input must be a JSON object');
    return this.runner.run(ctx, rec, input, trace);
  }

  executeBatch(ctx: CallContext, name: string, inputs: unknown, trace: boolean): BatchResult {
    const rec = this.record(ctx, name);
    if (!Array.isArray(inputs)) throw new ServiceError('BAD_REQUEST', 'inputs must be an array of JSON objects');
    if (inputs.length === 0) throw new ServiceError('BAD_REQUEST', 'inputs must not be empty');
    if (inputs.length > this.options.maxBatchSize) {
      throw new ServiceError('BAD_REQUEST', `inputs has ${inputs.length} items; the limit is ${this.options.maxBatchSize} (--max-batch-size)`);
    }
    // NOTE (docs/tenancy.md): a batch costs one rate-limit token per input.
    if (this.tenancy !== null) this.tenancy.admit(ctx.tenant, inputs.length);
    return this.runner.batch(ctx, rec, inputs, trace);
  }

  evaluate(ctx: CallContext, expression: unknown, context: unknown): EvalResult {
    if (this.tenancy !== null) this.tenancy.admit(ctx.tenant, 1);
    if (typeof expression !== 'string') throw new ServiceError('BAD_REQUEST', 'expression must be a string');
    if (context !== undefined && context !== null && !isPlainObject(context)) {
      throw new ServiceError('BAD_REQUEST', 'context must be a JSON object');
    }
    const clock = this.deps.clock;
    const started = clock();
    // NOTE (work budget, docs/decisions.md "/eval budget"): /eval runs under the same budget as
    // one execution, with the default execution timeout (--execution-timeout-ms) as deadline.
    armBudget(this.options.budget ?? DEFAULT_BUDGET, clock, started, this.options.executionTimeoutMs);
    beginNow(); // now(): the request's "now", else the clock read once (expr/dates.ts)
    setDataSnapshot(this.deps.data?.(ctx.tenant) ?? null); // `@name` reads the tenant's datasets (./data-service.ts)
    try {
      const out = evaluateExpression(expression, context ?? {});
      disarmBudget();
      this.deps.metrics.recordEval((clock() - started) / 1000, true);
      return out;
    } catch (err) {
      disarmBudget();
      this.deps.metrics.recordEval((clock() - started) / 1000, false);
      throw this.evalError(err);
    }
  }

  /** The catalog error of a failed `/eval` (DECISIONS.md 2: the caller's expression is a 400). */
  private evalError(err: unknown): ServiceError {
    if (err instanceof ExprSyntaxError) {
      return new ServiceError('BAD_REQUEST', `parse error: ${err.message}`, { position: err.position });
    }
    if (err instanceof ExprRuntimeError) return new ServiceError('BAD_REQUEST', `evaluation error: ${err.message}`);
    if (err instanceof BudgetError) {
      if (err.kind === 'deadline') return new ServiceError('TIMEOUT', err.message, { timeout_ms: err.timeoutMs });
      return new ServiceError('LIMIT_EXCEEDED', `evaluation error: ${err.message}`, undefined, { eval: true });
    }
    return toServiceError(err);
  }

  /**
   * The debug view of a ruleset (`--debug-mode`, `GET /api/v1/debug/rulesets/:name`): every
   * condition, action value and output expression as written and as a rendered syntax tree.
   */
  debugRuleset(ctx: CallContext, name: string): DebugRuleset {
    return debugView(this.record(ctx, name).compiled);
  }

  /** The filter of the stored compiled ruleset; filter errors mapped into the catalog (./filter-errors.ts). */
  filter(ctx: CallContext, name: string, request: unknown): FilterAnswer {
    const rec = this.record(ctx, name, 1);
    try {
      const parsed = parseFilterRequest(request);
      // Input schema (EXTENSIONS.md 2): the fields given in known_input are validated.
      checkKnownInput(rec.compiled.inputSchema, parsed.known_input);
      // Reference data: the filter reads `@name` as known values (filter/partial-eval.ts).
      if (needsData(rec.compiled)) setDataSnapshot(this.deps.data?.(ctx.tenant) ?? null);
      // Call steps (EXTENSIONS.md 3): callees are expanded with the tenant's current versions.
      return generateFilter(rec.compiled, parsed, this.callees(ctx.tenant));
    } catch (err) {
      throw fromFilterError(err);
    }
  }

  /** The input schema of a ruleset, or one inferred from the paths it reads (EXTENSIONS.md 2, ../ruleset/schema-infer.ts). */
  inputSchema(ctx: CallContext, name: string): InputSchemaAnswer {
    return inputSchemaAnswer(this.record(ctx, name).compiled);
  }

  /**
   * `POST /api/v1/rulesets/:name/test` (EXTENSIONS.md 2 "Tests"): runs the stored version's
   * tests, or the body's `tests` against it, traced; results and coverage. One rate-limit token
   * per test, as a batch takes one per input.
   */
  testRuleset(ctx: CallContext, name: string, body: unknown): TestReport {
    const rec = this.record(ctx, name);
    const tests = requestedTests(rec.compiled, body, this.options.maxBatchSize);
    if (this.tenancy !== null) this.tenancy.admit(ctx.tenant, tests.length);
    if (needsData(rec.compiled)) setDataSnapshot(this.deps.data?.(ctx.tenant) ?? null); // `@name` (./data-service.ts)
    return testReport(rec.compiled, tests, this.testRunOptions(ctx.tenant));
  }

  /** Execution settings of test runs: the server's timeout, step limit, budget and clock; calls resolve in `tenant`. */
  private testRunOptions(tenant: string): TestRunOptions {
    return {
      clock: this.deps.clock,
      timeoutMs: this.options.executionTimeoutMs,
      maxSteps: this.options.maxSteps,
      budget: this.options.budget ?? DEFAULT_BUDGET,
      calls: this.callees(tenant),
    };
  }

  /** The current versions of `tenant`'s rulesets by name: what call steps run (EXTENSIONS.md 3). */
  private callees(tenant: string): (name: string) => CompiledRuleset | undefined {
    const store = this.deps.store;
    return (name) => store.get(tenant, name)?.compiled;
  }

  // ---------------------------------------------------------------- changes (EXTENSIONS.md 4)

  draftValidate(ctx: CallContext, body: unknown): DraftValidation {
    return this.changes.draftValidate(ctx, body);
  }

  draftExecute(ctx: CallContext, ruleset: unknown, input: unknown, trace: boolean): ExecutionResult {
    return this.changes.draftExecute(ctx, ruleset, input, trace);
  }

  draftFilter(ctx: CallContext, body: unknown): FilterAnswer {
    return this.changes.draftFilter(ctx, body);
  }

  draftTest(ctx: CallContext, body: unknown): TestReport {
    return this.changes.draftTest(ctx, body);
  }

  diff(ctx: CallContext, name: string, body: unknown): Promise<DiffAnswer> {
    return this.changes.diff(ctx, name, body);
  }

  impact(ctx: CallContext, name: string, body: unknown): Promise<ImpactAnswer> {
    return this.changes.impact(ctx, name, body);
  }

  // ---------------------------------------------------------------- config

  getAuditSampleRate(_ctx: CallContext): { sample_rate: number } {
    return { sample_rate: this.deps.sampler.rate };
  }

  setAuditSampleRate(ctx: CallContext, rate: unknown): { sample_rate: number; previous: number } {
    this.guard.assertWritable();
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 100) {
      throw new ServiceError('BAD_REQUEST', 'sample_rate must be a number from 0 to 100');
    }
    const previous = this.deps.sampler.rate;
    this.deps.sampler.rate = rate;
    this.deps.audit.write('sample_rate_changed', { from_rate: previous, to_rate: rate, ...callerFields(ctx) });
    return { sample_rate: rate, previous };
  }

  // ---------------------------------------------------------------- health

  health(): HealthInfo {
    const store = this.deps.store;
    const info: HealthInfo = {
      status: 'healthy',
      version: this.options.version,
      uptime_seconds: Math.floor((this.deps.now() - this.startedAt) / 1000),
      role: this.options.role,
      storage: { mode: store.files ? 'persistent' : 'memory', rules_dir: store.rulesDir, rules_count: store.count() },
    };
    if (this.syncStatusFn) info.sync = this.syncStatusFn();
    return info;
  }

  async ready(): Promise<HealthInfo> {
    const info = this.health();
    try {
      await this.deps.store.probe(this.options.readyLockTimeoutMs ?? 2000);
      return info;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new ServiceError('NOT_READY', `not ready: ${message}`, { ...info, status: 'unhealthy' });
    }
  }

  // ---------------------------------------------------------------- sync and loading

  /** Turns a rule file into a record (decode, signature policy for local files, compile). */
  readonly prepareFile: PrepareFile = (file) => {
    const doc = decodeRuleFile(file.path, file.bytes);
    const verdict = checkSignature(doc, 'local', this.options.signature);
    if (!verdict.ok) throw new Error(verdict.message);
    return this.compileRecord(file.tenant, doc);
  };

  /** The store's reconcile-from-disk capability (the watcher), absent without a rules dir. */
  get files(): RuleFiles | undefined {
    return this.deps.store.files;
  }

  /** True when the store writes to disk (a sync adapter may persist what it applies). */
  get persistent(): boolean {
    return this.deps.store.files !== undefined;
  }

  /** True when tenants are synchronized (multi-tenancy): the snapshot and the stream hold them. */
  get syncsTenants(): boolean {
    return this.deps.tenantSync !== undefined;
  }

  /** True when datasets are synchronized (reference data is wired): the snapshot and the stream hold them. */
  get syncsData(): boolean {
    return this.deps.dataSync !== undefined;
  }

  /** The stored record of `(tenant, name)`, with no tenant check (sync adapters). */
  current(tenant: string, name: string): RuleRecord | undefined {
    return this.deps.store.get(tenant, name);
  }

  /** The stored shadow of `(tenant, name)`, with no tenant check (sync adapters). */
  currentShadow(tenant: string, name: string): ShadowRecord | undefined {
    return this.shadows.current(tenant, name);
  }

  /** The stored dataset `(tenant, name)`, with no tenant check (sync adapters). */
  currentData(tenant: string, name: string): DataRecord | undefined {
    return this.deps.dataSync?.current(tenant, name);
  }

  /**
   * Everything this instance holds, as puts: tenants first (sorted by id), then datasets by
   * tenant and name (so a reader holds them before the rulesets that read them), then rulesets
   * by tenant and name.
   */
  snapshot(): SnapshotEntry[] {
    const out: SnapshotEntry[] = [];
    for (const record of this.deps.tenantSync?.records() ?? []) out.push({ kind: 'tenant.put', record });
    for (const record of this.deps.dataSync?.records() ?? []) out.push({ kind: 'data.put', record });
    const store = this.deps.store;
    for (const tenant of store.tenants()) for (const record of store.list(tenant)) out.push({ kind: 'ruleset.put', record });
    for (const record of this.shadows.all()) out.push({ kind: 'shadow.put', record });
    return out;
  }

  /** The one change stream: the rule store's changes, (multi-tenancy) the tenants' and the datasets'. */
  subscribe(listener: ChangeListener<Change>): () => void {
    const offRules = this.deps.store.subscribe(listener);
    const offTenants = this.deps.tenantSync?.subscribe(listener);
    const offData = this.deps.dataSync?.subscribe(listener);
    const offShadows = this.shadows.subscribe(listener);
    return () => {
      offShadows();
      offRules();
      offTenants?.();
      offData?.();
    };
  }

  /**
   * Applies a change that came from the broker or the watcher. A ruleset is skipped
   * ('unchanged') when the local copy has the same version label and the same content
   * (DECISIONS.md 7); an invalid ruleset document is logged and 'rejected'. `persist`: write it
   * to the rules dir too (a reader with its own dir). `expect` (the watcher): the token taken
   * before the file the change comes from was read; 'stale' (nothing changed) when this
   * instance's own change of that file has landed since: read the file again.
   */
  async applyChange(change: IncomingChange, origin: SyncOrigin, persist: boolean, expect?: FileToken): Promise<ApplyOutcome> {
    try {
      return await this.applyIncoming(change, origin, persist, expect);
    } catch (err) {
      if (err instanceof StaleRead) return 'stale';
      throw err;
    }
  }

  private async applyIncoming(change: IncomingChange, origin: SyncOrigin, persist: boolean, expect: FileToken | undefined): Promise<ApplyOutcome> {
    switch (change.kind) {
      case 'ruleset.put': {
        // A synchronized rule is verified exactly as a local rule file (EXTENSIONS.md 1); one that
        // fails is logged and not applied, so the version already held keeps serving.
        const verdict = checkSignature(change.doc, 'local', this.options.signature);
        if (!verdict.ok) {
          const name = rulesetNameOf(change.doc);
          this.deps.logger.warn(
            { tenant: change.tenant, name, origin, reason: verdict.message },
            'synchronized rule skipped; the loaded version keeps serving',
          );
          return 'rejected';
        }
        let record: RuleRecord;
        try {
          record = this.compileRecord(change.tenant, change.doc);
        } catch (err) {
          this.deps.logger.warn({ tenant: change.tenant, origin, err: errorMessage(err) }, 'rejected a synchronized ruleset');
          return 'rejected';
        }
        return this.applyRecord(record, origin, persist, expect);
      }
      case 'ruleset.file':
        return this.applyRecord(change.record, origin, persist, expect);
      case 'ruleset.delete': {
        if (!this.deps.store.get(change.tenant, change.name)) return 'unchanged';
        const removed = await this.deps.store.delete(change.tenant, change.name, expect ? { origin, persist, expect } : { origin, persist });
        if (removed) this.deps.metrics.forgetRuleset(change.name, change.tenant);
        return 'applied';
      }
      case 'tenant.put':
      case 'tenant.delete':
        return this.deps.tenantSync ? this.deps.tenantSync.apply(change, persist) : 'unchanged';
      case 'data.put':
      case 'data.delete':
        return this.deps.dataSync ? this.deps.dataSync.applySync(change, origin, persist, expect) : 'unchanged';
      case 'shadow.put':
      case 'shadow.delete':
        return this.shadows.applySync(change, origin, persist, expect);
      default:
        return assertNever(change);
    }
  }

  // ---------------------------------------------------------------- internals

  /** The record of `name` in the caller's tenant (tenant checked first; `cost` rate-limit tokens taken). */
  private record(ctx: CallContext, name: string, cost = 0): RuleRecord {
    if (this.tenancy !== null) this.tenancy.admit(ctx.tenant, cost);
    const rec = this.deps.store.get(ctx.tenant, name);
    if (rec) return rec;
    if (!isValidRulesetName(name)) {
      throw new ServiceError('BAD_REQUEST', `invalid ruleset name '${truncate(name)}': use 1-128 of A-Z a-z 0-9 _ - . not starting with '.'`);
    }
    throw notFound(name);
  }

  /**
   * Validates and compiles a document (without `_signature`) into a record; 400 on problems.
   * The record keeps `headerSignature` (the X-Svc-* pair, which is THE signature when sent:
   * a body `_signature` is then ignored), else the body's `_signature` block.
   */
  private compileRecord(tenant: string, body: unknown, headerSignature?: SignatureBlock): RuleRecord {
    const doc = stripSignature(body);
    const signature = headerSignature ?? signatureOf(body);
    const started = this.deps.clock();
    let compiled: CompiledRuleset;
    try {
      compiled = compileRuleset(doc);
    } catch (err) {
      if (err instanceof RulesetValidationError) {
        throw new ServiceError('BAD_REQUEST', `invalid ruleset: ${err.message}`, { problems: err.problems });
      }
      throw toServiceError(err);
    }
    this.deps.metrics.observeCompilation(compiled.name, (this.deps.clock() - started) / 1000, tenant);
    // NOTE (speed, bench/NOTES.md "Eighth session"): the two fields every execution reads first,
    // so that a record fetched from memory serves them from its first cache line.
    const record: RuleRecord = { compiled, runState: undefined, tenant, name: compiled.name, version: compiled.version, doc: compiled.doc };
    return signature ? { ...record, signature } : record;
  }

  /** Writes a rule audit event; in multi-tenancy mode it names the tenant (`tenant_id`). */
  private auditRule(ctx: CallContext, event: string, fields: Record<string, unknown>): void {
    if (this.tenancy !== null) fields['tenant_id'] = ctx.tenant;
    this.deps.audit.write(event, fields);
  }

  /** Puts a synchronized record unless the local copy has the same version label and content. */
  private async applyRecord(record: RuleRecord, origin: SyncOrigin, persist: boolean, expect: FileToken | undefined): Promise<ApplyOutcome> {
    const local = this.deps.store.get(record.tenant, record.name);
    if (local && local.version === record.version && canonicalJson(local.doc) === canonicalJson(record.doc)) {
      return 'unchanged';
    }
    await this.deps.store.put(record, expect ? { origin, persist, expect } : { origin, persist });
    return 'applied';
  }

  /** Runs a store write; a storage failure becomes a 500 that says what failed. */
  private async persist<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      this.deps.logger.error({ err: errorMessage(err) }, 'store write failed');
      throw new ServiceError('INTERNAL_ERROR', `storage write failed: ${errorMessage(err)}`);
    }
  }
}

function notFound(name: string): ServiceError {
  return new ServiceError('NOT_FOUND', `ruleset '${name}' not found`);
}

/** `config.name` of a document, when it is a string (for log lines about a document not compiled). */
function rulesetNameOf(doc: unknown): string | null {
  const config = isPlainObject(doc) ? doc['config'] : undefined;
  const name = isPlainObject(config) ? config['name'] : undefined;
  return typeof name === 'string' ? name : null;
}

/** The `_signature` block of a body, when it is an object. */
function signatureOf(body: unknown): SignatureBlock | undefined {
  if (!isPlainObject(body)) return undefined;
  const sig = body['_signature'];
  return isPlainObject(sig) ? (sig as unknown as SignatureBlock) : undefined;
}

/** A signature block built from the `X-Svc-*` headers, when both are present. */
function headerBlock(h: HeaderSignature | undefined): SignatureBlock | undefined {
  if (!h?.signature || !h.publicKey) return undefined;
  return { algorithm: 'ed25519', public_key: h.publicKey, signature: h.signature };
}

function assertNever(value: never): never {
  throw new Error(`unknown change kind: ${JSON.stringify(value)}`);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
