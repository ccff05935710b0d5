/**
 * Reading rule files (DECISIONS.md 4: `<name>.json`, `.yaml`/`.yml` and compiled `.svc` files
 * in the rules directory; the signing CLIs read the same formats).
 *
 * Every format yields plain JSON data: objects, arrays, strings, finite numbers, booleans and
 * null. Keys named `__proto__` are refused in every format (NOTE: JSON.parse and the yaml package
 * make them harmless own properties, but a later `Object.assign` or deep merge by any consumer
 * would turn them into a prototype; the HTTP body parser refuses them too). YAML is read as a
 * single YAML 1.2 core-schema document without custom or YAML 1.1 tags, merge keys, duplicate
 * or non-string keys, and with at most `YAML_MAX_ALIAS_COUNT` alias expansions
 * (billion-laughs protection).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { decodeSvc, SvcFormatError } from './svc-format.js';

/** The formats a rule file can have. */
export type RuleFileFormat = 'json' | 'yaml' | 'svc';

/** Largest rule file read (64 MiB), in any format. */
export const MAX_RULE_FILE_BYTES = 64 * 1024 * 1024;
/** Limit on alias expansions in one YAML document (the yaml package's `maxAliasCount`). */
export const YAML_MAX_ALIAS_COUNT = 100;
/** Deepest nesting of objects and arrays accepted in a rule file. */
export const MAX_NESTING_DEPTH = 256;

/** A rule file that cannot be read; the message names the file and the reason. */
export class RuleFileError extends Error {
  override readonly name = 'RuleFileError';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/**
 * The bytes of the rule file at `path`. A file over `MAX_RULE_FILE_BYTES` is refused from its
 * size, before any of it is read (a huge file in the rules directory never reaches memory); at
 * most the size found is read, so a file that grows meanwhile cannot make the read unbounded
 * (its decode then fails, and a later read takes it whole). Throws `RuleFileError` when too
 * large, the file system's error otherwise.
 */
export function readRuleFileSync(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_RULE_FILE_BYTES) throw tooLarge(path, size);
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, null);
      if (n === 0) break;
      got += n;
    }
    return got === size ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** `readRuleFileSync` without blocking the event loop (the watcher's reloads). */
export function readRuleFile(path: string): Promise<Buffer> {
  return readFileBounded(path, MAX_RULE_FILE_BYTES, (size) => tooLarge(path, size));
}

/**
 * The bytes of the file at `path`; when it is larger than `maxBytes`, the error of `tooLarge` is
 * thrown from its size, before any of it is read. At most the size found is read (a file that
 * grows meanwhile is cut there). The bounded read of rule files, shadow files and data files.
 */
export async function readFileBounded(path: string, maxBytes: number, tooLarge: (size: number) => Error): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw tooLarge(size);
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await handle.read(buf, got, size - got, null);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === size ? buf : buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}

function tooLarge(path: string, size: number): RuleFileError {
  return new RuleFileError(path, `file is ${size} bytes, over the ${MAX_RULE_FILE_BYTES}-byte limit`);
}

/** Format of a rule file by its extension (case-insensitive), or `undefined` if not a rule file. */
export function ruleFileFormat(path: string): RuleFileFormat | undefined {
  const m = /\.([A-Za-z]+)$/.exec(path);
  switch (m?.[1]?.toLowerCase()) {
    case 'json':
      return 'json';
    case 'yaml':
    case 'yml':
      return 'yaml';
    case 'svc':
      return 'svc';
    default:
      return undefined;
  }
}

/**
 * Decodes a rule file's bytes by the extension of `path` (.json, .yaml/.yml, .svc) into a
 * JSON object (a ruleset document, not validated here; a signed `.svc` yields a rebuilt
 * `_signature` block). Throws `RuleFileError` naming the file and the reason.
 * A `.svc` file needs `initSvcCodec()` to have completed.
 */
export function decodeRuleFile(path: string, bytes: Uint8Array): Record<string, unknown> {
  const format = ruleFileFormat(path);
  if (!format) throw new RuleFileError(path, 'unknown rule file extension (expected .json, .yaml, .yml or .svc)');
  if (bytes.length > MAX_RULE_FILE_BYTES) throw tooLarge(path, bytes.length);
  let value: unknown;
  try {
    value = decodeByFormat(format, bytes);
  } catch (err) {
    if (err instanceof RuleFileError) throw err;
    const reason = err instanceof SvcFormatError || err instanceof ParseProblem ? err.message : `cannot decode: ${(err as Error)?.message ?? String(err)}`;
    throw new RuleFileError(path, reason);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RuleFileError(path, `a rule file must hold an object (a ruleset), got ${describe(value)}`);
  }
  const problem = plainDataProblem(value);
  if (problem) throw new RuleFileError(path, problem);
  return value as Record<string, unknown>;
}

/** Parses YAML rule text into plain data (one document, restrictions above). Throws on problems. */
export function parseYamlRule(text: string): unknown {
  const doc = parseDocument(text, {
    schema: 'core',
    resolveKnownTags: false,
    merge: false,
    stringKeys: true,
    uniqueKeys: true,
    strict: true,
    prettyErrors: true,
    logLevel: 'error',
  });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new ParseProblem(`invalid YAML: ${firstLine(problem.message)}`);
  try {
    return doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  } catch (err) {
    throw new ParseProblem(`invalid YAML: ${firstLine((err as Error).message)}`);
  }
}

/**
 * Why `value` is not plain JSON data (a `__proto__` key, a non-finite number, a non-plain
 * object, nesting deeper than `MAX_NESTING_DEPTH`), with its path; `undefined` when it is.
 */
export function plainDataProblem(value: unknown): string | undefined {
  // NOTE (start time, bench/NOTES.md "Many rulesets"): a first walk only tests (no path text,
  // no stack entries); it accepts less than the full walk, which runs when it refuses.
  if (isPlainData(value, 0)) return undefined;
  return plainDataProblemAt(value);
}

/** True when `v` is plain JSON data within the nesting limit (`plainDataProblem` finds nothing). */
function isPlainData(v: unknown, depth: number): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v !== 'object' || depth >= MAX_NESTING_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isPlainData(v[i], depth + 1)) return false;
    // A hole reads as undefined and fails here; the full walk (which skips holes) then decides.
    return true;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key === '__proto__' || !isPlainData((v as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function plainDataProblemAt(value: unknown): string | undefined {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: '$', depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${path}: ${v} is not a JSON number`;
      continue;
    }
    if (typeof v !== 'object') return `${path}: a ${typeof v} is not JSON data`;
    if (depth >= MAX_NESTING_DEPTH) return `${path}: nested deeper than ${MAX_NESTING_DEPTH} levels`;
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ v: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return `${path}: not a plain JSON object`;
    for (const key of Object.keys(v)) {
      if (key === '__proto__') return `${path}: the key "__proto__" is not allowed`;
      stack.push({ v: (v as Record<string, unknown>)[key], path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return undefined;
}

/** A parse failure whose message is ready for the user. */
class ParseProblem extends Error {}

function decodeByFormat(format: RuleFileFormat, bytes: Uint8Array): unknown {
  if (format === 'svc') return decodeSvc(bytes).doc;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ParseProblem('file is not valid UTF-8');
  }
  if (format === 'yaml') return parseYamlRule(text);
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new ParseProblem(`invalid JSON: ${(err as Error).message}`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
