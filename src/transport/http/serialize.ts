/**
 * Response serializers of the hot HTTP routes (issue 9): the fixed envelope of an execution
 * result and of an `/eval` answer is written from a template; the arbitrary JSON inside
 * (`output`, `result`) goes through JSON.stringify. The text is byte-for-byte what
 * JSON.stringify gives for the same object: any other shape (a trace, an extra key, another
 * key order, a non-finite number) falls back to JSON.stringify itself.
 *
 * NOTE (speed): a terminal's static output is deep-frozen and shared by every execution that
 * ends there (src/ruleset/compile.ts), so its JSON text is computed once and cached by
 * identity. Only frozen outputs are cached; expression outputs are fresh objects.
 */
import type { ExecutionResult } from '../../ruleset/result.js';
import type { EvalResult } from '../../service/types.js';

const frozenJson = new WeakMap<object, string>();

/** JSON text of an output object (cached for frozen ones). */
function outputJson(output: object): string {
  if (!Object.isFrozen(output)) return JSON.stringify(output);
  let text = frozenJson.get(output);
  if (text === undefined) {
    text = JSON.stringify(output);
    frozenJson.set(output, text);
  }
  return text;
}

/** True when `r` has exactly the keys `code, message, output, duration_us`, in that order. */
function isPlainExecution(r: ExecutionResult): boolean {
  let i = 0;
  for (const key in r) {
    // NOTE: for-in walks own enumerable keys in insertion order (no inherited ones on these
    // plain objects); the comparisons are of internalized strings.
    if (i === 0 ? key !== 'code' : i === 1 ? key !== 'message' : i === 2 ? key !== 'output' : i === 3 ? key !== 'duration_us' : true) return false;
    i++;
  }
  return i === 4;
}

/** Serializes an execution result (POST /execute/:name) exactly as JSON.stringify would. */
export function serializeExecution(r: ExecutionResult): string {
  const { code, message, output, duration_us: us } = r;
  if (
    typeof code !== 'string' ||
    typeof message !== 'string' ||
    typeof output !== 'object' ||
    output === null ||
    Array.isArray(output) ||
    typeof us !== 'number' ||
    !Number.isFinite(us) ||
    !isPlainExecution(r)
  ) {
    return JSON.stringify(r);
  }
  return `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)},"output":${outputJson(output)},"duration_us":${JSON.stringify(us)}}`;
}

/** Serializes an `/eval` answer exactly as JSON.stringify would. */
export function serializeEval(r: EvalResult): string {
  let i = 0;
  for (const key in r) {
    if (i === 0 ? key !== 'result' : i === 1 ? key !== 'parsed' : true) return JSON.stringify(r);
    i++;
  }
  const value = r.result;
  // undefined, functions, symbols and bigints are not JSON values: let JSON.stringify decide.
  if (i !== 2 || typeof r.parsed !== 'string' || value === undefined || typeof value === 'function' || typeof value === 'bigint' || typeof value === 'symbol') {
    return JSON.stringify(r);
  }
  const text = JSON.stringify(value);
  if (text === undefined) return JSON.stringify(r);
  return `{"result":${text},"parsed":${JSON.stringify(r.parsed)}}`;
}

/**
 * Route options that make fastify use `serializeExecution` for 200 answers of the execute
 * route (errors keep the default serializer). The schema only documents the envelope.
 */
export const EXECUTE_ROUTE = Object.freeze({
  schema: {
    response: {
      200: {
        type: 'object',
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          output: { type: 'object', additionalProperties: true },
          duration_us: { type: 'integer' },
          trace: { type: 'object', additionalProperties: true },
        },
      },
    },
  },
  serializerCompiler: () => serializeExecution as (data: unknown) => string,
});

/** Route options of `/eval` (see `EXECUTE_ROUTE`). */
export const EVAL_ROUTE = Object.freeze({
  schema: { response: { 200: { type: 'object', properties: { result: {}, parsed: { type: 'string' } } } } },
  serializerCompiler: () => serializeEval as (data: unknown) => string,
});
