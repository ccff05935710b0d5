/**
 * Request spans and debug request lines of the gRPC adapter. Built only when tracing
 * or `--log-level debug` is on; otherwise the handlers are served unwrapped.
 *
 * Spans: one SERVER span per call named `rules.RuleService/<Method>`, joined to the caller's
 * trace by the `traceparent` metadata entry, with the OpenTelemetry RPC attributes and the gRPC
 * status code. Its context reaches the façade through `CallContext.traceContext` (`contextOf`).
 */
import { status, type Metadata, type sendUnaryData, type ServerUnaryCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { SpanStatusCode, type Context, type Span, type TextMapGetter } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../log.js';
import type { Tracing } from '../../observe/tracing.js';
import { sourceIpOf } from './handlers.js';

/** The gRPC service name used in span names and `rpc.service`. */
export const RPC_SERVICE = 'rules.RuleService';

/** What the request log needs from the logger. */
export type GrpcRequestLogger = Pick<Logger, 'debug'>;

/** Options of `GrpcInstrumentation`. */
export interface GrpcInstrumentOptions {
  readonly tracing?: Tracing;
  /** Per-call debug lines; give it only with `--log-level debug`. */
  readonly requestLog?: GrpcRequestLogger;
}

/**
 * Status codes that mark a server span as failed (OpenTelemetry gRPC conventions): the others
 * (NOT_FOUND, INVALID_ARGUMENT, ...) are the caller's problem.
 */
const SERVER_ERRORS: ReadonlySet<number> = new Set([
  status.UNKNOWN,
  status.DEADLINE_EXCEEDED,
  status.UNIMPLEMENTED,
  status.INTERNAL,
  status.UNAVAILABLE,
  status.DATA_LOSS,
]);

/** Reads W3C trace context entries from gRPC metadata. */
const METADATA_GETTER: TextMapGetter<Metadata> = {
  keys: (md) => Object.keys(md.getMap()),
  get: (md, key) => {
    const values = md.get(key).filter((v): v is string => typeof v === 'string');
    return values.length === 0 ? undefined : values;
  },
};

type Call = ServerUnaryCall<unknown, unknown>;
type Handler = (call: Call, callback: sendUnaryData<unknown>) => void;

/** Wraps handlers with spans and request lines; `contextOf` gives a call's span context. */
export class GrpcInstrumentation {
  private readonly contexts = new WeakMap<object, Context>();

  constructor(private readonly options: GrpcInstrumentOptions) {}

  /** The context of the span of `call` (for `CallContext.traceContext`), if any. */
  readonly contextOf = (call: object): unknown => this.contexts.get(call);

  /** A copy of `impl` with every handler wrapped. */
  wrap(impl: UntypedServiceImplementation): UntypedServiceImplementation {
    const out: UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(impl)) out[method] = this.wrapOne(method, handler as unknown as Handler) as never;
    return out;
  }

  private wrapOne(method: string, handler: Handler): Handler {
    const { tracing, requestLog } = this.options;
    const name = `${RPC_SERVICE}/${method}`;
    return (call, callback) => {
      const started = requestLog ? performance.now() : 0;
      let span: Span | undefined;
      if (tracing) {
        const peer = sourceIpOf(call.getPeer());
        const s = tracing.startServerSpan(name, call.metadata, METADATA_GETTER, {
          'rpc.system': 'grpc',
          'rpc.service': RPC_SERVICE,
          'rpc.method': method,
          ...(peer !== null ? { 'client.address': peer } : {}),
        });
        this.contexts.set(call, s.context);
        span = s.span;
      }
      const done: sendUnaryData<unknown> = (err, value, trailer, flags) => {
        const code = err ? (err.code ?? status.UNKNOWN) : status.OK;
        if (span !== undefined) {
          span.setAttribute('rpc.grpc.status_code', code);
          if (SERVER_ERRORS.has(code)) {
            span.setAttribute('error.type', status[code] ?? String(code));
            span.setStatus({ code: SpanStatusCode.ERROR, message: err?.details ?? '' });
          }
          span.end();
        }
        if (requestLog) {
          requestLog.debug(
            {
              rpc: name,
              status: status[code] ?? code,
              duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
              source_ip: sourceIpOf(call.getPeer()),
            },
            'grpc request',
          );
        }
        callback(err, value, trailer, flags);
      };
      handler(call, done);
    };
  }
}
