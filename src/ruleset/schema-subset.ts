/**
 * A validator for the common subset of JSON Schema that `config.input_schema` uses, equivalent to
 * the ajv validator it replaces: the same verdict and the same errors (keyword, instance path,
 * params, message) in the same order, with ajv configured as ./input-schema.ts configures it
 * (`allErrors`, strict, no coercion, no defaults, formats not validated). Proven against ajv on
 * generated schemas and inputs (test/property/schema-subset.test.ts).
 *
 * Why (bench/NOTES.md "Many rulesets"): ajv generates and compiles JavaScript for every schema,
 * about 1 ms each, so a start with 10,000 rulesets carrying schemas spent 12 s in ajv; and 10,000
 * generated functions each run cold (each one's own bytecode and type feedback). Here a schema
 * becomes a tree of small `SchemaNode` records walked by one shared function: building one takes
 * microseconds, and every ruleset's validation runs the same warm code.
 *
 * `compileSubset` returns null for anything outside the subset (any other keyword, a keyword
 * value the meta-schema would refuse, an empty `enum`, a `__proto__` property): the caller then
 * compiles with ajv as before, so every schema ajv accepted or refused is accepted or refused
 * as before. The order of the keywords is ajv's rule order (checked against the live ajv
 * instance by `subsetMatchesAjv`; when it differs the subset is not used at all).
 *
 * Subset: `type` (a name or a list), `const`, `enum`, `maximum`, `minimum`, `exclusiveMaximum`,
 * `exclusiveMinimum`, `maxLength`, `minLength`, `maxItems`, `minItems`, `items`, `required`,
 * `additionalProperties`, `properties`, `format` (an annotation here), `title`, `description`,
 * `$comment`, `examples`; boolean schemas anywhere.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import ajvEqual from 'ajv/dist/runtime/equal.js';
import type { JsonValue } from '../expr/ast.js';
import { jsonEqual } from './json.js';

type JsonObject = { [key: string]: JsonValue };

/** The part of ajv's ValidateFunction that ./input-schema.ts uses. */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

// Type bits (a `type` keyword is a mask).
const T_STRING = 1;
const T_NUMBER = 2;
const T_INTEGER = 4;
const T_BOOLEAN = 8;
const T_NULL = 16;
const T_OBJECT = 32;
const T_ARRAY = 64;
const TYPE_BITS: Readonly<Record<string, number>> = {
  string: T_STRING,
  number: T_NUMBER,
  integer: T_INTEGER,
  boolean: T_BOOLEAN,
  null: T_NULL,
  object: T_OBJECT,
  array: T_ARRAY,
};

// Keywords present (a schema's `has` mask).
const K_CONST = 1;
const K_ENUM = 2;
const K_MAXIMUM = 4;
const K_MINIMUM = 8;
const K_EXCL_MAX = 16;
const K_EXCL_MIN = 32;
const K_MAX_LENGTH = 64;
const K_MIN_LENGTH = 128;
const K_MAX_ITEMS = 256;
const K_MIN_ITEMS = 512;
const K_ITEMS = 1024;
const K_REQUIRED = 2048;
const K_ADDITIONAL = 4096;
const K_PROPERTIES = 8192;

/** ajv's rule groups as far as the subset goes (the order of `Ajv.RULES.rules`). */
export const SUBSET_GROUPS: readonly (readonly [group: string, keywords: readonly string[]])[] = [
  ['', ['const', 'enum']],
  ['number', ['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'format']],
  ['string', ['maxLength', 'minLength', 'format']],
  ['array', ['maxItems', 'minItems', 'items']],
  ['object', ['required', 'additionalProperties', 'properties']],
];

const NUMBER_GROUP = new Set(SUBSET_GROUPS[1]![1]);
const STRING_GROUP = new Set(SUBSET_GROUPS[2]![1]);
const ARRAY_GROUP = new Set(SUBSET_GROUPS[3]![1]);
const OBJECT_GROUP = new Set(SUBSET_GROUPS[4]![1]);

// NOTE (speed): the walker's arrays are never frozen (here and in `shared`), only typed
// read-only: V8 reads the elements of a frozen array through a slow generic path in optimized
// code (bench/NOTES.md "Seventh session"). Nothing writes them once built.
const NO_STRINGS: readonly string[] = [];
const NO_NODES: readonly SchemaNode[] = [];
const NO_VALUES: readonly JsonValue[] = [];
const NO_SLOTS: readonly number[] = [];
const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * One (sub)schema. Every node has the same fields (one shape for the walker). A boolean schema
 * is a node with `bool` 1 (true) or 0 (false); an object schema has `bool` -1.
 */
class SchemaNode {
  // NOTE (speed, bench/NOTES.md "Many rulesets"): the fields every check reads come first, so a
  // node's first cache line serves most of its checks when it is not cached.
  bool = -1;
  has = 0;
  /** Mask of the `type` keyword (0: none). */
  types = 0;
  /** True: the type is checked first (ajv's `coerceAndCheckDataType`); false: in its group's else. */
  typeFirst = false;
  /** Group that reports the type error when `typeFirst` is false: T_NUMBER, T_STRING, T_ARRAY, T_OBJECT, or 0. */
  typeGroup = 0;
  /** Which type groups apply (mask of T_NUMBER, T_STRING, T_ARRAY, T_OBJECT). */
  groups = 0;
  /** The `type` keyword as written (error params) and its text (error message). */
  typeSchema: JsonValue = null;
  typeMessage = '';
  constValue: JsonValue = null;
  enumValues: readonly JsonValue[] = NO_VALUES;
  /**
   * Where the bounds are in the schema's own `bounds` array (see `compileSubset`): the node
   * holds positions, not values, so schemas that differ only in their bounds share one tree.
   */
  maxAt = 0;
  minAt = 0;
  exclMaxAt = 0;
  exclMinAt = 0;
  maxLengthAt = 0;
  minLengthAt = 0;
  maxItemsAt = 0;
  minItemsAt = 0;
  items: SchemaNode | null = null;
  /** False when `items` is always valid (ajv then generates nothing for it). */
  itemsActive = false;
  required: readonly string[] = NO_STRINGS;
  /** For each `required` name, its index in `propNames`, or -1 (then it is read by name). */
  requiredSlots: readonly number[] = NO_SLOTS;
  additional: SchemaNode | null = null;
  /** False when `additionalProperties` is always valid. */
  additionalActive = false;
  /** Names of `properties` (without the always-valid ones, as ajv skips them), and their schemas. */
  propNames: readonly string[] = NO_STRINGS;
  propNodes: readonly SchemaNode[] = NO_NODES;
  /** Every name of `properties` (additionalProperties tests against all of them). */
  allProps: ReadonlySet<string> = NO_NAMES;
  /** The same names as a list when there are at most 8 (compared one by one, as ajv does), else null. */
  allPropList: readonly string[] | null = NO_STRINGS;
}

/**
 * The name and slot lists of nodes, shared by content (the walker only reads them).
 * NOTE (speed, bench/NOTES.md "Many rulesets"): schemas of many rulesets that name the same
 * properties then read one array per list, which stays in the CPU caches, instead of one array
 * each to fetch from memory when traffic spreads over thousands of rulesets. Bounded: past
 * `SHARED_LISTS_MAX` distinct lists, new ones are simply not shared.
 */
const sharedLists = new Map<string, readonly (string | number)[]>();
const SHARED_LISTS_MAX = 20_000;

function shared<T extends string | number>(list: readonly T[]): readonly T[] {
  if (list.length === 0) return list;
  const key = JSON.stringify(list);
  const found = sharedLists.get(key);
  if (found !== undefined) return found as readonly T[];
  const copy: readonly T[] = [...list];
  if (sharedLists.size < SHARED_LISTS_MAX) sharedLists.set(key, copy);
  return copy;
}

/**
 * Trees shared by the schema's shape: its JSON text with every bound (`maximum`, `minLength`...)
 * left out (`shapeText`). NOTE (speed, bench/NOTES.md "Many rulesets"): rulesets written from
 * one template (the same fields, their own limits) then walk one tree that stays in the CPU
 * caches; each schema keeps only its bounds, in one small array. Bounded like the lists: past
 * `SHARED_SHAPES_MAX` shapes, or for a shape text longer than `SHAPE_TEXT_MAX`, a schema keeps a
 * tree of its own.
 */
const sharedShapes = new Map<string, SchemaNode>();
const SHARED_SHAPES_MAX = 20_000;
const SHAPE_TEXT_MAX = 16 * 1024;

/** The bounds of the schema being walked (set by its validator: validators are synchronous). */
let B: Float64Array = new Float64Array(0);
const NO_BOUNDS = B;

/**
 * A validator for `schema`, or null when it is outside the subset (see the module comment).
 * Never throws.
 */
export function compileSubset(schema: JsonValue): SchemaValidator | null {
  if (!SUBSET_USABLE) return null;
  const shape = shapeText(schema);
  const shareable = shape.length <= SHAPE_TEXT_MAX;
  let list: number[] = [];
  let root: SchemaNode | null = shareable ? (sharedShapes.get(shape) ?? null) : null;
  // NOTE (start time, bench/NOTES.md "Seventh session"): a schema of a known shape only needs
  // its bounds (and their checks): its tree is not built just to be dropped.
  if (root !== null && !boundsOf(schema, list)) root = null;
  if (root === null) {
    list = [];
    root = node(schema, list);
    if (root === null) return null;
    if (shareable && !sharedShapes.has(shape) && sharedShapes.size < SHARED_SHAPES_MAX) sharedShapes.set(shape, root);
  }
  const walk = new SubsetWalk(root, list.length === 0 ? NO_BOUNDS : Float64Array.from(list));
  const validate: SchemaValidator = (data: unknown): boolean => {
    const errors = walkSubset(walk.tree, walk.bounds, data);
    validate.errors = errors;
    return errors === null;
  };
  validate.errors = null;
  walkers.set(validate, walk);
  return validate;
}

/** The tree of a subset schema (opaque outside this module). */
export type SubsetTree = SchemaNode;

/** What a subset validator walks: a tree (maybe shared with schemas of the same shape) and the schema's own bounds. */
export class SubsetWalk {
  constructor(
    readonly tree: SubsetTree,
    readonly bounds: Float64Array,
  ) {}
}

/**
 * The errors of `data` against a subset schema's tree and bounds (a `SubsetWalk`'s), in ajv's
 * form and order, or null when it is valid. NOTE (speed, bench/NOTES.md "Many rulesets" and
 * "Seventh session"): ./input-schema.ts calls this directly with the tree and bounds it keeps
 * in its own fields, so an execution reads no validator function, closure context, `errors`
 * property or walk object of its own ruleset.
 */
export function walkSubset(tree: SubsetTree, bounds: Float64Array, data: unknown): ErrorObject[] | null {
  found = null;
  B = bounds;
  run(tree, data, 0);
  B = NO_BOUNDS;
  const errors = found as ErrorObject[] | null;
  found = null;
  return errors;
}

/**
 * The bounds of `schema` appended to `out` in the order `buildNode` appends them (keys in their
 * order, depth first through `items`, `additionalProperties` and `properties`), each checked as
 * `buildNode` checks it; false when one is not a valid bound. For a schema whose shape
 * (`shapeText`) is that of a schema `node` accepted, true means `node` would accept it too, with
 * exactly these bounds: everything but the bounds is written in the shape.
 */
function boundsOf(schema: JsonValue, out: number[]): boolean {
  if (!isObject(schema)) return true;
  for (const key of Object.keys(schema)) {
    const v = schema[key] as JsonValue;
    if (BOUND_KEYWORDS.has(key)) {
      if (!isValidBound(key, v)) return false;
      out.push(v);
      continue;
    }
    switch (key) {
      case 'items':
      case 'additionalProperties':
        if (!boundsOf(v, out)) return false;
        break;
      case 'properties':
        if (!isObject(v)) return false;
        for (const name of Object.keys(v)) if (!boundsOf(v[name] as JsonValue, out)) return false;
        break;
      default:
        break;
    }
  }
  return true;
}

/** The next position of `bounds`, holding `value`. */
function bound(bounds: number[], value: number): number {
  bounds.push(value);
  return bounds.length - 1;
}

/** Bound keywords whose value is a count (a non-negative integer); the others take any finite number. */
const COUNT_KEYWORDS: ReadonlySet<string> = new Set(['maxLength', 'minLength', 'maxItems', 'minItems']);

/** Keywords whose numeric value is a bound (kept in the schema's `bounds`, not in its tree). */
const BOUND_KEYWORDS: ReadonlySet<string> = new Set(['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', ...COUNT_KEYWORDS]);

/** True when `value` is valid for the bound keyword `key` (the one check of `node` and `boundsOf`). */
function isValidBound(key: string, value: JsonValue): value is number {
  return COUNT_KEYWORDS.has(key) ? isCount(value) : typeof value === 'number' && Number.isFinite(value);
}

/**
 * The schema's JSON text with each bound's value written as `#` (not JSON, so never a value): two
 * schemas of one shape build the same tree with the same bound positions (`buildNode` visits
 * keys in their order). Any JSON value has one; a bound that is not a valid number still reads
 * `#` (`boundsOf` checks the bounds of a schema whose shape is known).
 */
function shapeText(schema: JsonValue): string {
  if (!isObject(schema)) return JSON.stringify(schema);
  let out = '{';
  for (const key of Object.keys(schema)) {
    const v = schema[key] as JsonValue;
    let text: string;
    if (BOUND_KEYWORDS.has(key)) text = '#';
    else if (key === 'items' || key === 'additionalProperties') text = shapeText(v);
    else if (key === 'properties' && isObject(v))
      text = `{${Object.keys(v)
        .map((name) => `${JSON.stringify(name)}:${shapeText(v[name] as JsonValue)}`)
        .join(',')}}`;
    else text = JSON.stringify(v);
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${text}`;
  }
  return `${out}}`;
}

/** The validators `compileSubset` made (weakly held), with what each walks. */
const walkers = new WeakMap<SchemaValidator, SubsetWalk>();

/** What a subset validator walks, or null for another validator. */
export function subsetWalk(validate: SchemaValidator): SubsetWalk | null {
  return walkers.get(validate) ?? null;
}

/** The tree a subset validator walks (tests: schemas of one shape share it), or null for another validator. */
export function subsetTree(validate: SchemaValidator): object | null {
  return walkers.get(validate)?.tree ?? null;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * Leaf nodes (no subschemas, no bounds) shared by their schema's JSON text; only short texts are
 * kept, up to `SHARED_NODES_MAX` of them. NOTE (speed, bench/NOTES.md "Many rulesets"): like the
 * shared lists, a field schema that many rulesets write alike is then one node in the CPU caches.
 * (A leaf with bounds is shared with its whole tree by `sharedShapes`: its node holds positions in
 * the schema's bounds, which differ between trees.)
 */
const sharedNodes = new Map<string, SchemaNode>();
const SHARED_NODES_MAX = 20_000;
const SHARED_NODE_TEXT_MAX = 512;

/**
 * The node of a (sub)schema, or null when it is outside the subset; its bounds are appended to
 * `bounds`. Leaf nodes may be shared: never mutate a returned node.
 */
function node(schema: JsonValue, bounds: number[]): SchemaNode | null {
  if (!isObject(schema) || 'properties' in schema || 'items' in schema || 'additionalProperties' in schema) return buildNode(schema, bounds);
  if (Object.keys(schema).some((k) => BOUND_KEYWORDS.has(k))) return buildNode(schema, bounds);
  const text = JSON.stringify(schema);
  if (text.length > SHARED_NODE_TEXT_MAX) return buildNode(schema, bounds);
  const found = sharedNodes.get(text);
  if (found !== undefined) return found;
  const n = buildNode(schema, bounds);
  if (n !== null && sharedNodes.size < SHARED_NODES_MAX) sharedNodes.set(text, n);
  return n;
}

function buildNode(schema: JsonValue, bounds: number[]): SchemaNode | null {
  const n = new SchemaNode();
  if (typeof schema === 'boolean') {
    n.bool = schema ? 1 : 0;
    return n;
  }
  if (!isObject(schema)) return null;
  for (const key of Object.keys(schema)) {
    const v = schema[key] as JsonValue;
    switch (key) {
      case 'type': {
        const list = Array.isArray(v) ? v : [v];
        if (list.length === 0) return null;
        for (const t of list) {
          const bit = typeof t === 'string' ? TYPE_BITS[t] : undefined;
          if (bit === undefined || !Object.hasOwn(TYPE_BITS, t as string) || (n.types & bit) !== 0) return null;
          n.types |= bit;
        }
        n.typeSchema = v;
        n.typeMessage = `must be ${Array.isArray(v) ? v.join(',') : String(v)}`;
        break;
      }
      case 'const':
        n.has |= K_CONST;
        n.constValue = v;
        break;
      case 'enum':
        if (!Array.isArray(v) || v.length === 0) return null;
        n.has |= K_ENUM;
        n.enumValues = v;
        break;
      case 'maximum':
      case 'minimum':
      case 'exclusiveMaximum':
      case 'exclusiveMinimum':
        if (!isValidBound(key, v)) return null;
        if (key === 'maximum') {
          n.has |= K_MAXIMUM;
          n.maxAt = bound(bounds, v);
        } else if (key === 'minimum') {
          n.has |= K_MINIMUM;
          n.minAt = bound(bounds, v);
        } else if (key === 'exclusiveMaximum') {
          n.has |= K_EXCL_MAX;
          n.exclMaxAt = bound(bounds, v);
        } else {
          n.has |= K_EXCL_MIN;
          n.exclMinAt = bound(bounds, v);
        }
        break;
      case 'maxLength':
      case 'minLength':
      case 'maxItems':
      case 'minItems':
        if (!isValidBound(key, v)) return null;
        if (key === 'maxLength') {
          n.has |= K_MAX_LENGTH;
          n.maxLengthAt = bound(bounds, v);
        } else if (key === 'minLength') {
          n.has |= K_MIN_LENGTH;
          n.minLengthAt = bound(bounds, v);
        } else if (key === 'maxItems') {
          n.has |= K_MAX_ITEMS;
          n.maxItemsAt = bound(bounds, v);
        } else {
          n.has |= K_MIN_ITEMS;
          n.minItemsAt = bound(bounds, v);
        }
        break;
      case 'items': {
        const sub = node(v, bounds);
        if (sub === null) return null;
        n.has |= K_ITEMS;
        n.items = sub;
        n.itemsActive = !alwaysValid(sub);
        break;
      }
      case 'required': {
        if (!Array.isArray(v) || !v.every((s) => typeof s === 'string') || new Set(v).size !== v.length) return null;
        n.required = v as string[];
        if (v.length > 0) n.has |= K_REQUIRED;
        // ajv checks every name in a loop from 200 names on (`loopRequired`): the same errors, but keep to the plain form.
        if (v.length >= 200) return null;
        break;
      }
      case 'additionalProperties': {
        const sub = node(v, bounds);
        if (sub === null) return null;
        n.has |= K_ADDITIONAL;
        n.additional = sub;
        n.additionalActive = !alwaysValid(sub);
        break;
      }
      case 'properties': {
        if (!isObject(v)) return null;
        const names: string[] = [];
        const nodes: SchemaNode[] = [];
        for (const name of Object.keys(v)) {
          if (name === '__proto__') return null;
          const sub = node(v[name] as JsonValue, bounds);
          if (sub === null) return null;
          if (!alwaysValid(sub)) {
            names.push(name);
            nodes.push(sub);
          }
        }
        n.has |= K_PROPERTIES;
        n.propNames = names;
        n.propNodes = nodes;
        n.allProps = new Set(Object.keys(v));
        n.allPropList = n.allProps.size <= 8 ? Object.keys(v) : null;
        break;
      }
      case 'format':
      case 'title':
      case 'description':
      case '$comment':
        if (typeof v !== 'string') return null;
        break;
      case 'examples':
        if (!Array.isArray(v)) return null;
        break;
      default:
        return null;
    }
  }
  if (n.required.length > 0) n.requiredSlots = n.required.map((name) => n.propNames.indexOf(name));
  n.required = shared(n.required);
  n.requiredSlots = shared(n.requiredSlots);
  n.propNames = shared(n.propNames);
  if (n.allPropList !== null) n.allPropList = shared(n.allPropList);
  const present = (group: ReadonlySet<string>): boolean => Object.keys(schema).some((k) => group.has(k));
  if (present(NUMBER_GROUP)) n.groups |= T_NUMBER;
  if (present(STRING_GROUP)) n.groups |= T_STRING;
  if (present(ARRAY_GROUP)) n.groups |= T_ARRAY;
  if (present(OBJECT_GROUP)) n.groups |= T_OBJECT;
  if (n.types !== 0) {
    // ajv (`coerceAndCheckDataType`): one type whose rule group applies is reported by that group
    // (when the data is not of it); otherwise the type is checked before every keyword.
    const single = n.types === T_NUMBER || n.types === T_STRING || n.types === T_ARRAY || n.types === T_OBJECT;
    if (single && (n.groups & n.types) !== 0) n.typeGroup = n.types;
    else n.typeFirst = true;
  }
  return n;
}

/** ajv's `alwaysValidSchema` (strict mode): `true`, or an object without keywords of effect. */
function alwaysValid(n: SchemaNode): boolean {
  return n.bool === 1 || (n.bool === -1 && n.has === 0 && n.types === 0);
}

// ------------------------------------------------------------------------------- the walker

/** The instance path of the value being checked, as segments (read only when an error is added). */
const pathSegments: (string | number)[] = [];

function instancePath(depth: number): string {
  let out = '';
  for (let i = 0; i < depth; i++) {
    const s = pathSegments[i]!;
    out += typeof s === 'number' ? `/${s}` : `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  }
  return out;
}

/**
 * The errors of the validation under way (validators are synchronous and call no user code).
 * NOTE (speed): null until the first error, so a valid input allocates nothing.
 */
let found: ErrorObject[] | null = null;

function fail(depth: number, keyword: string, params: Record<string, unknown>, message: string): void {
  (found ??= []).push({ instancePath: instancePath(depth), schemaPath: '', keyword, params, message });
}

/** Whether `data` is of one of the types in the mask (ajv's type checks, numbers finite). */
function matchesTypes(data: unknown, types: number): boolean {
  switch (typeof data) {
    case 'string':
      return (types & T_STRING) !== 0;
    case 'number':
      return Number.isFinite(data) && ((types & T_NUMBER) !== 0 || ((types & T_INTEGER) !== 0 && data % 1 === 0));
    case 'boolean':
      return (types & T_BOOLEAN) !== 0;
    case 'object':
      if (data === null) return (types & T_NULL) !== 0;
      return (types & (Array.isArray(data) ? T_ARRAY : T_OBJECT)) !== 0;
    default:
      return false;
  }
}

/** ajv's `ucs2length`: the length in code points. */
function codePoints(s: string): number {
  const length = s.length;
  let len = 0;
  let pos = 0;
  while (pos < length) {
    len++;
    const value = s.charCodeAt(pos++);
    if (value >= 0xd800 && value <= 0xdbff && pos < length) {
      if ((s.charCodeAt(pos) & 0xfc00) === 0xdc00) pos++;
    }
  }
  return len;
}

/** ajv's own `equal` (fast-deep-equal). */
const ajvEqualFn: (a: unknown, b: unknown) => boolean = ajvEqual.default as unknown as (a: unknown, b: unknown) => boolean;

/**
 * `const`/`enum` comparison: ajv's own `equal`, so that they compare exactly as ajv does, quirks
 * included (an input object with an own `constructor` key); where ajv's would throw (an input
 * object with an own `toString` or `valueOf` key that is not a function: it calls it), JSON
 * equality instead (`jsonEqual`), so a hostile input gets a verdict, not a crash.
 */
function equal(a: unknown, b: unknown): boolean {
  try {
    return ajvEqualFn(a, b);
  } catch {
    return jsonEqual(a as JsonValue, b as JsonValue);
  }
}

function inEnum(data: unknown, values: readonly JsonValue[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'object' && v !== null ? equal(data, v) : data === v) return true;
  }
  return false;
}

/** Checks `data` against `n`, adding errors in ajv's order; `depth` segments of `pathSegments` lead to it. */
function run(n: SchemaNode, data: unknown, depth: number): void {
  if (n.bool !== -1) {
    if (n.bool === 0) fail(depth, 'false schema', {}, 'boolean schema is false');
    return;
  }
  const has = n.has;
  if (n.typeFirst && !matchesTypes(data, n.types)) fail(depth, 'type', { type: n.typeSchema }, n.typeMessage);
  if ((has & K_CONST) !== 0) {
    const c = n.constValue;
    if (typeof c === 'object' && c !== null ? !equal(data, c) : c !== data) fail(depth, 'const', { allowedValue: c }, 'must be equal to constant');
  }
  if ((has & K_ENUM) !== 0 && !inEnum(data, n.enumValues)) {
    fail(depth, 'enum', { allowedValues: n.enumValues }, 'must be equal to one of the allowed values');
  }
  const groups = n.groups;
  if (groups === 0) return;
  if ((groups & T_NUMBER) !== 0) {
    if (typeof data === 'number' && Number.isFinite(data)) {
      if ((has & K_MAXIMUM) !== 0 && data > B[n.maxAt]!) fail(depth, 'maximum', { comparison: '<=', limit: B[n.maxAt] }, `must be <= ${B[n.maxAt]}`);
      if ((has & K_MINIMUM) !== 0 && data < B[n.minAt]!) fail(depth, 'minimum', { comparison: '>=', limit: B[n.minAt] }, `must be >= ${B[n.minAt]}`);
      if ((has & K_EXCL_MAX) !== 0 && data >= B[n.exclMaxAt]!)
        fail(depth, 'exclusiveMaximum', { comparison: '<', limit: B[n.exclMaxAt] }, `must be < ${B[n.exclMaxAt]}`);
      if ((has & K_EXCL_MIN) !== 0 && data <= B[n.exclMinAt]!)
        fail(depth, 'exclusiveMinimum', { comparison: '>', limit: B[n.exclMinAt] }, `must be > ${B[n.exclMinAt]}`);
    } else if (n.typeGroup === T_NUMBER) {
      fail(depth, 'type', { type: n.typeSchema }, n.typeMessage);
    }
  }
  if ((groups & T_STRING) !== 0) {
    if (typeof data === 'string') {
      if ((has & (K_MAX_LENGTH | K_MIN_LENGTH)) !== 0) {
        const len = codePoints(data);
        if ((has & K_MAX_LENGTH) !== 0 && len > B[n.maxLengthAt]!)
          fail(depth, 'maxLength', { limit: B[n.maxLengthAt] }, `must NOT have more than ${B[n.maxLengthAt]} characters`);
        if ((has & K_MIN_LENGTH) !== 0 && len < B[n.minLengthAt]!)
          fail(depth, 'minLength', { limit: B[n.minLengthAt] }, `must NOT have fewer than ${B[n.minLengthAt]} characters`);
      }
    } else if (n.typeGroup === T_STRING) {
      fail(depth, 'type', { type: n.typeSchema }, n.typeMessage);
    }
  }
  if ((groups & T_ARRAY) !== 0) {
    if (Array.isArray(data)) {
      if ((has & K_MAX_ITEMS) !== 0 && data.length > B[n.maxItemsAt]!)
        fail(depth, 'maxItems', { limit: B[n.maxItemsAt] }, `must NOT have more than ${B[n.maxItemsAt]} items`);
      if ((has & K_MIN_ITEMS) !== 0 && data.length < B[n.minItemsAt]!)
        fail(depth, 'minItems', { limit: B[n.minItemsAt] }, `must NOT have fewer than ${B[n.minItemsAt]} items`);
      const items = n.items;
      if (items !== null && n.itemsActive) {
        for (let i = 0; i < data.length; i++) {
          pathSegments[depth] = i;
          run(items, data[i], depth + 1);
        }
      }
    } else if (n.typeGroup === T_ARRAY) {
      fail(depth, 'type', { type: n.typeSchema }, n.typeMessage);
    }
  }
  if ((groups & T_OBJECT) !== 0) {
    if (typeof data === 'object' && data !== null && !Array.isArray(data)) runObject(n, data as Record<string, unknown>, depth);
    else if (n.typeGroup === T_OBJECT) fail(depth, 'type', { type: n.typeSchema }, n.typeMessage);
  }
}

function includes(list: readonly string[], key: string): boolean {
  for (let i = 0; i < list.length; i++) if (list[i] === key) return true;
  return false;
}

/**
 * The values of the `properties` names of the objects being checked (a stack: nested objects
 * use the slots above). NOTE (speed): each property is read once, for `required` and for its
 * subschema; a read by a name that varies is the walker's costliest operation.
 */
const propValues: unknown[] = [];
let propTop = 0;

function runObject(n: SchemaNode, data: Record<string, unknown>, depth: number): void {
  const names = n.propNames;
  const base = propTop;
  for (let i = 0; i < names.length; i++) propValues[base + i] = data[names[i]!];
  propTop = base + names.length;
  const has = n.has;
  if ((has & K_REQUIRED) !== 0) {
    // NOTE: like ajv (`ownProperties` off), a property is present when reading it gives a value.
    const required = n.required;
    const slots = n.requiredSlots;
    for (let i = 0; i < required.length; i++) {
      const name = required[i]!;
      const slot = slots[i]!;
      if ((slot >= 0 ? propValues[base + slot] : data[name]) === undefined) {
        fail(depth, 'required', { missingProperty: name }, `must have required property '${name}'`);
      }
    }
  }
  const additional = n.additional;
  if (additional !== null && n.additionalActive) {
    const known = n.allProps;
    const list = n.allPropList;
    for (const key in data) {
      if (list !== null ? includes(list, key) : known.has(key)) continue;
      if (additional.bool === 0) {
        fail(depth, 'additionalProperties', { additionalProperty: key }, 'must NOT have additional properties');
      } else {
        pathSegments[depth] = key;
        run(additional, data[key], depth + 1);
      }
    }
  }
  const nodes = n.propNodes;
  for (let i = 0; i < names.length; i++) {
    const value = propValues[base + i];
    if (value === undefined) continue;
    pathSegments[depth] = names[i]!;
    run(nodes[i]!, value, depth + 1);
  }
  // The slots are cleared: they must not keep a request's values alive.
  for (let i = 0; i < names.length; i++) propValues[base + i] = undefined;
  propTop = base;
}

/**
 * Whether ajv's live rule order agrees with `SUBSET_GROUPS` (every subset keyword in that group,
 * in that relative order). Checked once at load; when false, `compileSubset` always returns null.
 */
export function subsetMatchesAjv(rules: ReadonlyArray<{ type?: string; rules: ReadonlyArray<{ keyword: string }> }>): boolean {
  if (rules.length !== SUBSET_GROUPS.length) return false;
  return SUBSET_GROUPS.every(([group, keywords], i) => {
    const live = rules[i]!;
    if ((live.type ?? '') !== group) return false;
    const order = live.rules.map((r) => r.keyword).filter((k) => keywords.includes(k));
    return order.length === keywords.length && order.every((k, j) => k === keywords[j]);
  });
}

let SUBSET_USABLE = true;

/** Set by ./input-schema.ts from its ajv instance (`subsetMatchesAjv`). */
export function useSubset(usable: boolean): void {
  SUBSET_USABLE = usable;
}
