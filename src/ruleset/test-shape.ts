/**
 * The shape of a ruleset's `tests` array (EXTENSIONS.md 2 "Tests"):
 * `{name, input, expect: {code, message?, output?, path?}}` with no other key, names unique.
 * Called by validation (the document's `tests`) and by `POST .../test` (a body's `tests`). Pure.
 */
import type { JsonValue } from '../expr/ast.js';
import { joinKey } from './json.js';
import { didYouMean } from './suggest.js';

type JsonObject = Record<string, JsonValue>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keys of one test. */
export const TEST_KEYS: readonly string[] = ['name', 'input', 'expect'];
/** Keys of a test's `expect`. */
export const EXPECT_KEYS: readonly string[] = ['code', 'message', 'output', 'path'];

/**
 * Checks the shape of a `tests` array (`at` is its location, `tests` in a document): every test
 * `{name, input, expect: {code, message?, output?, path?}}` with no other key, names unique.
 */
export function checkTestsShape(tests: unknown, add: (path: string, message: string) => void, at = 'tests'): void {
  if (tests === undefined) return;
  if (!Array.isArray(tests)) {
    add(at, 'must be an array of tests ({name, input, expect})');
    return;
  }
  const seen = new Map<string, number>();
  tests.forEach((test: unknown, i) => {
    const tat = `${at}[${i}]`;
    if (!isObject(test)) {
      add(tat, 'must be an object with name, input and expect');
      return;
    }
    for (const key of Object.keys(test)) if (!TEST_KEYS.includes(key)) add(joinKey(tat, key), `unknown key${didYouMean(key, TEST_KEYS)}`);
    const { name, input, expect } = test;
    if (name === undefined) add(`${tat}.name`, 'required');
    else if (typeof name !== 'string' || name === '') add(`${tat}.name`, 'must be a non-empty string');
    else {
      const first = seen.get(name);
      if (first !== undefined) add(`${tat}.name`, `duplicate test name '${name}' (also ${at}[${first}])`);
      else seen.set(name, i);
    }
    if (input === undefined) add(`${tat}.input`, 'required');
    else if (!isObject(input)) add(`${tat}.input`, 'must be an object (the input the ruleset runs on)');
    if (expect === undefined) {
      add(`${tat}.expect`, 'required');
      return;
    }
    if (!isObject(expect)) {
      add(`${tat}.expect`, 'must be an object with code (and optionally message, output, path)');
      return;
    }
    const eat = `${tat}.expect`;
    for (const key of Object.keys(expect)) if (!EXPECT_KEYS.includes(key)) add(joinKey(eat, key), `unknown key${didYouMean(key, EXPECT_KEYS)}`);
    const { code, message, output, path } = expect;
    if (code === undefined) add(`${eat}.code`, 'required');
    else if (typeof code !== 'string' || code === '') add(`${eat}.code`, 'must be a non-empty string');
    if (message !== undefined && typeof message !== 'string') add(`${eat}.message`, 'must be a string');
    if (output !== undefined && !isObject(output)) add(`${eat}.output`, 'must be an object (matched as a subset of the output)');
    if (path !== undefined && typeof path !== 'string') add(`${eat}.path`, "must be a string (the trace path, e.g. 'a -> b')");
  });
}
