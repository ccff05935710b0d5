/**
 * The façade's shadow runs (EXTENSIONS.md 4 "Shadow runs", docs/changing-rules.md): a candidate
 * version of a ruleset that runs on a share of its live executions after their answers are
 * written, stored next to the rules (../store/shadow-store.ts), synchronized like them, promoted
 * through the normal update or ended. The façade (./rule-service.ts) delegates here; the live
 * shadows and their counts are the execution runner's (./shadow-registry.ts).
 */
import { setDataSnapshot, type DataSnapshot } from '../expr/index.js';
import { compileRuleset, type CompiledRuleset } from '../ruleset/index.js';
import type { TestRunOptions } from '../ruleset/testing.js';
import { checkSignature, type SignaturePolicy } from '../signing/index.js';
import type { ApplyOutcome, ChangeListener, IncomingChange, ShadowChange } from '../store/change.js';
import type { FileToken } from '../store/own-files.js';
import { isSampleRate, parseShadowValue, shadowRecord, type ShadowRecord } from '../store/shadow-record.js';
import type { ShadowStore } from '../store/shadow-store.js';
import type { RuleRecord } from '../store/types.js';
import { isValidRulesetName } from '../ruleset/model.js';
import { analysisGate } from './analysis-gate.js';
import { assertCallsAcyclic } from './call-graph.js';
import { ServiceError } from './errors.js';
import { isPlainObject, stripSignature, truncate } from './json-object.js';
import { needsData } from './needs-data.js';
import type { RoleGuard } from './role-guard.js';
import { assertOwnTestsPass } from './ruleset-tests.js';
import type { ShadowRegistry } from './shadow-registry.js';
import { callerFields, type CallContext, type PutResult, type ShadowAnswer, type ShadowPromoteResult, type ShadowPutResult } from './types.js';
import type { Logger } from '../log.js';

/** Why a shadow ended (its audit line's `reason`). */
export type ShadowEnd = 'deleted' | 'promoted' | 'ruleset_deleted';

/** Collaborators of the shadow runs (slices of the façade's). */
export interface ShadowServiceDeps {
  /** The stored shadows. */
  readonly store: ShadowStore;
  /** The live shadows (the execution runner's). */
  readonly live: ShadowRegistry;
  readonly guard: RoleGuard;
  readonly signature: SignaturePolicy;
  readonly logger: Logger;
  /** Wall clock in milliseconds since the epoch (a shadow's `since`). */
  readonly now: () => number;
  /** Reference data of a tenant (`@name`), for the candidate's own tests; absent: none. */
  readonly data?: (tenant: string) => DataSnapshot;
  /** The stored record of a ruleset in the caller's tenant (tenant checked); 404 when absent. */
  readonly record: (ctx: CallContext, name: string) => RuleRecord;
  /** The stored record of `(tenant, name)`, with no tenant check. */
  readonly current: (tenant: string, name: string) => RuleRecord | undefined;
  /** Validates and compiles a document as a create does; 400 on problems. */
  readonly compile: (tenant: string, doc: unknown) => CompiledRuleset;
  /** The tenant's rulesets by name (call steps). */
  readonly callees: (tenant: string) => (name: string) => CompiledRuleset | undefined;
  /** The options a ruleset's own tests run with in the tenant. */
  readonly testRunOptions: (tenant: string) => TestRunOptions;
  /** The normal update (`putRuleset`): what a promote goes through. */
  readonly putRuleset: (ctx: CallContext, doc: unknown) => Promise<PutResult>;
  /** Runs a store write; a storage failure becomes a 500 that says what failed. */
  readonly persist: <T>(write: () => Promise<T>) => Promise<T>;
  /** Writes a rule audit event (tenant added in multi-tenancy). */
  readonly audit: (ctx: CallContext, event: string, fields: Record<string, unknown>) => void;
}

/** Shadow runs: the API's four routes, the start-up load and the sync adapter's changes. */
export class ShadowService {
  constructor(private readonly deps: ShadowServiceDeps) {}

  /**
   * `PUT /api/v1/rulesets/:name/shadow` `{candidate, sample_rate}`: the candidate is checked as a
   * create checks a document (signature policy, compile, call cycles, analysis gate, its own
   * tests) but not stored as the live version; it then runs on about `sample_rate` percent of the
   * ruleset's live executions, after their answers are written. Replacing a shadow resets its counters.
   */
  async put(ctx: CallContext, name: string, body: unknown): Promise<ShadowPutResult> {
    const { deps } = this;
    deps.guard.assertWritable();
    deps.record(ctx, name);
    if (!isPlainObject(body)) throw new ServiceError('BAD_REQUEST', 'request body must be a JSON object {"candidate": <ruleset>, "sample_rate": <percent>}');
    for (const key of Object.keys(body)) {
      if (key !== 'candidate' && key !== 'sample_rate')
        throw new ServiceError('BAD_REQUEST', `unknown key '${key}' in the request body (only "candidate" and "sample_rate")`);
    }
    const candidate = body['candidate'];
    const rate = body['sample_rate'];
    if (!isPlainObject(candidate)) throw new ServiceError('BAD_REQUEST', 'candidate must be a ruleset document');
    if (!isSampleRate(rate)) throw new ServiceError('BAD_REQUEST', 'sample_rate must be a number above 0 and at most 100 (percent of the live executions)');
    const verdict = checkSignature(candidate, 'api', deps.signature);
    if (!verdict.ok) {
      if (verdict.status === 400) throw new ServiceError('BAD_REQUEST', verdict.message);
      throw new ServiceError('FORBIDDEN', 'Forbidden', { message: verdict.message });
    }
    const compiled = deps.compile(ctx.tenant, candidate);
    if (compiled.name !== name) {
      throw new ServiceError('BAD_REQUEST', `invalid candidate: config.name is '${truncate(compiled.name)}'; a shadow of '${name}' must keep its name`, {
        problems: [{ path: 'config.name', message: `must be '${name}'` }],
      });
    }
    assertCallsAcyclic(compiled, deps.callees(ctx.tenant));
    const analysis = analysisGate(compiled);
    if (needsData(compiled)) setDataSnapshot(deps.data?.(ctx.tenant) ?? null);
    assertOwnTestsPass(compiled, deps.testRunOptions(ctx.tenant));
    const record = shadowRecord(ctx.tenant, name, candidate, rate, new Date(deps.now()).toISOString());
    const created = deps.store.get(ctx.tenant, name) === undefined;
    await deps.persist(() => deps.store.put(record, 'api', true));
    deps.live.set(record, compiled);
    deps.audit(ctx, 'shadow_started', { rule_name: name, candidate_version: compiled.version, sample_rate: rate, ...callerFields(ctx) });
    return { status: created ? 'created' : 'updated', name, candidate_version: compiled.version, sample_rate: rate, since: record.since, ...analysis };
  }

  /** `GET /api/v1/rulesets/:name/shadow`: the shadow and what this instance counted. */
  get(ctx: CallContext, name: string): ShadowAnswer {
    const rec = this.deps.record(ctx, name);
    const state = this.deps.live.get(ctx.tenant, name);
    if (state === undefined) throw shadowNotFound(name);
    const { record, compiled } = state;
    return {
      name,
      live_version: rec.version,
      candidate_version: compiled.version,
      sample_rate: record.sampleRate,
      since: record.since,
      counted_by: 'instance',
      ...state.counts(),
    };
  }

  /**
   * `POST /api/v1/rulesets/:name/shadow/promote`: the candidate becomes the live version through
   * the normal update (`putRuleset`: signature, tests, history, audit, sync), then the shadow ends.
   */
  async promote(ctx: CallContext, name: string): Promise<ShadowPromoteResult> {
    const { deps } = this;
    deps.guard.assertWritable();
    const current = deps.record(ctx, name);
    const shadow = deps.store.get(ctx.tenant, name);
    if (shadow === undefined) throw shadowNotFound(name);
    const put = await deps.putRuleset(ctx, shadow.candidate);
    await this.end(ctx, name, 'promoted');
    const to = deps.current(ctx.tenant, name)?.version ?? '';
    return { status: 'promoted', name, from_version: current.version, to_version: to, ...(put.warnings ? { warnings: put.warnings } : {}) };
  }

  /** `DELETE /api/v1/rulesets/:name/shadow`: ends the shadow. */
  async delete(ctx: CallContext, name: string): Promise<void> {
    this.deps.guard.assertWritable();
    this.deps.record(ctx, name);
    if (this.deps.store.get(ctx.tenant, name) === undefined) throw shadowNotFound(name);
    await this.end(ctx, name, 'deleted');
  }

  /** Ends the caller's tenant's shadow of `name` when there is one (its ruleset was deleted). */
  async endIfAny(ctx: CallContext, name: string, reason: ShadowEnd): Promise<void> {
    if (this.deps.store.get(ctx.tenant, name) !== undefined) await this.end(ctx, name, reason);
  }

  /**
   * Installs the shadows read from the rules dir at start (ShadowStore.load): a candidate that no
   * longer compiles is logged and forgotten (its file stays).
   */
  load(records: readonly ShadowRecord[]): number {
    let n = 0;
    for (const record of records) {
      try {
        this.deps.live.set(record, compileShadow(record));
        n++;
      } catch (err) {
        this.deps.store.forget(record.tenant, record.name);
        this.deps.logger.warn({ tenant: record.tenant, name: record.name, err: errorMessage(err) }, 'skipped a shadow whose candidate does not compile');
      }
    }
    return n;
  }

  /** The stored shadow of `(tenant, name)`, with no tenant check (sync adapters). */
  current(tenant: string, name: string): ShadowRecord | undefined {
    return this.deps.store.get(tenant, name);
  }

  /** Every stored shadow (the sync snapshot). */
  all(): ShadowRecord[] {
    return this.deps.store.all();
  }

  /** The shadows' change stream; returns the unsubscribe function. */
  subscribe(listener: ChangeListener<ShadowChange>): () => void {
    return this.deps.store.subscribe(listener);
  }

  /**
   * Applies a synchronized shadow (docs/changing-rules.md "Shadow runs"): a reader runs the
   * writer's candidates on the traffic it serves. One that is malformed or does not compile is
   * logged and 'rejected'. `expect`: the watcher's token (`StaleRead` when an own change overtook its read).
   */
  async applySync(
    change: Extract<IncomingChange, { kind: 'shadow.put' | 'shadow.delete' }>,
    origin: 'sync' | 'watch',
    persist: boolean,
    expect: FileToken | undefined,
  ): Promise<ApplyOutcome> {
    const { store, live, logger } = this.deps;
    const { tenant, name } = change;
    if (!isValidRulesetName(tenant) || !isValidRulesetName(name)) {
      logger.warn({ tenant, name, origin }, 'synchronized shadow skipped: invalid tenant id or ruleset name');
      return 'rejected';
    }
    if (change.kind === 'shadow.delete') {
      const removed = await store.delete(tenant, name, origin, persist, expect);
      live.remove(tenant, name);
      return removed ? 'applied' : 'unchanged';
    }
    let record: ShadowRecord;
    let compiled: CompiledRuleset;
    try {
      const v = parseShadowValue(change.value);
      record = shadowRecord(tenant, name, v.candidate, v.sampleRate, v.since);
      compiled = compileShadow(record);
    } catch (err) {
      logger.warn({ tenant, name, origin, err: errorMessage(err) }, 'rejected a synchronized shadow');
      return 'rejected';
    }
    const outcome = await store.put(record, origin, persist, expect);
    live.set(record, compiled);
    return outcome;
  }

  private async end(ctx: CallContext, name: string, reason: ShadowEnd): Promise<void> {
    const { deps } = this;
    const state = deps.live.get(ctx.tenant, name);
    await deps.persist(() => deps.store.delete(ctx.tenant, name, 'api', true));
    deps.live.remove(ctx.tenant, name);
    const counts = state?.counts();
    deps.audit(ctx, 'shadow_ended', {
      rule_name: name,
      reason,
      ...(counts ? { executed: counts.executed, agreed: counts.agreed, disagreed: counts.disagreed, errors: counts.errors } : {}),
      ...callerFields(ctx),
    });
  }
}

/** The compiled candidate of a stored or synchronized shadow; throws when it is not a valid document of that ruleset. */
function compileShadow(record: ShadowRecord): CompiledRuleset {
  const compiled = compileRuleset(stripSignature(record.candidate));
  if (compiled.name !== record.name) throw new Error(`the candidate's config.name '${compiled.name}' is not '${record.name}'`);
  return compiled;
}

function shadowNotFound(name: string): ServiceError {
  return new ServiceError('NOT_FOUND', `ruleset '${name}' has no shadow run`);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
