/**
 * The charset rule of JSON bodies (EXTENSIONS.md 6, docs/api.md "Limits"): a body is read as
 * UTF-8, so a `Content-Type` naming another charset is 415 UNSUPPORTED_MEDIA_TYPE instead of
 * being decoded wrongly (`café` sent as latin1 would become `caf\uFFFD`).
 */
import { ServiceError } from '../../service/errors.js';

/** `charset=` parameter: its name, optional white space, the value (quoted or not). */
const CHARSET_RE = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

/** The charset a Content-Type names (lower case), or undefined when it names none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const m = CHARSET_RE.exec(contentType);
  if (m === null) return undefined;
  return (m[1] ?? m[2] ?? '').toLowerCase();
}

/** The 415 for a Content-Type whose charset is not UTF-8, or null when it is UTF-8 or absent. */
export function charsetError(contentType: string | undefined): ServiceError | null {
  const charset = charsetOf(contentType);
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return null;
  return new ServiceError('UNSUPPORTED_MEDIA_TYPE', `Content-Type charset must be utf-8 (got ${JSON.stringify(charset.slice(0, 40))})`);
}
