/**
 * Validation of the filter request body (SPEC.md "POST /rulesets/:name/filter" request table).
 * Every problem is a `BAD_REQUEST` `FilterError` naming the field (a 400 once the service maps
 * it). Optional fields that are absent or null take their defaults; unknown fields are ignored.
 */
import type { JsonValue } from '../expr/ast.js';
import { canonicalDateText } from '../expr/dates.js';
import { badFilterRequest, type FilterError } from './errors.js';
import { DEFAULT_MAX_PATHS, FILTER_FORMATS, type FilterFormat, type FilterRequest } from './types.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(message: string): FilterError {
  return badFilterRequest(message);
}

/** Validates a filter request body and applies the defaults; throws a `BAD_REQUEST` `FilterError`. */
export function parseFilterRequest(body: unknown): FilterRequest {
  if (!isObject(body)) throw bad('filter request body must be a JSON object');

  const known = body['known_input'];
  if (known === undefined) throw bad('known_input is required');
  if (!isObject(known)) throw bad('known_input must be an object');

  const targets = body['target_results'];
  if (targets === undefined) throw bad('target_results is required');
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) {
    throw bad('target_results must be an array of strings');
  }
  if (targets.length === 0) throw bad('target_results must not be empty');

  const formatRaw = body['format'] ?? 'sql';
  if (typeof formatRaw !== 'string' || !FILTER_FORMATS.includes(formatRaw as FilterFormat)) {
    throw bad(`format must be one of ${FILTER_FORMATS.join(', ')}`);
  }

  const mappingRaw = body['field_mapping'] ?? {};
  if (!isObject(mappingRaw)) throw bad('field_mapping must be an object mapping field paths to column names');
  const mapping: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [field, column] of Object.entries(mappingRaw)) {
    if (typeof column !== 'string') throw bad(`field_mapping['${field}'] must be a string`);
    mapping[field] = column;
  }

  const maxPaths = body['max_paths'] ?? DEFAULT_MAX_PATHS;
  if (typeof maxPaths !== 'number' || !Number.isSafeInteger(maxPaths) || maxPaths < 0) {
    throw bad('max_paths must be a non-negative integer (0 means unlimited)');
  }

  // Dates (EXTENSIONS.md 3): the optional time now() reads.
  const nowRaw = body['now'] ?? null;
  const now = nowRaw === null ? null : typeof nowRaw === 'string' ? canonicalDateText(nowRaw) : null;
  if (nowRaw !== null && now === null) throw bad('now must be an ISO 8601 date or date-time text, e.g. "2026-11-24T10:00:00Z"');

  return Object.freeze({
    now,
    known_input: known as Record<string, JsonValue>,
    target_results: Object.freeze([...(targets as string[])]),
    format: formatRaw as FilterFormat,
    field_mapping: Object.freeze(mapping),
    max_paths: maxPaths,
  });
}
