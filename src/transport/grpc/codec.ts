/**
 * Decoding of the JSON-text fields of gRPC requests and encoding of façade answers into
 * `proto/rules.proto` messages. No rule logic: the façade decides, this only translates.
 */
import { ERROR_CATALOG, GrpcStatus, ServiceError, type ErrorCode } from '../../service/errors.js';
import type { BatchItem, BatchResult, EvalResult, HealthInfo, RulesetInfo } from '../../service/types.js';
import type { ExecutionResult, TraceStep } from '../../ruleset/result.js';
import { checkAnswerBytes, checkAnswerText } from '../answer-bound.js';
import { parseJsonText } from '../json-text.js';
import type {
  BatchExecuteResponseMsg,
  BatchItemMsg,
  EvalResponseMsg,
  ExecuteResponseMsg,
  HealthResponseMsg,
  ListRuleSetsResponseMsg,
  StepInfoMsg,
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

/**
 * `ExecuteResponse` of one execution result (`trace` only when the result has one); its
 * `output_json` is bounded by `maxBytes` (`--max-response-bytes`, EXTENSIONS.md 6 "Answers").
 */
export function encodeExecuteResult(result: ExecutionResult, maxBytes = Infinity): ExecuteResponseMsg {
  const output = JSON.stringify(result.output);
  checkAnswerText(output, maxBytes);
  const msg: ExecuteResponseMsg = {
    code: result.code,
    message: result.message,
    output_json: output,
    duration_us: result.duration_us,
  };
  if (result.trace) msg.trace = { path: result.trace.path, steps: encodeSteps(result.trace.steps) };
  return msg;
}

/**
 * The `StepInfo`s of a trace. A step that is not a decision table passes as it is; a table's
 * `row` / `rows` become the `table_match` oneof (`row`, `row_null` for a null row, `rows`).
 */
export function encodeSteps(steps: readonly TraceStep[]): StepInfoMsg[] {
  let out: StepInfoMsg[] | undefined;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    if (s.row === undefined && s.rows === undefined) {
      out?.push(s as StepInfoMsg);
      continue;
    }
    // NOTE: only traces with a table step are copied; others go out as the engine made them.
    out ??= steps.slice(0, i) as StepInfoMsg[];
    const step: StepInfoMsg = { id: s.id, name: s.name, duration_us: s.duration_us };
    if (s.rows !== undefined) step.rows = { indexes: s.rows };
    else if (s.row === null) step.row_null = true;
    else if (s.row !== undefined) step.row = s.row;
    out.push(step);
  }
  return out ?? (steps as StepInfoMsg[]);
}

/**
 * `ListRuleSetsResponse`; a null description becomes "" (proto3 strings have no null). The
 * texts of its entries together are bounded by `maxBytes` like every answer.
 */
export function encodeList(list: readonly RulesetInfo[], maxBytes = Infinity): ListRuleSetsResponseMsg {
  let chars = 0;
  const rulesets = list.map((r) => {
    const description = r.description ?? '';
    chars += r.name.length + r.version.length + description.length;
    return { name: r.name, version: r.version, description };
  });
  checkAnswerBytes(chars, maxBytes);
  return { rulesets };
}

/** `EvalResponse`: the result value as JSON text, bounded by `maxBytes` with the parsed text. */
export function encodeEval(out: EvalResult, maxBytes = Infinity): EvalResponseMsg {
  const result = JSON.stringify(out.result) ?? 'null';
  checkAnswerText(result, maxBytes - out.parsed.length);
  return { result_json: result, parsed: out.parsed };
}

/** `GetRuleSetResponse`: the ruleset document as JSON text, bounded by `maxBytes`. */
export function encodeRuleset(doc: unknown, maxBytes = Infinity): { ruleset_json: string } {
  const text = JSON.stringify(doc);
  checkAnswerText(text, maxBytes);
  return { ruleset_json: text };
}

/** `HealthResponse` of the `/health` body. */
export function encodeHealth(info: HealthInfo): HealthResponseMsg {
  return { status: info.status, version: info.version, uptime_seconds: info.uptime_seconds, rules_count: info.storage.rules_count };
}

/**
 * `BatchExecuteResponse`: each item a result or its error (with the gRPC status of its code).
 * The items' JSON texts together are bounded by `maxBytes`: encoding stops once their length
 * is over it (a string longer than the byte bound is over it).
 */
export function encodeBatch(batch: BatchResult, maxBytes = Infinity): BatchExecuteResponseMsg {
  const results: BatchItemMsg[] = [];
  let chars = 0;
  for (const item of batch.results) {
    const msg = encodeBatchItem(item, maxBytes);
    chars += 'result' in msg ? msg.result.output_json.length : msg.error.error.length + (msg.error.problems_json?.length ?? 0);
    checkAnswerBytes(chars, maxBytes);
    results.push(msg);
  }
  return { results, summary: { ...batch.summary } };
}

function encodeBatchItem(item: BatchItem, maxBytes: number): BatchItemMsg {
  if ('error' in item) {
    const entry = ERROR_CATALOG[item.code as ErrorCode] as { grpc: number } | undefined;
    const error = { error: item.error, code: item.code, status: entry?.grpc ?? GrpcStatus.INTERNAL };
    // INPUT_INVALID items carry their problems, as in the HTTP batch answer.
    return { error: item.problems === undefined ? error : { ...error, problems_json: JSON.stringify(item.problems) } };
  }
  return { result: encodeExecuteResult(item, maxBytes) };
}
