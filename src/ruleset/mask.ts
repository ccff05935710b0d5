/**
 * Masked paths of decision records (EXTENSIONS.md 4 "Decision records"): `config.mask` lists
 * paths like `user.ssn`, `items[0].card` or `cards[*].number`; a decision record replaces the
 * value at each path of its input and of its output by `"***"`. Pure: parsing (used by the
 * document check) and masking a copy (used by the decision log writer). The live objects are
 * never changed: only the containers on a masked path are copied, the rest is shared.
 */
import type { JsonValue } from '../expr/ast.js';
import { isPlainObject, setOwn } from './json.js';

/** What a masked value is replaced by. */
export const MASKED = '***';

/** One segment of a mask path: an object key, an array index, or every element of an array (`[*]`). */
export type MaskSegment = { readonly key: string } | { readonly index: number } | { readonly each: true };

/** A parsed mask path: one or more segments, the first a key. */
export type MaskPath = readonly MaskSegment[];

/** Longest mask path text accepted. */
const MAX_PATH_LENGTH = 512;

/**
 * Parses `text` (`a.b`, `a[0].b`, `a[*].b`; a key is any run of characters other than `.`, `[`
 * and `]`) into segments; returns the reason as a string when the text is not a path.
 */
export function parseMaskPath(text: string): MaskPath | string {
  if (text.length === 0) return 'must not be empty';
  if (text.length > MAX_PATH_LENGTH) return `must be at most ${MAX_PATH_LENGTH} characters`;
  const out: MaskSegment[] = [];
  let i = 0;
  let expectKey = true;
  while (i < text.length) {
    const c = text[i];
    if (c === '[') {
      if (out.length === 0) return 'must start with a field name';
      const close = text.indexOf(']', i);
      if (close < 0) return `unclosed '[' at ${i}`;
      const inner = text.slice(i + 1, close);
      if (inner === '*') out.push({ each: true });
      else if (/^(0|[1-9][0-9]{0,8})$/.test(inner)) out.push({ index: Number(inner) });
      else return `'[${inner}]' at ${i} is not an array index or [*]`;
      i = close + 1;
      expectKey = false;
      continue;
    }
    if (c === '.') {
      if (expectKey) return `empty field name at ${i}`;
      i++;
      expectKey = true;
      continue;
    }
    if (c === ']') return `unexpected ']' at ${i}`;
    if (!expectKey) return `expected '.' or '[' at ${i}`;
    let end = i;
    while (end < text.length && text[end] !== '.' && text[end] !== '[' && text[end] !== ']') end++;
    out.push({ key: text.slice(i, end) });
    i = end;
    expectKey = false;
  }
  if (expectKey) return 'must not end with a dot';
  return out;
}

/** Parses every path of a valid `config.mask` (invalid entries are skipped: the document check reports them). */
export function parseMaskPaths(mask: unknown): MaskPath[] {
  if (!Array.isArray(mask)) return [];
  const out: MaskPath[] = [];
  for (const text of mask) {
    if (typeof text !== 'string') continue;
    const path = parseMaskPath(text);
    if (typeof path !== 'string') out.push(path);
  }
  return out;
}

/** Reports every problem of a `config.mask` value through `add` (path `config.mask[i]`). */
export function checkMask(mask: JsonValue | undefined, add: (path: string, message: string) => void): void {
  if (mask === undefined) return;
  if (!Array.isArray(mask)) {
    add('config.mask', 'must be an array of paths (e.g. ["user.ssn", "items[*].card"])');
    return;
  }
  mask.forEach((text, i) => {
    if (typeof text !== 'string') {
      add(`config.mask[${i}]`, 'must be a string (a path like user.ssn)');
      return;
    }
    const path = parseMaskPath(text);
    if (typeof path === 'string') add(`config.mask[${i}]`, path);
  });
}

/**
 * `value` with the value at each of `paths` replaced by `"***"` (paths that lead nowhere change
 * nothing). Returns `value` itself when nothing was masked; never mutates it.
 */
export function maskCopy(value: unknown, paths: readonly MaskPath[]): unknown {
  let out = value;
  for (const path of paths) out = maskAt(out, path, 0);
  return out;
}

/** `value` with `path` from segment `i` on masked; the same reference when nothing changed. */
function maskAt(value: unknown, path: MaskPath, i: number): unknown {
  const seg = path[i] as MaskSegment;
  const last = i === path.length - 1;
  if ('key' in seg) {
    if (!isPlainObject(value) || !Object.hasOwn(value, seg.key)) return value;
    const child = value[seg.key];
    const next = last ? MASKED : maskAt(child, path, i + 1);
    if (next === child) return value;
    const copy: Record<string, JsonValue> = {};
    for (const k of Object.keys(value)) setOwn(copy, k, value[k] as JsonValue);
    setOwn(copy, seg.key, next as JsonValue);
    return copy;
  }
  if (!Array.isArray(value)) return value;
  if ('index' in seg) {
    if (seg.index >= value.length) return value;
    const child: unknown = value[seg.index];
    const next = last ? MASKED : maskAt(child, path, i + 1);
    if (next === child) return value;
    const copy = value.slice();
    copy[seg.index] = next;
    return copy;
  }
  let copy: unknown[] | null = null;
  for (let k = 0; k < value.length; k++) {
    const child: unknown = value[k];
    const next = last ? MASKED : maskAt(child, path, i + 1);
    if (next === child) continue;
    copy ??= value.slice();
    copy[k] = next;
  }
  return copy ?? value;
}
