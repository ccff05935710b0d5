/**
 * Canonical JSON (DECISIONS.md 6, SPEC.md "Authentication" item 3): the byte form that rule
 * signatures cover and that the compiled `.svc` payload holds.
 *
 * - object keys sorted by Unicode code point at every depth (NOT by UTF-16 code unit, which
 *   is what `Array.prototype.sort` does: the two orders differ for astral characters);
 * - no whitespace;
 * - numbers and strings exactly as `JSON.stringify` writes them (`1.0` → `1`, `1e21` → `1e+21`);
 * - members whose value is `undefined`, a function or a symbol are dropped, and such array
 *   elements become `null`, like `JSON.stringify`; `toJSON()` is honoured the same way.
 */

/**
 * Compares two strings by Unicode code point (lexicographic over code points).
 * NOTE: a plain `<` compares UTF-16 code units; that order is wrong when a key mixes
 * astral characters (U+10000 and up, stored as surrogates 0xD800-0xDFFF) with BMP
 * characters above U+DFFF (e.g. U+FF61), so we walk code points.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Fast path: neither unit is a surrogate, code unit order equals code point order.
    const sa = ca >= 0xd800 && ca <= 0xdfff;
    const sb = cb >= 0xd800 && cb <= 0xdfff;
    if (!sa && !sb) return ca - cb;
    const pa = a.codePointAt(i) as number;
    const pb = b.codePointAt(i) as number;
    if (pa !== pb) return pa - pb;
  }
  return a.length - b.length;
}

/** Error thrown when a value cannot be written as canonical JSON (cycle, BigInt). */
export class CanonicalJsonError extends TypeError {
  override readonly name = 'CanonicalJsonError';
}

/**
 * Canonical JSON text of `value`. Throws `CanonicalJsonError` on cycles, BigInt values and a
 * top-level value that has no JSON form (undefined, function, symbol). Very deep nesting
 * throws a `RangeError`, as `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  const text = write(value, '', new Set<object>());
  if (text === undefined) throw new CanonicalJsonError(`canonical JSON: a top-level ${typeof value} is not JSON`);
  return text;
}

/** Canonical JSON of a rule document without its top-level `_signature` member (the signed bytes). */
export function unsignedCanonical(doc: unknown): string {
  if (isJsonObject(doc) && Object.hasOwn(doc, '_signature')) {
    // NOTE: spread (CreateDataProperty) keeps an own `__proto__` key as data; Object.assign would not.
    const { _signature: _dropped, ...rest } = doc;
    return canonicalJson(rest);
  }
  return canonicalJson(doc);
}

/** UTF-8 bytes of `unsignedCanonical(doc)`: what a rule signature signs. */
export function signedBytes(doc: unknown): Buffer {
  return Buffer.from(unsignedCanonical(doc), 'utf8');
}

function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function write(value: unknown, key: string, stack: Set<object>): string | undefined {
  let v = value;
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: (k: string) => unknown }).toJSON(key);
  }
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return JSON.stringify(v); // non-finite → "null", like JSON.stringify
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      throw new CanonicalJsonError('canonical JSON: BigInt values are not JSON');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (v === null) return 'null';
  const obj = v as object;
  if (obj instanceof Number || obj instanceof String || obj instanceof Boolean) {
    return JSON.stringify(obj);
  }
  if (stack.has(obj)) throw new CanonicalJsonError('canonical JSON: value contains a cycle');
  stack.add(obj);
  try {
    if (Array.isArray(obj)) {
      const parts: string[] = [];
      for (let i = 0; i < obj.length; i++) {
        parts.push(write(obj[i], String(i), stack) ?? 'null');
      }
      return `[${parts.join(',')}]`;
    }
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record).sort(compareCodePoints);
    const parts: string[] = [];
    for (const k of keys) {
      const text = write(record[k], k, stack);
      if (text !== undefined) parts.push(`${JSON.stringify(k)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    stack.delete(obj);
  }
}
