/**
 * Structural diff of two ruleset documents (EXTENSIONS.md 4 "Structural diff"): the list of
 * changes at the paths validation uses, in document order (config, steps, tests). Pure.
 *
 * Granularity (docs/changing-rules.md "Structural diff"):
 * - objects are compared key by key: a key only in the new document is one `add` at its path,
 *   a key only in the old one one `remove`; a step added or removed is one change at
 *   `steps.<id>` carrying the whole step;
 * - arrays are compared index by index (`branches[0]`, `rows[2].when[1]`, `inputs[0]`,
 *   `actions[1]`): a reordered list is reported per index, a longer list as `add`s at the new
 *   indexes, a shorter one as `remove`s;
 * - a value whose JSON type differs (a string that became an object) is one `change`;
 * - units compared as a whole: a step whose `type` changed (one `change` at `steps.<id>`),
 *   `config.input_schema`, `config.metadata` and each test (`tests[0]`).
 * Key order inside an object is not a change (JSON objects are unordered).
 */
import type { JsonValue } from '../expr/ast.js';
import { joinKey, jsonEqual } from '../ruleset/json.js';
import type { RulesetDoc } from '../ruleset/model.js';
import type { StructuralChange } from './types.js';

type JsonObject = { readonly [key: string]: JsonValue };

/** Keys of `config` compared as one unit (free-form data). */
const WHOLE_CONFIG_KEYS = new Set(['input_schema', 'metadata']);

/** The changes that turn document `a` into document `b` (empty when they are the same). */
export function structuralDiff(a: RulesetDoc, b: RulesetDoc): StructuralChange[] {
  const out: StructuralChange[] = [];
  const da = a as unknown as JsonObject;
  const db = b as unknown as JsonObject;
  eachKey(da, db, '', out, (key, va, vb, at) => {
    if (key === 'config' && isObject(va) && isObject(vb)) diffConfig(va, vb, out);
    else if (key === 'steps' && isObject(va) && isObject(vb)) eachKey(va, vb, 'steps', out, (_id, sa, sb, step) => diffStep(sa, sb, step, out));
    else if (key === 'tests' && Array.isArray(va) && Array.isArray(vb)) diffArray(va, vb, 'tests', out, whole);
    else diffValue(va, vb, at, out);
  });
  return out;
}

/** Calls `same` for each key of both objects; a key of one only is an `add` or `remove`. `_signature` is not content. */
function eachKey(
  a: JsonObject,
  b: JsonObject,
  path: string,
  out: StructuralChange[],
  same: (key: string, va: JsonValue, vb: JsonValue, at: string) => void,
): void {
  for (const key of Object.keys(a)) {
    if (path === '' && key === '_signature') continue;
    const at = joinKey(path, key);
    if (!Object.hasOwn(b, key)) out.push({ op: 'remove', path: at, from: a[key]! });
    else same(key, a[key]!, b[key]!, at);
  }
  for (const key of Object.keys(b)) {
    if (path === '' && key === '_signature') continue;
    if (!Object.hasOwn(a, key)) out.push({ op: 'add', path: joinKey(path, key), to: b[key]! });
  }
}

function diffConfig(a: JsonObject, b: JsonObject, out: StructuralChange[]): void {
  eachKey(a, b, 'config', out, (key, va, vb, at) => (WHOLE_CONFIG_KEYS.has(key) ? whole(va, vb, at, out) : diffValue(va, vb, at, out)));
}

/** One step present in both: a step that changed kind is one change (its parts mean other things now). */
function diffStep(a: JsonValue, b: JsonValue, at: string, out: StructuralChange[]): void {
  if (isObject(a) && isObject(b) && a['type'] !== b['type']) whole(a, b, at, out);
  else diffValue(a, b, at, out);
}

/** One `change` when the values differ, whatever is inside. */
function whole(a: JsonValue, b: JsonValue, path: string, out: StructuralChange[]): void {
  if (!jsonEqual(a, b)) out.push({ op: 'change', path, from: a, to: b });
}

/** Objects key by key, arrays index by index, anything else as one value. */
function diffValue(a: JsonValue, b: JsonValue, path: string, out: StructuralChange[]): void {
  if (a === b) return;
  if (isObject(a) && isObject(b)) eachKey(a, b, path, out, (_k, va, vb, at) => diffValue(va, vb, at, out));
  else if (Array.isArray(a) && Array.isArray(b)) diffArray(a, b, path, out, diffValue);
  else whole(a, b, path, out);
}

function diffArray(
  a: readonly JsonValue[],
  b: readonly JsonValue[],
  path: string,
  out: StructuralChange[],
  item: (a: JsonValue, b: JsonValue, path: string, out: StructuralChange[]) => void,
): void {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) item(a[i]!, b[i]!, `${path}[${i}]`, out);
  for (let i = common; i < a.length; i++) out.push({ op: 'remove', path: `${path}[${i}]`, from: a[i]! });
  for (let i = common; i < b.length; i++) out.push({ op: 'add', path: `${path}[${i}]`, to: b[i]! });
}

function isObject(v: JsonValue): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
