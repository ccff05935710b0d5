/**
 * Decoding of the JSON-text fields of gRPC requests and encoding of façade answers into
 * `proto/rules.proto` messages. No rule logic: the façade decides, this only translates.
 */
import { ERROR_CATALOG, GrpcStatus, ServiceError, type ErrorCode } from '../../service/errors.js';
import type { BatchItem, BatchResult, EvalResult, HealthInfo, RulesetInfo } from '../../service/types.js';
import type { ExecutionResult } from '../../ruleset/result.js';
import { parseJsonText } from '../json-text.js';
import type {
  BatchExecuteResponseMsg,
  BatchItemMsg,
  EvalResponseMsg,
  ExecuteResponseMsg,
  HealthResponseMsg,
  ListRuleSetsResponseMsg,
} from './messages.js';

/**
 * Parses the JSON text of request field `field` (e.g. `input_json`) under the same rules as
 * HTTP bodies (malformed JSON, nesting depth, `__proto__` keys). Failures are BAD_REQUEST
 * (INVALID_ARGUMENT) with a message that names the field. An empty text gives `whenEmpty`,
 * or BAD_REQUEST "<field> is required" when `whenEmpty` is undefined.
 */
export function parseJsonField(field: string, text: string, whenEmpty?: unknown): unknown {
  // NOTE: hot path: only text that starts with white space can be blank, so trim only then.
  if (text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim().length === 0)) {
    if (whenEmpty !== undefined) return whenEmpty;
    throw new ServiceError('BAD_REQUEST', `${field} is required: the JSON text of an object`);
  }
  try {
    return parseJsonText(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // NOTE: the shared parser words its messages for HTTP bodies; name the field instead.
    const reworded = message.startsWith('request body ') ? `${field} ${message.slice('request body '.length)}` : `${field}: ${message}`;
    throw new ServiceError('BAD_REQUEST', reworded);
  }
}

/** `ExecuteResponse` of one execution result (`trace` only when the result has one). */
export function encodeExecuteResult(result: ExecutionResult): ExecuteResponseMsg {
  const msg: ExecuteResponseMsg = {
    code: result.code,
    message: result.message,
    output_json: JSON.stringify(result.output),
    duration_us: result.duration_us,
  };
  if (result.trace) msg.trace = { path: result.trace.path, steps: result.trace.steps };
  return msg;
}

/** `ListRuleSetsResponse`; a null description becomes "" (proto3 strings have no null). */
export function encodeList(list: readonly RulesetInfo[]): ListRuleSetsResponseMsg {
  return { rulesets: list.map((r) => ({ name: r.name, version: r.version, description: r.description ?? '' })) };
}

/** `EvalResponse`: the result value as JSON text. */
export function encodeEval(out: EvalResult): EvalResponseMsg {
  return { result_json: JSON.stringify(out.result) ?? 'null', parsed: out.parsed };
}

/** `HealthResponse` of the `/health` body. */
export function encodeHealth(info: HealthInfo): HealthResponseMsg {
  return { status: info.status, version: info.version, uptime_seconds: info.uptime_seconds, rules_count: info.storage.rules_count };
}

/** `BatchExecuteResponse`: each item a result or its error (with the gRPC status of its code). */
export function encodeBatch(batch: BatchResult): BatchExecuteResponseMsg {
  return {
    results: batch.results.map(encodeBatchItem),
    summary: { ...batch.summary },
  };
}

function encodeBatchItem(item: BatchItem): BatchItemMsg {
  if ('error' in item) {
    const entry = ERROR_CATALOG[item.code as ErrorCode] as { grpc: number } | undefined;
    return { error: { error: item.error, code: item.code, status: entry?.grpc ?? GrpcStatus.INTERNAL } };
  }
  return { result: encodeExecuteResult(item) };
}
