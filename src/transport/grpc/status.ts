/**
 * Maps whatever a handler threw to a gRPC status through the one error catalog
 * (src/service/errors.ts, DECISIONS.md 5): a `ServiceError` keeps its code, anything else is
 * INTERNAL. The status details carry the human message; the trailing metadata key
 * `svc-error-code` carries the catalog code (it tells TIMEOUT from REQUEST_TIMEOUT, both
 * DEADLINE_EXCEEDED), `svc-problems` the `problems` list of an error whose HTTP body has
 * one (INPUT_INVALID, an invalid ruleset), and `svc-failures` the `failures` list (TESTS_FAILED),
 * as JSON text.
 */
import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { ServiceError, toServiceError } from '../../service/errors.js';

/** Trailing metadata key holding the catalog code of an error status. */
export const ERROR_CODE_METADATA_KEY = 'svc-error-code';

/** Trailing metadata key holding the JSON text of the error's `problems` (`[{path, message}]`). */
export const PROBLEMS_METADATA_KEY = 'svc-problems';

/** Trailing metadata key holding how many problems did not fit in `svc-problems` (absent when all did). */
export const PROBLEMS_OMITTED_METADATA_KEY = 'svc-problems-omitted';

/**
 * Trailing metadata key holding the JSON text of the error's `failures` (TESTS_FAILED: the
 * ruleset's own tests that failed on PutRuleset, `[{name, expected, actual}]`), bounded like
 * `svc-problems`; `svc-failures-omitted` counts those that did not fit.
 */
export const FAILURES_METADATA_KEY = 'svc-failures';

/** Trailing metadata key holding how many failures did not fit in `svc-failures`. */
export const FAILURES_OMITTED_METADATA_KEY = 'svc-failures-omitted';

/**
 * Largest `svc-problems` value in bytes. NOTE: metadata travels as HTTP/2 headers, which peers
 * bound (grpc-js through Node: 64 KiB for all headers; gRPC C-core clients: 8 KiB soft limit),
 * and a trailer over the peer's bound fails the call. 4 KiB keeps the trailers, with the
 * status message, under the smallest common bound.
 */
export const MAX_PROBLEMS_METADATA_BYTES = 4096;

/** The catalog error of a thrown value (anything that is not a ServiceError is INTERNAL_ERROR). */
export function toCatalogError(err: unknown): ServiceError {
  return err instanceof ServiceError ? err : toServiceError(err);
}

/** The status a handler answers with for a thrown value. */
export function toGrpcStatus(err: unknown): Pick<StatusObject, 'code' | 'details' | 'metadata'> {
  const e = toCatalogError(err);
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA_KEY, e.code);
  const problems = e.details?.['problems'];
  if (Array.isArray(problems)) setList(metadata, problems, PROBLEMS_METADATA_KEY, PROBLEMS_OMITTED_METADATA_KEY);
  const failures = e.details?.['failures'];
  if (Array.isArray(failures)) setList(metadata, failures, FAILURES_METADATA_KEY, FAILURES_OMITTED_METADATA_KEY);
  return { code: e.grpcStatus, details: e.message, metadata };
}

/** Sets `key` to the bounded JSON text of `list`, and `omittedKey` when some did not fit. */
function setList(metadata: Metadata, list: readonly unknown[], key: string, omittedKey: string): void {
  const { text, omitted } = problemsMetadataText(list);
  metadata.set(key, text);
  if (omitted > 0) metadata.set(omittedKey, String(omitted));
}

/**
 * The JSON text of `problems` as a metadata value: printable ASCII only (other characters are
 * written as JSON `\uXXXX` escapes, so `JSON.parse` gives the same strings), holding the first
 * problems whose text fits in `maxBytes`; `omitted` counts the rest.
 */
export function problemsMetadataText(problems: readonly unknown[], maxBytes = MAX_PROBLEMS_METADATA_BYTES): { text: string; omitted: number } {
  let text = '[';
  let kept = 0;
  for (const p of problems) {
    const item = asciiJson(p);
    // 2: the separating comma and the closing bracket.
    if (text.length + item.length + 2 > maxBytes) break;
    text += kept === 0 ? item : `,${item}`;
    kept++;
  }
  return { text: `${text}]`, omitted: problems.length - kept };
}

/** JSON text with every character outside printable ASCII escaped (metadata values must be printable ASCII). */
function asciiJson(v: unknown): string {
  return (JSON.stringify(v) ?? 'null').replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
