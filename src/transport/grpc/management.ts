/**
 * The RPCs of `rules.RuleService` beyond execution (EXTENSIONS.md 5 "gRPC"): one per HTTP
 * capability (rules write, versions, rollback, analysis, schema, filter, tests, diff, impact,
 * drafts, audit sample rate, reference data, tenants, debug view, shadow runs). Each builds the HTTP body
 * from the request's fields (a `*_json` field is the JSON text of a free-form member), calls the
 * ONE façade method the HTTP route calls, and encodes its answer: the same request gives the
 * same answer on both transports (test/integration/grpc-route-parity.test.ts).
 *
 * NOTE: none of these is on the execute hot path; they are plain handlers over `unary`
 * (./handlers.ts), which checks the caller and maps errors through the catalog.
 */
import type { DataServiceApi } from '../../service/data-service.js';
import { ServiceError } from '../../service/errors.js';
import { isPlainObject } from '../../service/json-object.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { CallContext, HeaderSignature, RuleServiceApi } from '../../service/types.js';
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { checkAnswerText } from '../answer-bound.js';
import { withRequestNow } from '../request-now.js';
import { encodeExecuteResult, parseJsonField } from './codec.js';
import type {
  CreateTenantRequestMsg,
  DiffRequestMsg,
  DraftExecuteRequestMsg,
  DraftFilterRequestMsg,
  DraftTestRequestMsg,
  DraftValidateRequestMsg,
  FilterRequestMsg,
  ImpactRequestMsg,
  NameRequestMsg,
  PutDataRequestMsg,
  PutRulesetRequestMsg,
  PutShadowRequestMsg,
  RollbackRequestMsg,
  SetAuditSampleRateRequestMsg,
  TenantIdRequestMsg,
  TestRulesetRequestMsg,
  UpdateTenantRequestMsg,
} from './messages.js';
import type { GrpcMethod } from './permissions.js';

/** A unary handler of grpc-js. */
export type UnaryHandler = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;

/**
 * How ./handlers.ts makes a unary handler of a façade call (synchronous or a promise): the
 * caller's check, the CallContext and the catalog errors are its business.
 */
export type UnaryBuilder = <Req>(method: Exclude<GrpcMethod, 'Health'>, fn: (req: Req, ctx: CallContext) => unknown) => UnaryHandler;

/** What the management handlers reach besides the façade. */
export interface ManagementOptions {
  /** `--max-response-bytes`. */
  readonly maxResponseBytes: number;
  /** Reference data; absent: the data RPCs answer NOT_FOUND. */
  readonly data?: DataServiceApi;
  /** Tenant management; absent: the tenant RPCs answer NOT_FOUND. */
  readonly tenants?: TenantManagerApi;
  /** The debug view (`--debug-mode`); absent: DebugRuleset answers NOT_FOUND. */
  readonly debugRuleset?: (ctx: CallContext, name: string) => unknown;
}

/** The JSON text of field `field`, parsed; undefined when empty or blank (the HTTP member is then absent). */
export function optionalJsonField(field: string, text: string): unknown {
  return text.trim().length === 0 ? undefined : parseJsonField(field, text);
}

/** `{key: value}`, or `{}` when value is undefined: an absent HTTP body member. */
function member(key: string, value: unknown): Record<string, unknown> {
  return value === undefined ? {} : { [key]: value };
}

/**
 * JSON texts of one answer, bounded together by `--max-response-bytes` (EXTENSIONS.md 6
 * "Answers"), as ./codec.ts bounds the execution answers.
 */
class AnswerTexts {
  private used = 0;
  constructor(private readonly max: number) {}

  /** The JSON text of `value` (`null` for undefined), counted towards the bound. */
  json(value: unknown): string {
    return this.text(JSON.stringify(value) ?? 'null');
  }

  /** `text` (already JSON), counted towards the bound. */
  text(text: string): string {
    checkAnswerText(text, this.max - this.used);
    this.used += text.length;
    return text;
  }
}

/** The handlers of the management RPCs over the façade (and the data and tenant façades, when present). */
export function buildManagementHandlers(service: RuleServiceApi, unary: UnaryBuilder, options: ManagementOptions): Record<string, UnaryHandler> {
  const max = options.maxResponseBytes;
  const texts = (): AnswerTexts => new AnswerTexts(max);
  // NOTE: the messages of HTTP's data and tenant routes (../http/data-routes.ts, ../http/tenant-routes.ts).
  const data = (): DataServiceApi => {
    if (options.data === undefined) throw new ServiceError('NOT_FOUND', 'reference data is not available on this server');
    return options.data;
  };
  const tenants = (): TenantManagerApi => {
    if (options.tenants === undefined) throw new ServiceError('NOT_FOUND', 'multi-tenancy is disabled');
    return options.tenants;
  };

  return {
    // ------------------------------------------------------------- rulesets
    PutRuleset: unary<PutRulesetRequestMsg>('PutRuleset', async (req, ctx) => {
      const body = parseJsonField('ruleset_json', req.ruleset_json);
      const signature: HeaderSignature = { ...member('signature', req.signature), ...member('publicKey', req.public_key) };
      const res = await service.putRuleset(ctx, body, signature);
      return { status: res.status, name: res.name, warnings_json: res.warnings === undefined ? '' : texts().json(res.warnings) };
    }),
    DeleteRuleset: unary<NameRequestMsg>('DeleteRuleset', async (req, ctx) => {
      await service.deleteRuleset(ctx, req.name);
      return {};
    }),
    ListVersions: unary<NameRequestMsg>('ListVersions', async (req, ctx) => {
      const res = await service.versions(ctx, req.name);
      texts().json(res.versions);
      return { name: res.name, current_version: res.current_version, versions: res.versions.map((v) => ({ ...v })) };
    }),
    Rollback: unary<RollbackRequestMsg>('Rollback', (req, ctx) => service.rollback(ctx, req.name, req.seq)),
    GetAnalysis: unary<NameRequestMsg>('GetAnalysis', (req, ctx) => ({ warnings_json: texts().json(service.analysis(ctx, req.name).warnings) })),
    GetInputSchema: unary<NameRequestMsg>('GetInputSchema', (req, ctx) => {
      const res = service.inputSchema(ctx, req.name);
      return { name: res.name, version: res.version, inferred: res.inferred, input_validation: res.input_validation, schema_json: texts().json(res.schema) };
    }),
    Filter: unary<FilterRequestMsg>('Filter', (req, ctx) => {
      const request = optionalJsonField('request_json', req.request_json);
      return { filter_json: texts().json(service.filter(ctx, req.name, request)) };
    }),
    TestRuleset: unary<TestRulesetRequestMsg>('TestRuleset', (req, ctx) => {
      const body = member('tests', optionalJsonField('tests_json', req.tests_json));
      return testAnswer(service.testRuleset(ctx, req.name, body), texts());
    }),
    // ------------------------------------------------------------- changes
    Diff: unary<DiffRequestMsg>('Diff', async (req, ctx) => {
      const body = { ...member('from', optionalJsonField('from_json', req.from_json)), ...member('to', optionalJsonField('to_json', req.to_json)) };
      const res = await service.diff(ctx, req.name, body);
      const t = texts();
      return { changes_json: t.json(res.changes), behavior_json: t.json(res.behavior) };
    }),
    Impact: unary<ImpactRequestMsg>('Impact', async (req, ctx) => {
      const body = {
        ...member('candidate', optionalJsonField('candidate_json', req.candidate_json)),
        inputs: req.inputs_json.map((text, i) => parseJsonField(`inputs_json[${i}]`, text)),
      };
      return { report_json: texts().json(await service.impact(ctx, req.name, body)) };
    }),
    DraftValidate: unary<DraftValidateRequestMsg>('DraftValidate', (req, ctx) => {
      const res = service.draftValidate(ctx, member('ruleset', optionalJsonField('ruleset_json', req.ruleset_json)));
      const t = texts();
      return { valid: res.valid, problems_json: t.json(res.problems), warnings_json: t.json(res.warnings) };
    }),
    DraftExecute: unary<DraftExecuteRequestMsg>('DraftExecute', (req, ctx) => {
      const ruleset = parseJsonField('ruleset_json', req.ruleset_json);
      const input = parseJsonField('input_json', req.input_json);
      return withRequestNow(req.now, () => encodeExecuteResult(service.draftExecute(ctx, ruleset, input, req.trace), max));
    }),
    DraftFilter: unary<DraftFilterRequestMsg>('DraftFilter', (req, ctx) => {
      const request = optionalJsonField('request_json', req.request_json) ?? {};
      if (!isPlainObject(request)) throw new ServiceError('BAD_REQUEST', 'request_json must be the JSON text of an object (a filter request)');
      const body = { ...request, ...member('ruleset', optionalJsonField('ruleset_json', req.ruleset_json)) };
      return { filter_json: texts().json(service.draftFilter(ctx, body)) };
    }),
    DraftTest: unary<DraftTestRequestMsg>('DraftTest', (req, ctx) => {
      const body = {
        ...member('ruleset', optionalJsonField('ruleset_json', req.ruleset_json)),
        ...member('tests', optionalJsonField('tests_json', req.tests_json)),
      };
      return testAnswer(service.draftTest(ctx, body), texts());
    }),
    // ------------------------------------------------------------- config
    GetAuditSampleRate: unary('GetAuditSampleRate', (_req, ctx) => service.getAuditSampleRate(ctx)),
    SetAuditSampleRate: unary<SetAuditSampleRateRequestMsg>('SetAuditSampleRate', (req, ctx) => service.setAuditSampleRate(ctx, req.sample_rate)),
    // ------------------------------------------------------------- reference data
    ListData: unary('ListData', (_req, ctx) => {
      const list = data().list(ctx);
      texts().json(list);
      return { datasets: list.map((d) => ({ name: d.name, bytes: d.bytes, version: d.version })) };
    }),
    GetData: unary<NameRequestMsg>('GetData', (req, ctx) => ({ data_json: texts().text(data().getText(ctx, req.name)) })),
    PutData: unary<PutDataRequestMsg>('PutData', async (req, ctx) => {
      const res = await data().put(ctx, req.name, parseJsonField('data_json', req.data_json));
      return { status: res.status, name: res.name, bytes: res.bytes, version: res.version };
    }),
    DeleteData: unary<NameRequestMsg>('DeleteData', async (req, ctx) => {
      await data().delete(ctx, req.name);
      return {};
    }),
    // ------------------------------------------------------------- tenants
    ListTenants: unary('ListTenants', () => ({ tenants_json: texts().json(tenants().list()) })),
    CreateTenant: unary<CreateTenantRequestMsg>('CreateTenant', async (req, ctx) => {
      const record = await tenants().create(ctx, parseJsonField('tenant_json', req.tenant_json));
      return { tenant_json: texts().json(record) };
    }),
    GetTenant: unary<TenantIdRequestMsg>('GetTenant', (req) => ({ tenant_json: texts().json(tenants().get(req.id)) })),
    UpdateTenant: unary<UpdateTenantRequestMsg>('UpdateTenant', async (req, ctx) => {
      const record = await tenants().update(ctx, req.id, parseJsonField('tenant_json', req.tenant_json));
      return { tenant_json: texts().json(record) };
    }),
    DeleteTenant: unary<TenantIdRequestMsg>('DeleteTenant', async (req, ctx) => {
      await tenants().delete(ctx, req.id);
      return {};
    }),
    // ------------------------------------------------------------- debug
    DebugRuleset: unary<NameRequestMsg>('DebugRuleset', (req, ctx) => {
      if (options.debugRuleset === undefined) throw new ServiceError('NOT_FOUND', 'the debug view is off (start the server with --debug-mode)');
      return { debug_json: texts().json(options.debugRuleset(ctx, req.name)) };
    }),
    // ------------------------------------------------------------- shadow runs (../http/shadow-routes.ts)
    PutShadow: unary<PutShadowRequestMsg>('PutShadow', async (req, ctx) => {
      const body = { ...member('candidate', optionalJsonField('candidate_json', req.candidate_json)), ...member('sample_rate', req.sample_rate) };
      const res = await service.putShadow(ctx, req.name, body);
      return {
        status: res.status,
        name: res.name,
        candidate_version: res.candidate_version,
        sample_rate: res.sample_rate,
        since: res.since,
        warnings_json: res.warnings === undefined ? '' : texts().json(res.warnings),
      };
    }),
    GetShadow: unary<NameRequestMsg>('GetShadow', (req, ctx) => {
      const res = service.getShadow(ctx, req.name);
      const t = texts();
      t.json(res.transitions);
      return {
        name: res.name,
        live_version: res.live_version,
        candidate_version: res.candidate_version,
        sample_rate: res.sample_rate,
        since: res.since,
        counted_by: res.counted_by,
        executed: res.executed,
        agreed: res.agreed,
        disagreed: res.disagreed,
        errors: res.errors,
        dropped: res.dropped,
        transitions: res.transitions.map((x) => ({ from: x.from, to: x.to, count: x.count })),
        examples_json: t.json(res.examples),
      };
    }),
    DeleteShadow: unary<NameRequestMsg>('DeleteShadow', async (req, ctx) => {
      await service.deleteShadow(ctx, req.name);
      return {};
    }),
    PromoteShadow: unary<NameRequestMsg>('PromoteShadow', async (req, ctx) => {
      const res = await service.promoteShadow(ctx, req.name);
      return {
        status: res.status,
        name: res.name,
        from_version: res.from_version,
        to_version: res.to_version,
        warnings_json: res.warnings === undefined ? '' : texts().json(res.warnings),
      };
    }),
  };
}

/** `TestRulesetResponse` of a test report. */
function testAnswer(report: { passed: number; failed: number; results: unknown; coverage: unknown }, t: AnswerTexts): object {
  return { passed: report.passed, failed: report.failed, results_json: t.json(report.results), coverage_json: t.json(report.coverage) };
}
