/**
 * The request handling of the execution routes, `POST /api/v1/execute/:name`,
 * `POST /api/v1/execute/:name/batch` and `POST /api/v1/eval`: body checks, the façade call, and
 * the 200 answer's JSON text. The route table (./routes.ts) calls these for both request paths
 * (the hot dispatcher and fastify), so that both answer alike.
 */
import { canonicalDateText, setRequestNow } from '../../expr/index.js';
import { ServiceError } from '../../service/errors.js';
import { isPlainObject } from '../../service/json-object.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import { serializeBatch, serializeEval, serializeExecution } from './serialize.js';

/** The 200 answer of `POST /api/v1/execute/:name` as JSON text; throws a ServiceError otherwise. */
export function executeAnswer(service: RuleServiceApi, ctx: CallContext, name: string, body: unknown): string {
  const b = objectBody(body, 'a JSON object with an "input" object');
  if (b['input'] === undefined) throw new ServiceError('BAD_REQUEST', 'input is required');
  const trace = traceFlag(b['trace']);
  if (b['now'] === undefined) return serializeExecution(service.execute(ctx, name, b['input'], trace));
  return withNow(b['now'], () => serializeExecution(service.execute(ctx, name, b['input'], trace)));
}

/**
 * The 200 answer of `POST /api/v1/draft/execute` `{ruleset, input, trace?, now?}` (EXTENSIONS.md
 * 4 "Drafts") as JSON text: the stored execute's answer, for a document not stored.
 */
export function draftExecuteAnswer(service: RuleServiceApi, ctx: CallContext, body: unknown): string {
  const b = objectBody(body, 'a JSON object with "ruleset" and "input"');
  if (b['ruleset'] === undefined) throw new ServiceError('BAD_REQUEST', 'ruleset is required (a ruleset document)');
  if (b['input'] === undefined) throw new ServiceError('BAD_REQUEST', 'input is required');
  const trace = traceFlag(b['trace']);
  return withNow(b['now'], () => serializeExecution(service.draftExecute(ctx, b['ruleset'], b['input'], trace)));
}

/** The 200 answer of `POST /api/v1/execute/:name/batch` as JSON text; throws a ServiceError otherwise. */
export function batchAnswer(service: RuleServiceApi, ctx: CallContext, name: string, body: unknown, maxResponseBytes = Infinity): string {
  const b = objectBody(body, 'a JSON object with an "inputs" array');
  if (b['inputs'] === undefined) throw new ServiceError('BAD_REQUEST', 'inputs is required');
  const trace = traceFlag(b['trace']);
  return withNow(b['now'], () => serializeBatch(service.executeBatch(ctx, name, b['inputs'], trace), maxResponseBytes));
}

/** The 200 answer of `POST /api/v1/eval` as JSON text; throws a ServiceError otherwise. */
export function evalAnswer(service: RuleServiceApi, ctx: CallContext, body: unknown): string {
  const b = objectBody(body, 'a JSON object with "expression" and "context"');
  if (b['now'] === undefined) return serializeEval(service.evaluate(ctx, b['expression'], b['context']));
  return withNow(b['now'], () => serializeEval(service.evaluate(ctx, b['expression'], b['context'])));
}

/** The body as an object, or a 400 naming what the route expects. */
export function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw new ServiceError('BAD_REQUEST', `request body must be ${what}`);
  return body;
}

/**
 * Runs `answer` with the body's optional `"now"` as the time now() reads (EXTENSIONS.md 3,
 * expr/dates.ts); absent or null: the clock. A `"now"` that is not an ISO 8601 date is a 400.
 */
function withNow(v: unknown, answer: () => string): string {
  let now: string | null = null;
  if (v !== undefined && v !== null) {
    now = typeof v === 'string' ? canonicalDateText(v) : null;
    if (now === null) throw new ServiceError('BAD_REQUEST', 'now must be an ISO 8601 date or date-time text, e.g. "2026-11-24T10:00:00Z"');
  }
  setRequestNow(now);
  try {
    return answer();
  } finally {
    setRequestNow(null);
  }
}

/** The optional `trace` flag of an execute body. */
function traceFlag(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ServiceError('BAD_REQUEST', 'trace must be a boolean');
  return v;
}
