/**
 * The gRPC adapter's handlers: each decodes its request, calls ONE façade method with a
 * `CallContext`, and encodes the answer; errors go through the catalog (./status.ts).
 * Nothing here knows about rules (architecture guide, point 3).
 */
import type { Logger } from '../../log.js';
import { ALL_TENANTS, type AuthGuard, type Principal, type RoutePermission } from '../../auth/index.js';
import { Metadata, type sendUnaryData, type ServerUnaryCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { ServiceError, unexpectedCause, unexpectedFields } from '../../service/errors.js';
import type { DataServiceApi } from '../../service/data-service.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../answer-bound.js';
import { withRequestNow } from '../request-now.js';
import { encodeBatch, encodeEval, encodeExecuteResult, encodeHealth, encodeList, encodeRuleset, parseJsonField } from './codec.js';
import { buildManagementHandlers } from './management.js';
import { GRPC_GLOBAL_METHODS, GRPC_PERMISSIONS, type GrpcMethod } from './permissions.js';
import type { BatchExecuteRequestMsg, EvalRequestMsg, ExecuteRequestMsg, GetRuleSetRequestMsg } from './messages.js';
import { MalformedMessage } from './proto.js';
import { toCatalogError, toGrpcStatus } from './status.js';

/** Options of the handlers. */
export interface GrpcHandlerOptions {
  /** Read the tenant from metadata `x-tenant-id` (DECISIONS.md 8); otherwise `default`. */
  readonly multiTenancy: boolean;
  /** `--max-response-bytes` (default 10 MiB): a larger answer is LIMIT_EXCEEDED. */
  readonly maxResponseBytes?: number;
  /** Where unexpected (non-catalog) errors are reported. */
  readonly logger?: Pick<Logger, 'error'>;
  /** The request span's context of a call (tracing on, ./instrument.ts); absent: untraced contexts. */
  readonly traceContextOf?: (call: object) => unknown;
  /** Authentication (EXTENSIONS.md 1): metadata `authorization: Bearer ...`; absent: off. */
  readonly guard?: AuthGuard;
  /** Reference data (the data RPCs); absent: they answer NOT_FOUND, as HTTP's routes do. */
  readonly data?: DataServiceApi;
  /** Tenant management (`--multi-tenancy-enabled`); absent: the tenant RPCs answer NOT_FOUND. */
  readonly tenants?: TenantManagerApi;
  /** The debug view of a ruleset (`--debug-mode`); absent: DebugRuleset answers NOT_FOUND. */
  readonly debugRuleset?: (ctx: CallContext, name: string) => unknown;
}

export { GRPC_GLOBAL_METHODS, GRPC_PERMISSIONS, type GrpcMethod } from './permissions.js';

/** Trailing metadata key of the decision id (EXTENSIONS.md 4 "Decision records"). */
export const DECISION_ID_METADATA = 'svc-decision-id';

/** A unary call; each handler casts `request` to its message type (./messages.ts). */
type Call = ServerUnaryCall<unknown, unknown>;

/** Builds the implementation of `rules.RuleService` over the façade. */
export function buildGrpcHandlers(service: RuleServiceApi, options: GrpcHandlerOptions): UntypedServiceImplementation {
  const traceOf = options.traceContextOf;
  const max = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  // NOTE: chosen once here; without tracing every call builds the plain context only.
  const tenantFor = (call: Call): string => (options.multiTenancy ? tenantOf(call.metadata) : 'default');
  const ctxOf =
    traceOf === undefined
      ? (call: Call, principal?: Principal): CallContext => new GrpcCallContext(tenantFor(call), call, principal?.id)
      : (call: Call, principal?: Principal): CallContext => new TracedGrpcCallContext(tenantFor(call), call, principal?.id, traceOf(call));
  const guard = options.guard;

  const fail = (err: unknown, method: string, callback: sendUnaryData<unknown>): void => {
    // NOTE (EXTENSIONS.md 6): an unexpected error is logged with its stack, also when the façade
    // already wrapped it (toServiceError keeps it as `cause`); the caller gets the message only.
    const cause = unexpectedCause(err);
    if (cause !== undefined) options.logger?.error({ ...unexpectedFields(cause), code: toCatalogError(err).code, method }, 'unexpected error');
    callback(toGrpcStatus(err));
  };

  // Decision records (EXTENSIONS.md 4): the id of a recorded execution or batch in trailing
  // metadata `svc-decision-id`; with the log off, nothing is read.
  const decisionId = service.decisionId;
  const decisionTrailer = (): Metadata | undefined => {
    const id = decisionId === undefined ? null : decisionId();
    if (id === null) return undefined;
    const trailer = new Metadata();
    trailer.set(DECISION_ID_METADATA, id);
    return trailer;
  };

  /**
   * A unary handler around a façade call (synchronous, or a promise for the writes); with a
   * guard, the caller is checked first. `decision`: the call executes (Execute, BatchExecute):
   * its answer carries the decision id.
   */
  const unary = <Req>(method: Exclude<GrpcMethod, 'Health'>, fn: (req: Req, ctx: CallContext) => unknown, decision = false) => {
    const run = (call: Call, callback: sendUnaryData<unknown>, principal: Principal | undefined): void => {
      let res: unknown;
      let trailer: Metadata | undefined;
      try {
        if (call.request instanceof MalformedMessage) throw malformed(call.request);
        res = fn(call.request as Req, ctxOf(call, principal));
        if (decision) trailer = decisionTrailer();
      } catch (err) {
        fail(err, method, callback);
        return;
      }
      if (res instanceof Promise) {
        res.then(
          (value: unknown) => callback(null, value),
          (err: unknown) => fail(err, method, callback),
        );
      } else if (trailer === undefined) callback(null, res);
      else callback(null, res, trailer);
    };
    if (guard === undefined) return (call: Call, callback: sendUnaryData<unknown>): void => run(call, callback, undefined);
    const need = GRPC_PERMISSIONS[method] as Exclude<RoutePermission, 'public'>;
    const global = GRPC_GLOBAL_METHODS.has(method);
    return (call: Call, callback: sendUnaryData<unknown>): void => {
      let principal: Principal | Promise<Principal>;
      try {
        principal = guard.check(authorizationOf(call.metadata), sourceIpOf(call.getPeer()), need, global ? ALL_TENANTS : tenantFor(call));
      } catch (err) {
        fail(err, method, callback);
        return;
      }
      if (principal instanceof Promise) {
        principal.then(
          (p) => run(call, callback, p),
          (err: unknown) => fail(err, method, callback),
        );
      } else run(call, callback, principal);
    };
  };

  return {
    Execute: unary<ExecuteRequestMsg>(
      'Execute',
      (req, ctx) => {
        const input = parseJsonField('input_json', req.input_json);
        // NOTE: `now` (an addition, EXTENSIONS.md 3) is absent unless the caller set it: the hot
        // path pays one field test for it, as HTTP does.
        if (req.now === undefined) return encodeExecuteResult(service.execute(ctx, req.name, input, req.trace), max);
        return withRequestNow(req.now, () => encodeExecuteResult(service.execute(ctx, req.name, input, req.trace), max));
      },
      true,
    ),
    ListRuleSets: unary('ListRuleSets', (_req, ctx) => encodeList(service.listRulesets(ctx), max)),
    GetRuleSet: unary<GetRuleSetRequestMsg>('GetRuleSet', (req, ctx) => encodeRuleset(service.getRuleset(ctx, req.name), max)),
    Eval: unary<EvalRequestMsg>('Eval', (req, ctx) => {
      // NOTE: an empty or blank context_json is a missing context, which means {}, and `null` is
      // {} as on HTTP (DECISIONS.md 2; docs/decisions.md "gRPC context_json").
      const context = parseJsonField('context_json', req.context_json, {});
      return withRequestNow(req.now, () => encodeEval(service.evaluate(ctx, req.expression, context), max));
    }),
    BatchExecute: unary<BatchExecuteRequestMsg>(
      'BatchExecute',
      (req, ctx) => {
        const inputs = req.inputs_json.map((text, i) => parseJsonField(`inputs_json[${i}]`, text));
        return withRequestNow(req.now, () => encodeBatch(service.executeBatch(ctx, req.name, inputs, req.trace), max));
      },
      true,
    ),
    // Health is the readiness check, like HTTP /health: a failed check is UNAVAILABLE.
    Health: (call: Call, callback: sendUnaryData<unknown>): void => {
      if (call.request instanceof MalformedMessage) return fail(malformed(call.request), 'Health', callback);
      service.ready().then(
        (info) => callback(null, encodeHealth(info)),
        (err: unknown) => fail(err, 'Health', callback),
      );
    },
    // Every other HTTP capability (EXTENSIONS.md 5 "gRPC"): ./management.ts.
    ...buildManagementHandlers(service, unary, { ...options, maxResponseBytes: max }),
  };
}

/** The error of a request whose bytes protobuf could not decode. */
function malformed(m: MalformedMessage): ServiceError {
  return new ServiceError('BAD_REQUEST', `malformed request message: ${m.reason}`);
}

/**
 * The CallContext of one gRPC call. NOTE: `sourceIp` is computed on first read: only sampled
 * audit events read it, and `getPeer()` costs about 1% of a call (bench/grpc.ts profile).
 */
class GrpcCallContext implements CallContext {
  readonly transport = 'grpc' as const;
  private ip: string | null | undefined;
  constructor(
    readonly tenant: string,
    private readonly call: Call,
    readonly principal: string | undefined,
  ) {}

  get sourceIp(): string | null {
    if (this.ip === undefined) this.ip = sourceIpOf(this.call.getPeer());
    return this.ip;
  }
}

/** The CallContext of a call served with tracing on: also carries the request span's context. */
class TracedGrpcCallContext extends GrpcCallContext {
  constructor(
    tenant: string,
    call: Call,
    principal: string | undefined,
    readonly traceContext: unknown,
  ) {
    super(tenant, call, principal);
  }
}

/** The `authorization` metadata value (a string), or undefined. */
function authorizationOf(metadata: Metadata): string | undefined {
  const v = metadata.get('authorization')[0];
  return typeof v === 'string' ? v : undefined;
}

/** The tenant named by metadata `x-tenant-id`, or `default`. */
export function tenantOf(metadata: Metadata): string {
  const v = metadata.get('x-tenant-id')[0];
  return typeof v === 'string' && v.length > 0 ? v : 'default';
}

/**
 * The caller's IP from `call.getPeer()` (`127.0.0.1:5000`, `::1:5000`, or `unknown` on a Unix
 * socket, which gives null).
 */
export function sourceIpOf(peer: string): string | null {
  if (peer === 'unknown' || peer.length === 0) return null;
  // NOTE: hot path (every call): string scanning, no regular expression.
  const colon = peer.lastIndexOf(':');
  const host = colon > 0 && isDigits(peer, colon + 1) ? peer.slice(0, colon) : peer;
  return host.charCodeAt(0) === 91 /* [ */ && host.endsWith(']') ? host.slice(1, -1) : host;
}

function isDigits(text: string, from: number): boolean {
  if (from >= text.length) return false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
