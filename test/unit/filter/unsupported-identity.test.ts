/**
 * The text of an inexpressible (`unsupported`) condition is its identity in the simplifier
 * (predicate.ts `keyOf`): two different comparisons of the same two unknown fields must not share
 * it, or a path where one holds and a path where the other fails merge into "always".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FilterError, generateFilter, parseFilterRequest } from '../../../src/filter/index.js';
import { compileRuleset } from '../../../src/ruleset/index.js';

test('a == b to A, else a >= b to B, else A: not "always A" (a = 1, b = 0 gives B)', () => {
  const compiled = compileRuleset({
    config: { name: 'two_fields', entry_step: 's0' },
    steps: {
      s0: { type: 'decision', branches: [{ condition: 'a == b', next_step: 'ta' }], default_next: 's1' },
      s1: { type: 'decision', branches: [{ condition: 'a >= b', next_step: 'tb' }], default_next: 'ta' },
      ta: { type: 'terminal', result: { code: 'A' } },
      tb: { type: 'terminal', result: { code: 'B' } },
    },
  });
  const request = parseFilterRequest({ known_input: {}, target_results: ['A'], format: 'sql' });
  assert.throws(
    () => generateFilter(compiled, request),
    (err: unknown) =>
      err instanceof FilterError && err.code === 'INEXPRESSIBLE' && err.message.includes("comparison between two unknown fields 'a' and 'b' in (a == b)"),
  );
});
