/**
 * The façade's change tools (EXTENSIONS.md 4 "Judging a change before it is live"): drafts
 * (validate, execute, filter and test a document without storing it), the structural diff
 * (and the behavioural diff's seam) and impact over inputs. The façade (./rule-service.ts)
 * delegates here; the pure parts are in src/change/.
 *
 * Nothing here stores, audits or records metrics: a draft is compiled on each call (its cost
 * is bounded by the request body limit) and dropped with the answer. A draft's `log` actions
 * are not written to the server log.
 */
import { analyzeRuleset } from '../analysis/index.js';
import { impact as impactOver, ImpactStopped, structuralDiff, type BehaviorFn } from '../change/index.js';
import { setDataSnapshot, type BudgetLimits, type DataSnapshot } from '../expr/index.js';
import { generateFilter, parseFilterRequest } from '../filter/index.js';
import { compileRuleset, execute, type CompiledRuleset, type ExecuteOptions } from '../ruleset/index.js';
import { RulesetValidationError, type ExecutionResult, type Problem } from '../ruleset/result.js';
import type { TestReport, TestRunOptions } from '../ruleset/testing.js';
import type { RuleHistory, RuleRecord } from '../store/types.js';
import { ServiceError, toServiceError } from './errors.js';
import { fromFilterError } from './filter-errors.js';
import { assertCallsAcyclic } from './call-graph.js';
import { needsData } from './needs-data.js';
import { checkInput, checkKnownInput } from './input-check.js';
import { isPlainObject } from './json-object.js';
import { requestedTests, testReport } from './ruleset-tests.js';
import type { TenancyPort } from './tenancy-port.js';
import type { CallContext, DiffAnswer, DraftValidation, FilterAnswer, ImpactAnswer } from './types.js';

/** Settings and collaborators of the change tools (slices of the façade's). */
export interface ChangeServiceDeps {
  readonly executionTimeoutMs: number;
  readonly maxSteps: number;
  readonly budget: BudgetLimits;
  /** The impact run stops at this many ms (`--request-timeout-secs` in ms); 0: no limit. */
  readonly requestTimeoutMs: number;
  /** At most this many inputs in an impact request (`--max-batch-size`), and tests in a draft test. */
  readonly maxBatchSize: number;
  /** Monotonic clock in fractional milliseconds. */
  readonly clock: () => number;
  readonly tenancy: TenancyPort | null;
  /** The stored record of a ruleset in the caller's tenant (tenant checked, `cost` rate-limit tokens taken); 404 when absent. */
  readonly record: (ctx: CallContext, name: string, cost?: number) => RuleRecord;
  /** The store's version history; absent in memory-only mode. */
  readonly history: () => RuleHistory | undefined;
  /** Reference data of a tenant (`@name`); absent: none. */
  readonly data?: (tenant: string) => DataSnapshot;
  /**
   * The behavioural diff (EXTENSIONS.md 4 "Behavioural diff"); absent: a diff answers
   * `behavior: null`. NOTE: the seam the lead wires to src/change/behavior.ts.
   */
  readonly behavior?: BehaviorFn;
  /** Call steps (EXTENSIONS.md 3): the current version of a tenant's ruleset by name. */
  readonly callee?: (tenant: string, name: string) => CompiledRuleset | undefined;
}

/** Drafts, diff and impact. */
export class ChangeService {
  private readonly execPlain: ExecuteOptions;
  private readonly execTraced: ExecuteOptions;

  constructor(private readonly deps: ChangeServiceDeps) {
    // NOTE: built once; a draft's `log` actions are dropped (no `log` sink).
    this.execPlain = Object.freeze({ trace: false, clock: deps.clock, timeoutMs: deps.executionTimeoutMs, maxSteps: deps.maxSteps, budget: deps.budget });
    this.execTraced = Object.freeze({ ...this.execPlain, trace: true });
  }

  // ---------------------------------------------------------------- drafts

  /**
   * `POST /api/v1/draft/validate`: whether a create would accept the document (its tests
   * aside: those run in `draftTest`), every problem, and the analysis warnings. With
   * `config.strict: true` the warnings are problems too, as on create.
   */
  draftValidate(ctx: CallContext, body: unknown): DraftValidation {
    this.admit(ctx, 0);
    const doc = rulesetOf(body);
    let compiled: CompiledRuleset;
    try {
      compiled = compileRuleset(doc);
    } catch (err) {
      if (err instanceof RulesetValidationError) return { valid: false, problems: err.problems, warnings: [] };
      throw toServiceError(err);
    }
    // A call cycle among the tenant's rulesets is a problem, as on create (./call-graph.ts).
    try {
      assertCallsAcyclic(compiled, (n) => this.deps.callee?.(ctx.tenant, n));
    } catch (err) {
      const problems = (err as ServiceError).details?.['problems'];
      if (Array.isArray(problems)) return { valid: false, problems: problems as Problem[], warnings: [] };
      throw err;
    }
    const warnings = [...analyzeRuleset(compiled)];
    if (compiled.doc.config.strict === true && warnings.length > 0) {
      return { valid: false, problems: warnings.map((w) => ({ path: w.path, message: `${w.code}: ${w.message}` })), warnings };
    }
    return { valid: true, problems: [], warnings };
  }

  /** `POST /api/v1/draft/execute`: the document executed on `input`, as the stored execute answers. */
  draftExecute(ctx: CallContext, ruleset: unknown, input: unknown, trace: boolean): ExecutionResult {
    this.admit(ctx, 1);
    const compiled = compileDraft(ruleset);
    if (!isPlainObject(input)) throw new ServiceError('BAD_REQUEST', 'input must be a JSON object');
    if (compiled.inputSchema !== null) checkInput(compiled.inputSchema, input);
    this.dataFor(ctx, compiled);
    try {
      return execute(compiled, input, this.options(ctx, trace ? this.execTraced : this.execPlain));
    } catch (err) {
      throw toServiceError(err);
    }
  }

  /** `POST /api/v1/draft/filter` `{ruleset, ...filter request}`: the filter of the document. */
  draftFilter(ctx: CallContext, body: unknown): FilterAnswer {
    this.admit(ctx, 1);
    const compiled = compileDraft(rulesetOf(body));
    try {
      const parsed = parseFilterRequest(body);
      checkKnownInput(compiled.inputSchema, parsed.known_input);
      this.dataFor(ctx, compiled);
      const callee = this.deps.callee;
      return generateFilter(compiled, parsed, callee === undefined ? undefined : (n) => callee(ctx.tenant, n));
    } catch (err) {
      throw fromFilterError(err);
    }
  }

  /**
   * `POST /api/v1/draft/test` `{ruleset, tests?}`: the document's own tests (or `tests`, run
   * against it), with coverage: the answer of `POST /api/v1/rulesets/:name/test`.
   */
  draftTest(ctx: CallContext, body: unknown): TestReport {
    this.admit(ctx, 0);
    const b = objectBody(body, 'a JSON object with "ruleset" (and optionally "tests")');
    for (const key of Object.keys(b)) {
      if (key !== 'ruleset' && key !== 'tests') throw new ServiceError('BAD_REQUEST', `unknown key '${key}' in the request body (only "ruleset" and "tests")`);
    }
    const compiled = compileDraft(rulesetOf(b));
    const tests = requestedTests(compiled, b['tests'] === undefined ? undefined : { tests: b['tests'] }, this.deps.maxBatchSize);
    this.admit(ctx, tests.length);
    this.dataFor(ctx, compiled);
    return testReport(compiled, tests, this.testOptions(ctx));
  }

  // ---------------------------------------------------------------- diff and impact

  /** `POST /api/v1/rulesets/:name/diff` `{from, to}`: the structural changes, and `behavior` when the seam is wired. */
  async diff(ctx: CallContext, name: string, body: unknown): Promise<DiffAnswer> {
    const rec = this.deps.record(ctx, name);
    const b = objectBody(body, 'a JSON object with "from" and "to"');
    const from = await this.side(ctx, rec, b['from'], 'from');
    const to = await this.side(ctx, rec, b['to'], 'to');
    const changes = structuralDiff(from.doc, to.doc);
    const behavior = this.deps.behavior;
    if (behavior === undefined) return { changes, behavior: null };
    // Reference data is folded like known input when either version reads it (or may, through a call).
    const data = needsData(from) || needsData(to) ? (this.deps.data?.(ctx.tenant) ?? null) : null;
    const callee = this.deps.callee;
    const calls = callee === undefined ? undefined : (n: string) => callee(ctx.tenant, n);
    return { changes, behavior: behavior(from, to, { ...(data === null ? {} : { data }), ...(calls ? { calls } : {}) }) };
  }

  /**
   * `POST /api/v1/rulesets/:name/impact` `{candidate, inputs}`: every input on the stored
   * version and on the candidate (a document, or `{seq}` of the history), counted by
   * transition. One rate-limit token per input, as a batch. The run stops at the request
   * timeout (500 TIMEOUT) and once its executions together spent `--max-eval-ops` (500
   * LIMIT_EXCEEDED): no partial answer.
   */
  async impact(ctx: CallContext, name: string, body: unknown): Promise<ImpactAnswer> {
    const rec = this.deps.record(ctx, name);
    const b = objectBody(body, 'a JSON object with "candidate" and "inputs"');
    const inputs = b['inputs'];
    if (inputs === undefined) throw new ServiceError('BAD_REQUEST', 'inputs is required');
    if (!Array.isArray(inputs)) throw new ServiceError('BAD_REQUEST', 'inputs must be an array of JSON objects');
    if (inputs.length === 0) throw new ServiceError('BAD_REQUEST', 'inputs must not be empty');
    if (inputs.length > this.deps.maxBatchSize) {
      throw new ServiceError('BAD_REQUEST', `inputs has ${inputs.length} items; the limit is ${this.deps.maxBatchSize} (--max-batch-size)`);
    }
    for (let i = 0; i < inputs.length; i++) {
      if (!isPlainObject(inputs[i])) throw new ServiceError('BAD_REQUEST', `inputs[${i}] must be a JSON object`);
    }
    const raw = b['candidate'];
    if (raw === undefined) throw new ServiceError('BAD_REQUEST', 'candidate is required (a ruleset document, or {"seq": N})');
    if (!isPlainObject(raw)) throw new ServiceError('BAD_REQUEST', 'candidate must be a ruleset document or {"seq": N}');
    const candidate = isSeqRef(raw) ? await this.stored(ctx, rec, raw['seq']) : compileDraft(raw, 'candidate');
    this.admit(ctx, inputs.length);
    if (needsData(rec.compiled) || needsData(candidate)) setDataSnapshot(this.deps.data?.(ctx.tenant) ?? null);
    const started = this.deps.clock();
    const timeoutMs = this.deps.requestTimeoutMs;
    try {
      return impactOver(rec.compiled, candidate, inputs, this.options(ctx, this.execPlain), {
        deadline: timeoutMs > 0 ? started + timeoutMs : Infinity,
        maxOps: this.deps.budget.maxEvalOps,
      });
    } catch (err) {
      if (!(err instanceof ImpactStopped)) throw toServiceError(err);
      if (err.reason === 'deadline') {
        throw new ServiceError(
          'TIMEOUT',
          `impact stopped at the request timeout of ${timeoutMs} ms (--request-timeout-secs) after ${err.done} of ${inputs.length} inputs`,
          {
            timeout_ms: timeoutMs,
          },
        );
      }
      throw new ServiceError(
        'LIMIT_EXCEEDED',
        `impact stopped: its executions used the work budget of ${this.deps.budget.maxEvalOps} operations (--max-eval-ops) after ${err.done} of ${inputs.length} inputs`,
      );
    }
  }

  // ---------------------------------------------------------------- internals

  /** One side of a diff: a seq of the history, `"current"`, or a document. */
  private async side(ctx: CallContext, rec: RuleRecord, value: unknown, which: 'from' | 'to'): Promise<CompiledRuleset> {
    if (value === undefined) throw new ServiceError('BAD_REQUEST', `${which} is required (a version seq, "current", or a ruleset document)`);
    if (value === 'current') return rec.compiled;
    if (typeof value === 'number') return this.stored(ctx, rec, value);
    if (isPlainObject(value)) return compileDraft(value, which);
    throw new ServiceError('BAD_REQUEST', `${which} must be a version seq (a positive integer), "current", or a ruleset document`);
  }

  /** Version `seq` of the record's history, compiled; 404 when there is none. */
  private async stored(ctx: CallContext, rec: RuleRecord, seq: unknown): Promise<CompiledRuleset> {
    const history = this.deps.history();
    if (!history) throw new ServiceError('BAD_REQUEST', 'version history is not available in memory-only mode (start the server with --rules-dir)');
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) throw new ServiceError('BAD_REQUEST', 'seq must be a positive integer');
    const doc = await history.readVersion(ctx.tenant, rec.name, seq);
    if (!doc) throw new ServiceError('NOT_FOUND', `version ${seq} of ruleset '${rec.name}' not found`);
    try {
      return compileRuleset(doc);
    } catch (err) {
      throw new ServiceError('INTERNAL_ERROR', `stored version ${seq} of ruleset '${rec.name}' does not compile: ${(err as Error).message}`);
    }
  }

  private admit(ctx: CallContext, cost: number): void {
    if (this.deps.tenancy !== null) this.deps.tenancy.admit(ctx.tenant, cost);
  }

  /** `@name` reads the tenant's datasets (./data-service.ts), only for documents that read some. */
  private dataFor(ctx: CallContext, compiled: CompiledRuleset): void {
    if (needsData(compiled)) setDataSnapshot(this.deps.data?.(ctx.tenant) ?? null);
  }

  /** `base`, or the tenant's copy with its `execution_timeout_ms`; call steps resolve in the caller's tenant. */
  private options(ctx: CallContext, base: ExecuteOptions): ExecuteOptions {
    const o = this.deps.tenancy === null ? base : this.deps.tenancy.executeOptions(ctx.tenant, base);
    const callee = this.deps.callee;
    return callee === undefined ? o : { ...o, calls: (name: string) => callee(ctx.tenant, name) };
  }

  private testOptions(ctx: CallContext): TestRunOptions {
    const o = this.options(ctx, this.execPlain);
    return { clock: o.clock, timeoutMs: o.timeoutMs, maxSteps: o.maxSteps, budget: this.deps.budget, ...(o.calls ? { calls: o.calls } : {}) };
  }
}

/**
 * Validates and compiles a draft document (its `_signature` ignored: nothing is stored, so
 * nothing is verified); 400 with `problems` as a create answers. `which` names the side of a
 * diff or the impact's candidate in the message.
 */
export function compileDraft(doc: unknown, which?: string): CompiledRuleset {
  try {
    return compileRuleset(doc);
  } catch (err) {
    if (err instanceof RulesetValidationError) {
      throw new ServiceError('BAD_REQUEST', `invalid ruleset${which === undefined ? '' : ` (${which})`}: ${err.message}`, { problems: err.problems });
    }
    throw toServiceError(err);
  }
}

/** `body.ruleset`, required. */
function rulesetOf(body: unknown): unknown {
  const b = objectBody(body, 'a JSON object with "ruleset" (a ruleset document)');
  if (b['ruleset'] === undefined) throw new ServiceError('BAD_REQUEST', 'ruleset is required (a ruleset document)');
  return b['ruleset'];
}

/** `{seq: N}` (an impact candidate taken from the history). */
function isSeqRef(v: Record<string, unknown>): boolean {
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === 'seq';
}

function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw new ServiceError('BAD_REQUEST', `request body must be ${what}`);
  return body;
}
