/**
 * Parsers for the raw text of one option value (from a flag or an `SVC_*` variable).
 * Each returns the typed value or throws `ValueError` whose message completes the sentence
 * "<--flag or SVC_VAR> must be ..."; `config.ts` adds the name and wraps it in a `ConfigError`.
 */

/** A bind address: host (without IPv6 brackets) and port (0 = ephemeral). */
export interface Address {
  /** Host name or IP literal, e.g. `0.0.0.0`, `localhost`, `::1` (brackets removed). */
  readonly host: string;
  /** TCP port 0-65535; 0 asks the OS for a free port (tests use it). */
  readonly port: number;
}

/** A value that failed to parse; `message` reads "must be ..., got "<raw>"". */
export class ValueError extends Error {
  override readonly name = 'ValueError';
}

/** Quotes the raw value for an error message. */
function got(raw: string): string {
  return `got ${JSON.stringify(raw)}`;
}

const TRUE_WORDS = new Set(['true', '1', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'no']);

/** `true/false/1/0/yes/no`, case-insensitive, surrounding spaces ignored. */
export function parseBool(raw: string): boolean {
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ValueError(`must be a boolean (true, false, 1, 0, yes, no), ${got(raw)}`);
}

/** Describes an integer range for messages: "a positive integer", "an integer from 0 to 65535". */
function describeInt(min: number, max: number | undefined): string {
  if (max !== undefined) return `an integer from ${min} to ${max}`;
  if (min === 1) return 'a positive integer';
  if (min === 0) return 'a non-negative integer';
  return `an integer >= ${min}`;
}

/** Decimal digits only (no sign, exponent or fraction), within `[min, max]`. */
export function parseInteger(raw: string, min: number, max?: number): number {
  const text = raw.trim();
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    throw new ValueError(`must be ${describeInt(min, max)}, ${got(raw)}`);
  }
  return value;
}

/** A plain decimal number (`12`, `12.5`) within `[min, max]`. */
export function parseDecimal(raw: string, min: number, max: number): number {
  const text = raw.trim();
  const value = /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ValueError(`must be a number from ${min} to ${max}, ${got(raw)}`);
  }
  return value;
}

/** One of `choices`, case-insensitive; returns the choice as written in `choices`. */
export function parseChoice<T extends string>(raw: string, choices: readonly T[]): T {
  const word = raw.trim().toLowerCase();
  const match = choices.find((c) => c === word);
  if (match === undefined) throw new ValueError(`must be one of ${choices.join(', ')}, ${got(raw)}`);
  return match;
}

const ADDRESS_HELP = 'host:port with a port from 0 to 65535 (IPv6 as [::1]:8080)';

/**
 * `host:port`, `[ipv6]:port` or `:port` (host `0.0.0.0`). The host must not contain spaces,
 * `/`, or (unbracketed) `:`.
 */
export function parseAddress(raw: string): Address {
  const text = raw.trim();
  const m = /^(?:\[([^\]\s/]+)\]|([^\s:/[\]]*)):([0-9]{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) throw new ValueError(`must be ${ADDRESS_HELP}, ${got(raw)}`);
  const host = m[1] ?? (m[2] === '' ? '0.0.0.0' : (m[2] as string));
  return { host, port };
}

/** Any non-empty text, kept as given (paths keep their spaces). */
export function parseText(raw: string): string {
  if (raw.trim() === '') throw new ValueError('must not be empty');
  return raw;
}

/** Text that must match `pattern`; `what` describes it for the message. */
export function parsePattern(raw: string, pattern: RegExp, what: string): string {
  const text = raw.trim();
  if (!pattern.test(text)) throw new ValueError(`must be ${what}, ${got(raw)}`);
  return text;
}

/** An absolute `http://` or `https://` URL. */
export function parseHttpUrl(raw: string): string {
  const text = raw.trim();
  let ok = false;
  try {
    const url = new URL(text);
    ok = url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) throw new ValueError(`must be an http:// or https:// URL, ${got(raw)}`);
  return text;
}

/** Comma-separated items; spaces around items and empty items are dropped. */
export function parseList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
