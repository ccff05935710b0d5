/**
 * The input schema of a ruleset (EXTENSIONS.md 2 "Input schema", `GET /api/v1/rulesets/:name/schema`):
 * its `config.input_schema` when it has one, else one inferred from the paths its expressions
 * read. The inferred schema declares every path read (objects through `properties`, array
 * indices through `items`), each leaf typed by the literals it is compared with (`number` for
 * numbers, several types as a list, `{}` when nothing says), with no `required` and no
 * `additionalProperties`: it is the loosest schema that passes the create-time path check.
 */
import type { JsonValue } from '../expr/ast.js';
import type { CompiledRuleset } from './compile.js';
import { collectReads, literalType, type PathRead } from './schema-paths.js';
import { stepExpressions } from './steps.js';

type JsonObject = { [key: string]: JsonValue };

/** The draft every schema svc writes declares. */
export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Answer of `GET /api/v1/rulesets/:name/schema`. */
export interface InputSchemaAnswer {
  name: string;
  version: string;
  /** True when the ruleset has no `config.input_schema` and `schema` was inferred from the paths it reads. */
  inferred: boolean;
  /** `reject` when inputs are validated against `schema`, else `off` (always `off` for an inferred schema). */
  input_validation: 'reject' | 'off';
  schema: JsonValue;
}

/** The schema answer of a compiled ruleset. */
export function inputSchemaAnswer(compiled: CompiledRuleset): InputSchemaAnswer {
  const own = compiled.inputSchema;
  if (own !== null) {
    return { name: compiled.name, version: compiled.version, inferred: false, input_validation: own.reject ? 'reject' : 'off', schema: own.schema };
  }
  return { name: compiled.name, version: compiled.version, inferred: true, input_validation: 'off', schema: inferInputSchema(compiled) };
}

/** A node of the tree of paths read. */
interface PathTree {
  readonly keys: Map<string, PathTree>;
  /** Read at an array index (every index shares one `items`). */
  items: PathTree | null;
  /** JSON types of the literals compared with this exact path. */
  readonly types: Set<string>;
}

function newTree(): PathTree {
  return { keys: new Map(), items: null, types: new Set() };
}

/** The schema inferred from every input path `compiled` reads. */
export function inferInputSchema(compiled: CompiledRuleset): JsonObject {
  const reads: PathRead[] = [];
  for (const step of compiled.steps.values()) for (const e of stepExpressions(step)) collectReads(e.ast, reads);
  const root = newTree();
  for (const read of reads) {
    let node = root;
    for (const seg of read.segments) {
      if (typeof seg === 'number') node = node.items ??= newTree();
      else {
        let next = node.keys.get(seg);
        if (next === undefined) node.keys.set(seg, (next = newTree()));
        node = next;
      }
    }
    for (const lit of read.literals) {
      const t = literalType(lit.value);
      if (t !== 'null') node.types.add(t);
    }
  }
  // NOTE: the input is an object even when the ruleset reads nothing.
  return { $schema: DRAFT_2020_12, type: 'object', properties: {}, ...toSchema(root) };
}

function toSchema(node: PathTree): JsonObject {
  if (node.keys.size > 0) {
    const properties: JsonObject = {};
    for (const [key, child] of [...node.keys].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      Object.defineProperty(properties, key, { value: toSchema(child), enumerable: true, writable: true, configurable: true });
    }
    return { type: 'object', properties };
  }
  if (node.items !== null) return { type: 'array', items: toSchema(node.items) };
  const types = [...node.types].sort();
  if (types.length === 0) return {};
  return { type: types.length === 1 ? types[0]! : types };
}
