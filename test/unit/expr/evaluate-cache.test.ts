/**
 * The cached evaluator of `/eval` (src/expr/evaluate-cache.ts) answers exactly like `evaluate`
 * on every golden expression case (lenient mode, no variables), the first time and again from
 * the cache, including the errors; eviction keeps it bounded and correct.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { cachedEvaluator, evaluate } from '../../../src/expr/index.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '../../cases/expr');

interface Case {
  expr?: string;
  input?: unknown;
  vars?: unknown;
  mode?: string;
}

function outcome(fn: () => unknown): unknown {
  try {
    return { ok: JSON.stringify(fn()) };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string; position?: number };
    return { err: [e.name, e.code, e.message, e.position] };
  }
}

const cases: Case[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => YAML.parse(readFileSync(join(DIR, f), 'utf8')) as Case[])
  .filter((c) => typeof c.expr === 'string' && c.vars === undefined && c.mode !== 'strict');

test('the cached evaluator matches evaluate on every golden case, cold and warm', () => {
  assert.ok(cases.length > 100, `found ${cases.length} cases`);
  const cached = cachedEvaluator(64);
  for (const round of ['cold', 'warm']) {
    for (const c of cases) {
      const want = outcome(() => evaluate(c.expr!, c.input));
      const got = outcome(() => cached(c.expr!, c.input));
      assert.deepEqual(got, want, `${round}: ${c.expr}`);
    }
  }
});

test('a compiled expression is reused with other contexts', () => {
  const cached = cachedEvaluator();
  assert.deepEqual(cached('x + 1', { x: 1 }), { result: 2, parsed: '(+ x 1)' });
  assert.deepEqual(cached('x + 1', { x: 41 }), { result: 42, parsed: '(+ x 1)' });
  assert.deepEqual(
    outcome(() => cached('x + 1', undefined)),
    outcome(() => evaluate('x + 1', undefined)),
  );
});

test('size 0 caches nothing and still evaluates', () => {
  const cached = cachedEvaluator(0);
  assert.deepEqual(cached('1 + 2', {}), { result: 3, parsed: '(+ 1 2)' });
  assert.deepEqual(cached('1 + 2', {}), { result: 3, parsed: '(+ 1 2)' });
});
