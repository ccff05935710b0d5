/**
 * Hand-written lexer of the expression language. Turns source text into a token array (the
 * source is at most 4096 characters, so tokenising up front is cheap and keeps the parser simple).
 * Throws only `ExprSyntaxError`.
 */
import { ExprSyntaxError } from './errors.js';

/** Kinds of tokens. `ident` includes the reserved words (see `KEYWORDS`). */
export type TokenKind = 'number' | 'string' | 'ident' | 'var' | 'data' | 'op' | 'eof';

/** One token. `pos`/`end` are 0-based offsets (end exclusive) into the source. */
export interface Token {
  readonly kind: TokenKind;
  /** Operator/punctuation text, identifier or variable name (without `$`), or source slice. */
  readonly text: string;
  /** Decoded value of a `number` or `string` token. */
  readonly value: number | string | null;
  readonly pos: number;
  readonly end: number;
}

/** Reserved words: they cannot start a path (`a.in` after a dot is still a key). */
export const KEYWORDS: ReadonlySet<string> = new Set(['in', 'not', 'if', 'then', 'else', 'true', 'false', 'null']);

/** Operators and punctuation, longest first for maximal munch. */
const TWO_CHAR_OPS = new Set(['||', '&&', '==', '!=', '<=', '>=']);
const ONE_CHAR_OPS = new Set(['<', '>', '+', '-', '*', '/', '%', '!', '(', ')', '[', ']', ',', '.']);

/** Hints for characters that are half of an operator. */
const HINTS: Readonly<Record<string, string>> = { '=': " (use '==' to compare)", '&': " (use '&&')", '|': " (use '||')" };

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '/': '/',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c);
}

function isHex(c: string): boolean {
  return /^[0-9a-fA-F]$/.test(c);
}

/** Tokenises `source`; the last token is always `eof` at `source.length`. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const n = source.length;
  let i = 0;
  while (i < n) {
    const c = source.charCodeAt(i);
    // Whitespace: space, tab, line feed, carriage return.
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    if (isDigit(c)) {
      const end = scanNumber(source, i);
      const text = source.slice(i, end);
      const value = Number(text);
      if (!Number.isFinite(value)) throw new ExprSyntaxError('INVALID_NUMBER', `number out of range '${text}'`, i);
      tokens.push({ kind: 'number', text, value, pos: i, end });
      i = end;
      continue;
    }
    if (c === 34 || c === 39) {
      const [value, end] = scanString(source, i);
      tokens.push({ kind: 'string', text: source.slice(i, end), value, pos: i, end });
      i = end;
      continue;
    }
    if (isIdentStart(c)) {
      let end = i + 1;
      while (end < n && isIdentPart(source.charCodeAt(end))) end++;
      tokens.push({ kind: 'ident', text: source.slice(i, end), value: null, pos: i, end });
      i = end;
      continue;
    }
    if (c === 36 /* $ */) {
      let end = i + 1;
      if (end < n && isIdentStart(source.charCodeAt(end))) {
        while (end < n && isIdentPart(source.charCodeAt(end))) end++;
        tokens.push({ kind: 'var', text: source.slice(i + 1, end), value: null, pos: i, end });
        i = end;
        continue;
      }
      throw new ExprSyntaxError('UNEXPECTED_CHARACTER', `unexpected character '$'`, i);
    }
    if (c === 64 /* @ */) {
      // Reference data (EXTENSIONS.md 3): `@name` names a dataset of the tenant (expr/data-ref.ts).
      let end = i + 1;
      if (end < n && isIdentStart(source.charCodeAt(end))) {
        while (end < n && isIdentPart(source.charCodeAt(end))) end++;
        tokens.push({ kind: 'data', text: source.slice(i + 1, end), value: null, pos: i, end });
        i = end;
        continue;
      }
      throw new ExprSyntaxError('UNEXPECTED_CHARACTER', `unexpected character '@'`, i);
    }
    const two = source.slice(i, i + 2);
    if (TWO_CHAR_OPS.has(two)) {
      tokens.push({ kind: 'op', text: two, value: null, pos: i, end: i + 2 });
      i += 2;
      continue;
    }
    const one = source[i]!;
    if (ONE_CHAR_OPS.has(one)) {
      tokens.push({ kind: 'op', text: one, value: null, pos: i, end: i + 1 });
      i++;
      continue;
    }
    const cp = source.codePointAt(i)!;
    const hint = HINTS[one] ?? '';
    throw new ExprSyntaxError('UNEXPECTED_CHARACTER', `unexpected character ${describeChar(cp)}${hint}`, i);
  }
  tokens.push({ kind: 'eof', text: '', value: null, pos: n, end: n });
  return tokens;
}

function describeChar(cp: number): string {
  // Printable ASCII is quoted as is; anything else is shown as a code point so the message stays readable.
  if (cp > 32 && cp < 127) return `'${String.fromCodePoint(cp)}'`;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * number := digits ( '.' digits )? ( ('e'|'E') ('+'|'-')? digits )?
 * A number directly followed by a letter, digit, `_`, `$` or another `.` is invalid (`1x`, `1.`, `1.2.3`).
 */
function scanNumber(source: string, start: number): number {
  const n = source.length;
  let i = start;
  const bad = (end: number): never => {
    let stop = end;
    while (stop < n && (isIdentPart(source.charCodeAt(stop)) || source[stop] === '.')) stop++;
    throw new ExprSyntaxError('INVALID_NUMBER', `invalid number '${source.slice(start, Math.max(stop, end))}'`, start);
  };
  while (i < n && isDigit(source.charCodeAt(i))) i++;
  if (source[i] === '.') {
    i++;
    if (!(i < n && isDigit(source.charCodeAt(i)))) bad(i);
    while (i < n && isDigit(source.charCodeAt(i))) i++;
  }
  if (source[i] === 'e' || source[i] === 'E') {
    i++;
    if (source[i] === '+' || source[i] === '-') i++;
    if (!(i < n && isDigit(source.charCodeAt(i)))) bad(i);
    while (i < n && isDigit(source.charCodeAt(i))) i++;
  }
  if (i < n) {
    const c = source.charCodeAt(i);
    if (isIdentPart(c) || c === 36 || c === 46) bad(i + 1);
  }
  return i;
}

/**
 * string := '"' char* '"' | "'" char* "'"
 * Escapes: \n \t \r \b \f \/ \\ \" \' \uXXXX (exactly four hex digits). Any other character,
 * including a raw line break, stands for itself.
 */
function scanString(source: string, start: number): [string, number] {
  const quote = source[start];
  const n = source.length;
  let out = '';
  let chunk = start + 1;
  let i = start + 1;
  while (i < n) {
    const ch = source[i]!;
    if (ch === quote) return [out + source.slice(chunk, i), i + 1];
    if (ch !== '\\') {
      i++;
      continue;
    }
    out += source.slice(chunk, i);
    const esc = source[i + 1];
    if (esc === undefined) break;
    const simple = SIMPLE_ESCAPES[esc];
    if (simple !== undefined) {
      out += simple;
      i += 2;
    } else if (esc === 'u') {
      const hex = source.slice(i + 2, i + 6);
      if (hex.length !== 4 || ![...hex].every(isHex)) {
        throw new ExprSyntaxError('INVALID_ESCAPE', `invalid escape '\\u${hex.replace(/[^0-9a-fA-F].*$/s, '')}'`, i);
      }
      out += String.fromCharCode(parseInt(hex, 16));
      i += 6;
    } else {
      const cp = source.codePointAt(i + 1)!;
      const shown = cp > 32 && cp < 127 ? String.fromCodePoint(cp) : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      throw new ExprSyntaxError('INVALID_ESCAPE', `invalid escape '\\${shown}'`, i);
    }
    chunk = i;
  }
  throw new ExprSyntaxError('UNTERMINATED_STRING', 'unterminated string', start);
}
