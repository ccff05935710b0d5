/**
 * The input schema at run time (EXTENSIONS.md 2 "Input schema"): an execute or batch input, or a
 * filter's `known_input`, checked against the ruleset's compiled `config.input_schema` before
 * anything runs; a mismatch is 400 `INPUT_INVALID` with `problems: [{path, message}]`. A
 * ruleset without a schema, or with `input_validation: "off"`, costs one field test.
 */
import type { InputProblem, InputSchema } from '../ruleset/input-schema.js';
import { ServiceError } from './errors.js';
import type { BatchItem } from './types.js';

/** How many problems the error's message lists (the `problems` field lists all). */
const MESSAGE_PROBLEMS = 10;

/** Throws INPUT_INVALID when `schema` validates inputs and `input` does not match it. */
export function checkInput(schema: InputSchema, input: unknown): void {
  if (!schema.reject) return;
  const problems = schema.check(input);
  if (problems.length > 0) throw inputInvalid('input', problems);
}

/** Throws INPUT_INVALID when a filter's `known_input` does not match the schema (only the fields given are checked). */
export function checkKnownInput(schema: InputSchema | null, known: unknown): void {
  if (schema === null || !schema.reject) return;
  const problems = schema.checkKnown(known);
  if (problems.length > 0) throw inputInvalid('known_input', problems);
}

/** The INPUT_INVALID error: the message lists the first problems, `problems` all of them (gRPC: trailing metadata `svc-problems`). */
export function inputInvalid(what: string, problems: readonly InputProblem[]): ServiceError {
  const listed = problems.slice(0, MESSAGE_PROBLEMS).map((p) => `${p.path}: ${p.message}`);
  const more = problems.length > MESSAGE_PROBLEMS ? ` (and ${problems.length - MESSAGE_PROBLEMS} more)` : '';
  return new ServiceError('INPUT_INVALID', `${what} does not match config.input_schema: ${listed.join('; ')}${more}`, { problems: [...problems] });
}

/** The batch item of a failed input: `{error, code}`, plus `problems` for INPUT_INVALID. */
export function batchItemError(e: ServiceError): BatchItem {
  if (e.code === 'INPUT_INVALID' && e.details !== undefined) {
    return { error: e.message, code: e.code, problems: e.details['problems'] as InputProblem[] };
  }
  return { error: e.message, code: e.code };
}
