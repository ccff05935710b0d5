/**
 * The request handling of the execution routes, `POST /api/v1/execute/:name`,
 * `POST /api/v1/execute/:name/batch` and `POST /api/v1/eval`: body checks, the façade call, and
 * the 200 answer's JSON text. The route table (./routes.ts) calls these for both request paths
 * (the hot dispatcher and fastify), so that both answer alike.
 */
import { ServiceError } from '../../service/errors.js';
import { isPlainObject } from '../../service/json-object.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import { withRequestNow as withNow } from '../request-now.js';
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

/** The optional `trace` flag of an execute body. */
function traceFlag(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ServiceError('BAD_REQUEST', 'trace must be a boolean');
  return v;
}
