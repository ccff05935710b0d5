/**
 * The bound on every answer (EXTENSIONS.md 6 "Answers"): an answer over `--max-response-bytes`
 * is not sent; the request gets `LIMIT_EXCEEDED` instead. Both transports check the text they
 * are about to send here (HTTP bodies, the JSON texts of gRPC messages).
 */
import { ServiceError } from '../service/errors.js';

/** Default of `--max-response-bytes` (10 MiB), for callers built without a configuration. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10_485_760;

/**
 * Throws LIMIT_EXCEEDED when `text` is longer than `max` bytes in UTF-8.
 * NOTE (speed): one comparison on the hot path: a string of n UTF-16 units is between n and 3n
 * UTF-8 bytes, so the bytes are counted only when 3n exceeds the bound.
 */
export function checkAnswerText(text: string, max: number): void {
  if (text.length * 3 > max) checkAnswerBytes(text.length > max ? text.length : Buffer.byteLength(text), max);
}

/** Throws LIMIT_EXCEEDED when an answer of `bytes` (at least) exceeds `max`. */
export function checkAnswerBytes(bytes: number, max: number): void {
  if (bytes > max) throw answerTooLarge(bytes, max);
}

/** The LIMIT_EXCEEDED error of an answer of (at least) `bytes` over the bound `max`. */
export function answerTooLarge(bytes: number, max: number): ServiceError {
  const size = bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${bytes} bytes`;
  return new ServiceError('LIMIT_EXCEEDED', `answer of ${size} exceeds --max-response-bytes (${max})`, { max_response_bytes: max });
}
