/**
 * Strict documents (EXTENSIONS.md 2 "Strict documents"): a ruleset document, its `config`, its
 * steps, branches and actions accept only their documented keys; anything else is a problem,
 * with a suggestion when a known key is near (`steps.age.defualt_next: unknown key (did you mean
 * 'default_next'?)`). A terminal's `result` keeps any extra key (those are output), and free-form
 * data goes in `config.metadata`. Also checks the types of the config keys added by
 * EXTENSIONS.md 2 (`metadata`, `input_schema`, `input_validation`, `strict`) and 4 (`mask`, the
 * paths decision records mask); the content of `input_schema` is the input-schema check's
 * business. Pure.
 */
import type { JsonValue } from '../expr/ast.js';
import { joinKey } from './json.js';
import { checkMask } from './mask.js';
import { didYouMean } from './suggest.js';

type JsonObject = Record<string, JsonValue>;

/** Top-level keys of a ruleset document. */
export const DOCUMENT_KEYS: readonly string[] = ['config', 'steps', 'tests', '_signature'];

/** Keys of `config`. */
export const CONFIG_KEYS: readonly string[] = [
  'name',
  'version',
  'description',
  'entry_step',
  'field_missing',
  'timeout_ms',
  'metadata',
  'input_schema',
  'input_validation',
  'strict',
  'mask',
];

/** Keys every step accepts (SPEC.md: `id` and `name` stay allowed). */
const STEP_COMMON = ['id', 'name', 'type'] as const;

/** Keys of a step, by its type. */
export const STEP_KEYS: Readonly<Record<'decision' | 'action' | 'terminal' | 'table' | 'call', readonly string[]>> = {
  decision: [...STEP_COMMON, 'branches', 'default_next'],
  action: [...STEP_COMMON, 'actions', 'next_step'],
  terminal: [...STEP_COMMON, 'result', 'output'],
  table: [...STEP_COMMON, 'inputs', 'rows', 'default_next', 'hit_policy', 'next_step'],
  call: [...STEP_COMMON, 'ruleset', 'input', 'result', 'next_step'],
};

/** Keys of a decision table row (EXTENSIONS.md 3). */
export const TABLE_ROW_KEYS: readonly string[] = ['when', 'next_step', 'set'];

/** Keys of a decision branch. */
export const BRANCH_KEYS: readonly string[] = ['condition', 'next_step'];

/** Keys of an action, by its kind. */
export const ACTION_KEYS: Readonly<Record<'set_variable' | 'log', readonly string[]>> = {
  set_variable: ['action', 'name', 'value'],
  log: ['action', 'message', 'level'],
};

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Reports every unknown key of `doc` (a JSON copy of the document, `_signature` included or
 * not) and the type of each EXTENSIONS.md 2 config key, through `add`. Parts of the wrong shape
 * (a step that is not an object, an unknown step type) are left to the structural checks.
 */
export function checkStrictKeys(doc: JsonObject, add: (path: string, message: string) => void): void {
  const unknownKeys = (obj: JsonObject, at: string, known: readonly string[]): void => {
    for (const key of Object.keys(obj)) {
      if (!known.includes(key)) add(joinKey(at, key), `unknown key${didYouMean(key, known)}`);
    }
  };
  unknownKeys(doc, '', DOCUMENT_KEYS);

  const config = doc['config'];
  if (isObject(config)) {
    unknownKeys(config, 'config', CONFIG_KEYS);
    checkConfigTypes(config, add);
  }

  const steps = doc['steps'];
  if (!isObject(steps)) return;
  for (const id of Object.keys(steps)) {
    const step = steps[id];
    if (!isObject(step)) continue;
    const type = step['type'];
    if (type !== 'decision' && type !== 'action' && type !== 'terminal' && type !== 'table' && type !== 'call') continue;
    const at = joinKey('steps', id);
    unknownKeys(step, at, STEP_KEYS[type]);
    if (type === 'decision' && Array.isArray(step['branches'])) {
      step['branches'].forEach((branch, i) => {
        if (isObject(branch)) unknownKeys(branch, `${at}.branches[${i}]`, BRANCH_KEYS);
      });
    }
    if (type === 'table' && Array.isArray(step['rows'])) {
      step['rows'].forEach((row, i) => {
        if (isObject(row)) unknownKeys(row, `${at}.rows[${i}]`, TABLE_ROW_KEYS);
      });
    }
    if (type === 'action' && Array.isArray(step['actions'])) {
      step['actions'].forEach((action, i) => {
        if (!isObject(action)) return;
        const kind = action['action'];
        if (kind === 'set_variable' || kind === 'log') unknownKeys(action, `${at}.actions[${i}]`, ACTION_KEYS[kind]);
      });
    }
  }
}

/**
 * The types of `metadata`, `strict` and `mask` (an array of paths, ./mask.ts). NOTE: `input_schema` and `input_validation` are checked
 * by the input-schema check (./input-schema.ts), with the schema's content.
 */
function checkConfigTypes(config: JsonObject, add: (path: string, message: string) => void): void {
  const { metadata, strict } = config;
  if (metadata !== undefined && !isObject(metadata)) add('config.metadata', 'must be an object (free-form data of the author)');
  if (strict !== undefined && typeof strict !== 'boolean') add('config.strict', 'must be a boolean');
  checkMask(config['mask'], add);
}
