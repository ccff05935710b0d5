/**
 * `--config FILE`: reads a YAML or JSON file whose keys are the flags in snake_case
 * (`max_batch_size: 500`) into the raw option text `config.ts` parses like a flag's, so a value
 * in the file is checked exactly as the same value on the command line. JSON is read by the
 * YAML parser too (YAML 1.2 is a superset of JSON), so both give the same messages.
 */
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { FLAGS, type FlagDef } from './flags.js';

/** A config file that cannot be read or is not valid; the message names the file (and key). */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

/** One option set by the file: its raw text (parsed like flag text), and the key it came from. */
export interface FileValue {
  readonly key: string;
  readonly raw: string;
}

/** What a config file sets. */
export interface ConfigFileValues {
  /** The file as given (for messages). */
  readonly path: string;
  /** Directory that relative paths in the file resolve against (absolute). */
  readonly dir: string;
  /** Flag name → value; keys set to null (`rules_dir:`) are absent, like an empty variable. */
  readonly values: ReadonlyMap<string, FileValue>;
}

/** Flag name → config-file key (`max-batch-size` → `max_batch_size`). */
export function fileKeyOf(name: string): string {
  return name.replaceAll('-', '_');
}

/** Key → flag, for every flag a file may set (not `config` itself: one file only). */
const BY_KEY: ReadonlyMap<string, FlagDef> = new Map(FLAGS.filter((f) => f.name !== 'config').map((f) => [fileKeyOf(f.name), f]));

/**
 * Parses the text of config file `path` (read by the caller). `cwd` makes `dir` absolute.
 * Throws `ConfigFileError` for invalid YAML/JSON, a top level that is not a mapping, an
 * unknown key (all of them, each with a did-you-mean when one is near), or a value that is a
 * mapping, or a list for an option that is not a list.
 */
export function parseConfigFile(path: string, text: string, cwd: string): ConfigFileValues {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    // The first line of the message names the problem and its line and column.
    throw new ConfigFileError(`${path}: not valid YAML or JSON: ${firstLine(doc.errors[0]!.message).replace(/:$/, '')}`);
  }
  const values = new Map<string, FileValue>();
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { path, dir: dirname(resolve(cwd, path)), values };
  if (!isMap(root)) throw new ConfigFileError(`${path}: must be a mapping of option keys to values (max_batch_size: 500)`);
  const unknown: string[] = [];
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const def = BY_KEY.get(key);
    if (def === undefined) {
      unknown.push(unknownKeyText(key));
      continue;
    }
    const raw = rawText(path, key, def, pair.value as Node | null);
    if (raw !== null) values.set(def.name, { key, raw });
  }
  if (unknown.length > 0) throw new ConfigFileError(`${path}: ${unknown.join('; ')}`);
  return { path, dir: dirname(resolve(cwd, path)), values };
}

/** "unknown key "x"" with the nearest known key, or the snake_case spelling of a kebab key. */
function unknownKeyText(key: string): string {
  if (key === 'config') return 'key "config" cannot be set in a config file (give one file with --config or SVC_CONFIG)';
  const snake = key.toLowerCase().replaceAll('-', '_');
  if (snake !== key && BY_KEY.has(snake)) return `unknown key "${key}" (keys are snake_case: did you mean "${snake}"?)`;
  const near = nearest(key, BY_KEY.keys());
  return `unknown key "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
}

/**
 * The option text of one value: a scalar as written (`0600` stays `0600`, `1e3` stays `1e3`
 * and fails an integer option like `--max-batch-size=1e3` does), a list's items joined by
 * commas; null for an empty value (`rules_dir:` or `null`), which leaves the option unset.
 */
function rawText(path: string, key: string, def: FlagDef, node: Node | null): string | null {
  if (node === null || (isScalar(node) && node.value === null)) return null;
  if (isScalar(node)) {
    return typeof node.value === 'string' ? node.value : (node.source ?? String(node.value));
  }
  if (isSeq(node) && def.kind.type === 'list') {
    const items = node.items.map((item) => (isScalar(item) && item.value !== null ? String(item.value) : null));
    if (items.some((item) => item === null || item.includes(','))) {
      throw new ConfigFileError(`${path}: ${key} must be a list of plain values without commas`);
    }
    return items.join(',');
  }
  const what = isSeq(node) ? 'a list' : isMap(node) ? 'a mapping' : 'a structure';
  throw new ConfigFileError(`${path}: ${key} must be a single value, got ${what}`);
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/**
 * The candidate nearest to `word` by edit distance (at most 2, and less than the word's length),
 * or undefined. NOTE: a local copy of the idea in src/ruleset/suggest.ts: config and ruleset
 * are both layer 2, and a layer imports only lower ones.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(3, word.length);
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance with swaps of two neighbours (optimal string alignment). */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_r, i) => Array.from({ length: b.length + 1 }, (_c, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}
