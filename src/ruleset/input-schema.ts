/**
 * `config.input_schema` (EXTENSIONS.md 2 "Input schema"): the JSON Schema (draft 2020-12) of a
 * ruleset's input, compiled once per ruleset version, and the checks built on it. A schema within
 * the common subset of ./schema-subset.ts gets its validator (ajv's verdicts and errors, built in
 * microseconds, one shared walker); any other schema is compiled with ajv.
 *
 * - `InputSchema` is the compiled value the `CompiledRuleset` keeps: `check` validates a whole
 *   input (execute, batch items), `checkKnown` validates a filter's `known_input` (only the
 *   fields given: a second validator, built on first use, from the schema without its
 *   presence keywords).
 * - `checkInputSchema` is the create-time worker called by validation: the config keys, the
 *   schema itself, and every path the expressions read (./schema-paths.ts).
 *
 * Pure: ajv generates code but reads no file and no network (a `$ref` it cannot resolve inside
 * the schema is a problem at create). One shared Ajv instance; each schema is removed from its
 * cache right after compiling, so versions do not pile up and two rulesets may use one `$id`.
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { JsonValue } from '../expr/ast.js';
import type { ParsedExpression } from './expressions.js';
import { checkSchemaPaths } from './schema-paths.js';
import { compileSubset, subsetMatchesAjv, subsetWalk, useSubset, walkSubset, type SchemaValidator, type SubsetTree } from './schema-subset.js';
import { inputPathText } from './schema-text.js';

type JsonObject = { [key: string]: JsonValue };

/** One mismatch of an input against the schema: the field (`user.age`) and what is wrong. */
export interface InputProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * The one Ajv instance. `strict` stays on for unknown keywords (a typo such as `requried` is a
 * problem at create, not a silent no-op); `format` is an annotation (no format validators are
 * bundled); inputs are never changed (no defaults, no coercion); nothing is logged.
 */
const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: false,
  useDefaults: false,
  coerceTypes: false,
  logger: false,
});

// The subset validator follows ajv's rule order: it is used only while that order is what it expects.
useSubset(subsetMatchesAjv(ajv.RULES.rules));

/**
 * The validator of `schema`: the subset validator when the schema is inside its subset (the same
 * verdicts and errors as ajv, built in microseconds instead of about a millisecond, see
 * ./schema-subset.ts), else ajv's, compiled with the shared instance and forgotten at once (see
 * the module comment).
 */
function compileSchema(schema: JsonObject | boolean): SchemaValidator {
  return compileSubset(schema) ?? compileAjv(schema);
}

function compileAjv(schema: JsonObject | boolean): SchemaValidator {
  try {
    return ajv.compile(schema);
  } finally {
    if (typeof schema === 'object') ajv.removeSchema(schema);
  }
}

/**
 * Promotion of a busy schema from the subset walker to ajv's generated code (faster on a warm
 * schema, bench/NOTES.md "Many rulesets"): after PROMOTE_AFTER validations in a row each within
 * PROMOTE_GAP validations (of any walker schema) of the previous one, i.e. a schema that takes
 * a large share of the traffic. Traffic spread over many rulesets never promotes (their own
 * generated code would run cold). Both give the same answers (test/property/schema-subset.test.ts).
 */
const PROMOTE_AFTER = 1000;
const PROMOTE_GAP = 64;
/** The bounds of a schema that is not on the walker. */
const NO_BOUNDS = new Float64Array(0);
/** Walker validations so far, all schemas (the promotion's clock). */
let walkerChecks = 0;

/** A compiled `config.input_schema`. Immutable once built (the filter's validator is built once, on first use). */
export class InputSchema {
  /**
   * While `#validate` is the subset walker (and may be promoted to ajv's code): the tree and
   * bounds it walks, called directly (see `walkSubset`); null for ajv's code. NOTE (speed,
   * bench/NOTES.md "Seventh session"): declared first (after `reject`, which every execution
   * reads before them), with the promotion counters, so that an execution reads what it needs
   * from the first cache line of this object.
   */
  /** True when inputs are validated (`input_validation` is `reject`, the default). */
  readonly reject: boolean;
  #tree: SubsetTree | null;
  #bounds: Float64Array;
  #lastCheck = 0;
  #streak = 0;
  #validate: SchemaValidator;
  #known: SchemaValidator | null = null;
  /** The schema as written (deep-frozen with the document). */
  readonly schema: JsonObject | boolean;

  constructor(schema: JsonObject | boolean, reject: boolean, validate: SchemaValidator) {
    const walk = subsetWalk(validate);
    this.#tree = walk === null ? null : walk.tree;
    this.#bounds = walk === null ? NO_BOUNDS : walk.bounds;
    this.#validate = validate;
    this.reject = reject;
    this.schema = schema;
  }

  /** Whether the validator is ajv's generated code ('ajv') or the subset walker ('walker'). */
  get engine(): 'ajv' | 'walker' {
    return this.#tree !== null ? 'walker' : 'ajv';
  }

  /** The problems of a whole input (empty when it matches). */
  check(input: unknown): InputProblem[] {
    if (this.#tree !== null) {
      this.#count();
      const tree = this.#tree; // null once promoted by that count
      if (tree !== null) {
        let errors: ReturnType<typeof walkSubset>;
        try {
          errors = walkSubset(tree, this.#bounds, input);
        } catch {
          return this.#afterThrow(input);
        }
        return errors === null ? NONE : toProblems(errors);
      }
    }
    const validate = this.#validate;
    let ok: boolean;
    try {
      ok = validate(input) as boolean;
    } catch {
      return this.#afterThrow(input);
    }
    return ok ? NONE : toProblems(validate.errors);
  }

  /**
   * ajv's generated code threw on `input`: its `const`/`enum` comparison calls an input object's
   * own `toString`/`valueOf` key. The subset walker, whose comparison does not throw, answers
   * for a schema it can check; another schema reports the input as not checkable (a 400, never
   * a crash).
   */
  #afterThrow(input: unknown): InputProblem[] {
    const walker = (this.#safe ??= compileSubset(this.schema) ?? false);
    if (walker !== false) {
      try {
        return walker(input) ? NONE : toProblems(walker.errors);
      } catch {
        // Not expected: fall through to the generic problem.
      }
    }
    return UNCHECKABLE;
  }

  #safe: SchemaValidator | false | undefined = undefined;

  #count(): void {
    const now = ++walkerChecks;
    this.#streak = now - this.#lastCheck <= PROMOTE_GAP ? this.#streak + 1 : 0;
    this.#lastCheck = now;
    if (this.#streak < PROMOTE_AFTER) return;
    this.#tree = null;
    try {
      this.#validate = compileAjv(this.schema);
    } catch {
      // Not expected (ajv compiles every schema of the subset): the walker stays, called as a validator.
    }
  }

  /** The problems of the fields given in a partial input (a filter's `known_input`): absent fields are fine. */
  checkKnown(input: unknown): InputProblem[] {
    const validate = (this.#known ??= compileSchema(withoutPresence(this.schema) as JsonObject | boolean));
    try {
      return validate(input) ? NONE : toProblems(validate.errors);
    } catch {
      // ajv's code threw (see `#afterThrow`); the walker, when it is one, does not throw.
      return UNCHECKABLE;
    }
  }
}

const NONE: InputProblem[] = [];

/** The problem of an input the schema's validator could not check (see `InputSchema.#afterThrow`). */
const UNCHECKABLE: InputProblem[] = [
  { path: '', message: 'could not be checked against the input schema (an object key named toString or valueOf compared by const, enum or uniqueItems)' },
];

/**
 * The create-time checks of `config.input_schema` and `config.input_validation`. Reports
 * problems through `add`; returns the compiled schema, or null when there is none or it is
 * invalid. `exprs` are the document's parsed expressions by location.
 */
export function checkInputSchema(
  config: JsonValue | undefined,
  exprs: ReadonlyMap<string, ParsedExpression>,
  add: (path: string, message: string) => void,
): InputSchema | null {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return null;
  const mode = config['input_validation'];
  if (mode !== undefined && mode !== 'reject' && mode !== 'off') add('config.input_validation', 'must be reject or off');
  const schema = config['input_schema'];
  if (schema === undefined) return null;
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    add('config.input_schema', 'must be a JSON Schema (an object or a boolean)');
    return null;
  }
  let validate: SchemaValidator;
  try {
    validate = compileSchema(schema);
  } catch (err) {
    add('config.input_schema', `invalid JSON Schema: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  }
  checkSchemaPaths(schema, exprs, add);
  return new InputSchema(schema, mode !== 'off', validate);
}

/** ajv's errors as `{path, message}`, paths written as the expression language writes them. */
function toProblems(errors: ErrorObject[] | null | undefined): InputProblem[] {
  const out: InputProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const segments = pointerSegments(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required' || e.keyword === 'dependentRequired') {
      segments.push(String((e.params as { missingProperty: string }).missingProperty));
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      segments.push(String((e.params as { additionalProperty: string }).additionalProperty));
      message = 'is not allowed (additionalProperties is false)';
    } else if (e.keyword === 'unevaluatedProperties' && typeof (e.params as { unevaluatedProperty?: unknown }).unevaluatedProperty === 'string') {
      segments.push((e.params as { unevaluatedProperty: string }).unevaluatedProperty);
      message = 'is not allowed (unevaluatedProperties is false)';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${JSON.stringify((e.params as { allowedValues: unknown }).allowedValues)}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    }
    const problem = { path: inputPathText(segments), message };
    const key = `${problem.path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(problem);
  }
  return out;
}

/** The segments of a JSON pointer (`/items/0/price` → `items`, 0, `price`). */
function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      const s = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s;
    });
}

/** Keywords that a partial input fails only because a field is absent. */
const PRESENCE_KEYWORDS: ReadonlySet<string> = new Set(['required', 'dependentRequired', 'minProperties']);

/** Keywords whose value is one subschema. */
const SUBSCHEMA_KEYWORDS = [
  'items',
  'additionalProperties',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
] as const;
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;
/** Keywords whose value is an array of subschemas. */
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;

/** A copy of `schema` without the presence keywords, at every subschema position. */
export function withoutPresence(schema: JsonValue): JsonValue {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: JsonObject = {};
  for (const key of Object.keys(schema)) {
    if (PRESENCE_KEYWORDS.has(key)) continue;
    const value = schema[key] as JsonValue;
    if ((SUBSCHEMA_KEYWORDS as readonly string[]).includes(key)) {
      out[key] = withoutPresence(value);
    } else if ((SCHEMA_MAP_KEYWORDS as readonly string[]).includes(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const map: JsonObject = {};
      for (const name of Object.keys(value))
        Object.defineProperty(map, name, { value: withoutPresence(value[name] as JsonValue), enumerable: true, writable: true, configurable: true });
      out[key] = map;
    } else if ((SCHEMA_LIST_KEYWORDS as readonly string[]).includes(key) && Array.isArray(value)) {
      out[key] = value.map(withoutPresence);
    } else {
      out[key] = value;
    }
  }
  return out;
}
