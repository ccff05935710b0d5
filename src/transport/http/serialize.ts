/**
 * Response serializers of the hot HTTP routes (used by ./execution-answers.ts for both the
 * fastify routes and the hot dispatcher): the fixed envelope of an execution
 * result and of an `/eval` answer is written from a template; the arbitrary JSON inside
 * (`output`, `result`) goes through JSON.stringify. The text is byte-for-byte what
 * JSON.stringify gives for the same object: any other shape (a trace, an extra key, another
 * key order, a non-finite number) falls back to JSON.stringify itself.
 *
 * NOTE (speed): a terminal's static output is frozen and shared by every execution that ends
 * there (src/ruleset/compile.ts), so the answer's text up to the duration is computed once per
 * terminal and cached by the output's identity. Only frozen outputs are cached; expression
 * outputs are fresh objects.
 */
import type { ExecutionResult } from '../../ruleset/result.js';
import type { BatchResult, EvalResult } from '../../service/types.js';
import { answerTooLarge } from '../answer-bound.js';

/** Content-Type of the answers written here (both request paths send it). */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** The JSON text of an execution result up to `"duration_us":`, for one frozen output. */
interface Envelope {
  readonly code: string;
  readonly message: string;
  readonly prefix: string;
}

/** Envelope per frozen (static terminal) output object. */
const frozenEnvelope = new WeakMap<object, Envelope>();

/** The text before the duration. */
function envelopeText(code: string, message: string, output: object): string {
  return `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)},"output":${JSON.stringify(output)},"duration_us":`;
}

/**
 * `text` as one flat string. NOTE (speed, bench/NOTES.md "Seventh session"): a template literal
 * makes a tree of string pieces; a cached prefix kept that way is walked piece by piece each
 * time an answer is written (a cold piece each, with traffic spread over many rulesets). A
 * round trip through UTF-8 is exact here: JSON text has no lone surrogates.
 */
function flat(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** The text before the duration: cached for frozen outputs (one per terminal step). */
function envelopePrefix(code: string, message: string, output: object): string {
  if (!Object.isFrozen(output)) return envelopeText(code, message, output);
  let env = frozenEnvelope.get(output);
  // NOTE: a terminal's output object comes with its own code and message; compared anyway.
  if (env === undefined || env.code !== code || env.message !== message) {
    env = { code, message, prefix: flat(envelopeText(code, message, output)) };
    frozenEnvelope.set(output, env);
  }
  return env.prefix;
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
  // NOTE: for a finite number, String() and JSON.stringify() give the same text.
  return `${envelopePrefix(code, message, output)}${us}}`;
}

/**
 * Serializes a batch answer (POST /execute/:name/batch) exactly as JSON.stringify would: each
 * item through `serializeExecution` (a cached envelope per terminal; error items and any other
 * shape fall back to JSON.stringify inside it). About 3x faster than JSON.stringify on a batch
 * of 10,000 (bench/NOTES.md). The text stops growing once it is longer than `maxChars`
 * (LIMIT_EXCEEDED, EXTENSIONS.md 6 "Answers": a string longer than the byte bound is over it).
 */
export function serializeBatch(b: BatchResult, maxChars = Infinity): string {
  let i = 0;
  for (const key in b) {
    if (i === 0 ? key !== 'results' : i === 1 ? key !== 'summary' : true) return JSON.stringify(b);
    i++;
  }
  const results = b.results as unknown;
  if (i !== 2 || !Array.isArray(results)) return JSON.stringify(b);
  let text = '{"results":[';
  for (let k = 0; k < results.length; k++) {
    if (k > 0) text += ',';
    const item: unknown = results[k];
    // NOTE: JSON.stringify writes null for an array element that is not a JSON value.
    text += typeof item === 'object' && item !== null ? serializeExecution(item as ExecutionResult) : (JSON.stringify(item) ?? 'null');
    if (text.length > maxChars) throw answerTooLarge(text.length, maxChars);
  }
  return `${text}],"summary":${JSON.stringify(b.summary)}}`;
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
