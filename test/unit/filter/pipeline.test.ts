/**
 * Properties of the filter pipeline that golden cases cannot show: the per-document cache, the
 * work limit, deterministic output, and that src/filter stays pure.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_DEPTH, MAX_VISITS, generateFilter, parseFilterRequest } from '../../../src/filter/index.js';
import { prepare } from '../../../src/filter/prepare.js';
import type { RulesetDoc } from '../../../src/ruleset/index.js';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../../src/filter');

function doc(): RulesetDoc {
  return {
    config: { name: 'p', entry_step: 'd' },
    steps: {
      d: {
        type: 'decision',
        branches: [
          { condition: 'age >= 18 && country in ["US", "CA"]', next_step: 'ok' },
          { condition: 'contains(name, "x")', next_step: 'ok' },
        ],
        default_next: 'no',
      },
      ok: { type: 'terminal', result: { code: 'OK' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
}

/** `n` decisions in a row, each with two ways to the next step: 2^n paths, all ending in OK. */
function diamonds(n: number): RulesetDoc {
  const steps: RulesetDoc['steps'] = { ok: { type: 'terminal', result: { code: 'OK' } } };
  for (let i = 0; i < n; i++) {
    const next = i === n - 1 ? 'ok' : `d${i + 1}`;
    steps[`d${i}`] = { type: 'decision', branches: [{ condition: `x${i} == 1`, next_step: next }], default_next: next };
  }
  return { config: { name: 'diamonds', entry_step: 'd0' }, steps };
}

test('a document is prepared once and cached by object identity', () => {
  const d = doc();
  const first = prepare(d);
  assert.equal(prepare(d), first, 'same object → same prepared graph');
  generateFilter(d, parseFilterRequest({ known_input: {}, target_results: ['OK'] }));
  assert.equal(prepare(d), first, 'generateFilter uses the cache');
  assert.notEqual(prepare(doc()), first, 'an equal copy is another document');
});

test('output is deterministic: same request, same bytes', () => {
  for (const format of ['sql', 'json', 'mongo']) {
    const req = parseFilterRequest({ known_input: {}, target_results: ['OK'], format });
    const a = JSON.stringify(generateFilter(doc(), req));
    const b = JSON.stringify(generateFilter(doc(), req));
    assert.equal(a, b);
  }
});

test('the walk stops at MAX_VISITS steps with truncated, even with max_paths 0', () => {
  assert.equal(MAX_DEPTH, 50);
  assert.ok(MAX_VISITS >= 10_000);
  const r = generateFilter(diamonds(24), parseFilterRequest({ known_input: {}, target_results: ['OK'], max_paths: 0 }));
  assert.deepEqual(r, { format: 'sql', filter: 'TRUE', always_matches: true, never_matches: false, truncated: true, unknown_fields: [] });
});

test('many paths below the limits merge back into one answer', () => {
  // 2^8 = 256 paths, each a combination of x_i == 1 / x_i != 1: together they cover every row.
  const r = generateFilter(diamonds(8), parseFilterRequest({ known_input: {}, target_results: ['OK'], max_paths: 0 }));
  assert.equal(r.always_matches, true);
  assert.equal(r.truncated, false);
});

test('src/filter imports no node:* module (pure)', () => {
  const files = readdirSync(SRC).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 5);
  for (const f of files) {
    const text = readFileSync(join(SRC, f), 'utf8');
    assert.doesNotMatch(text, /from\s+['"]node:/, f);
    assert.doesNotMatch(text, /require\(/, f);
  }
});

test('a cached document answers every request as a fresh one would (no leak between requests)', () => {
  const shared = doc();
  const requests = [
    { known_input: {} },
    { known_input: { age: 30 } },
    { known_input: { age: 10, country: 'US' } },
    { known_input: {} },
    { known_input: { name: 'xyz' } },
    { known_input: { age: 30 } },
  ];
  for (const r of requests) {
    for (const format of ['sql', 'json', 'mongo']) {
      const body = { ...r, target_results: ['OK'], format };
      assert.deepEqual(generateFilter(shared, parseFilterRequest(body)), generateFilter(doc(), parseFilterRequest(body)), JSON.stringify(body));
    }
  }
});
