/**
 * `config.mask` (EXTENSIONS.md 4 "Decision records"): mask paths parse (`a.b`, `a[0].b`,
 * `a[*].b`) or say why not, a document with a bad mask is refused with every problem, and
 * `maskCopy` replaces exactly the values at the paths by "***" in a copy, never in the original.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MASKED, compileRuleset, maskCopy, parseMaskPath, parseMaskPaths, validateRuleset } from '../../../src/ruleset/index.js';

const DOC = {
  config: { name: 'm', entry_step: 'done' },
  steps: { done: { type: 'terminal', result: { code: 'OK' } } },
};

function withMask(mask: unknown): unknown {
  return { ...DOC, config: { ...DOC.config, mask } };
}

test('mask paths parse into keys, indexes and [*]', () => {
  assert.deepEqual(parseMaskPath('user.ssn'), [{ key: 'user' }, { key: 'ssn' }]);
  assert.deepEqual(parseMaskPath('items[0].card'), [{ key: 'items' }, { index: 0 }, { key: 'card' }]);
  assert.deepEqual(parseMaskPath('cards[*].number'), [{ key: 'cards' }, { each: true }, { key: 'number' }]);
  assert.deepEqual(parseMaskPath('m[1][2]'), [{ key: 'm' }, { index: 1 }, { index: 2 }]);
  assert.deepEqual(parseMaskPath('first-name'), [{ key: 'first-name' }]);
});

test('a text that is not a mask path says why', () => {
  for (const [text, why] of [
    ['', 'must not be empty'],
    ['user.', 'must not end with a dot'],
    ['.ssn', 'empty field name at 0'],
    ['a..b', 'empty field name at 2'],
    ['[0].a', 'must start with a field name'],
    ['a[x]', "'[x]' at 1 is not an array index or [*]"],
    ['a[-1]', "'[-1]' at 1 is not an array index or [*]"],
    ['a[0', "unclosed '[' at 1"],
    ['a]b', "unexpected ']' at 1"],
    ['a[0]b', "expected '.' or '[' at 4"],
  ] as const) {
    assert.equal(parseMaskPath(text), why, text);
  }
});

test('config.mask is accepted as an array of paths and kept in the stored document', () => {
  assert.deepEqual(validateRuleset(withMask(['user.ssn', 'items[*].card'])), []);
  assert.deepEqual(compileRuleset(withMask(['user.ssn'])).doc.config.mask, ['user.ssn']);
});

test('a bad config.mask is refused with every problem at its index', () => {
  assert.deepEqual(validateRuleset(withMask('user.ssn')), [{ path: 'config.mask', message: 'must be an array of paths (e.g. ["user.ssn", "items[*].card"])' }]);
  assert.deepEqual(validateRuleset(withMask(['ok', 3, 'a..b'])), [
    { path: 'config.mask[1]', message: 'must be a string (a path like user.ssn)' },
    { path: 'config.mask[2]', message: 'empty field name at 2' },
  ]);
});

test('maskCopy replaces the values at the paths in a copy and leaves the original alone', () => {
  const input = {
    user: { name: 'ann', ssn: '123-45-6789' },
    items: [{ card: '4111', qty: 1 }, { card: '5555' }],
    cards: [{ number: '1' }, { other: true }],
  };
  const before = structuredClone(input);
  const paths = parseMaskPaths(['user.ssn', 'items[1].card', 'cards[*].number', 'absent.field', 'items[9].card']);
  const masked = maskCopy(input, paths) as typeof input;
  assert.deepEqual(masked, {
    user: { name: 'ann', ssn: MASKED },
    items: [{ card: '4111', qty: 1 }, { card: MASKED }],
    cards: [{ number: MASKED }, { other: true }],
  });
  assert.deepEqual(input, before, 'the original is unchanged');
  // Subtrees off every path are shared, not copied.
  assert.equal(masked.items[0], input.items[0]);
});

test('maskCopy masks whole subtrees, array elements, and returns the value itself when nothing matched', () => {
  assert.deepEqual(maskCopy({ a: { b: 1 } }, parseMaskPaths(['a'])), { a: MASKED });
  assert.deepEqual(maskCopy({ a: [1, 2] }, parseMaskPaths(['a[*]'])), { a: [MASKED, MASKED] });
  const v = { a: 1 };
  assert.equal(maskCopy(v, parseMaskPaths(['b.c'])), v);
  assert.equal(maskCopy(v, []), v);
  // A key named __proto__ is masked as an own data property, the copy's prototype untouched.
  const tricky = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
  const out = maskCopy(tricky, parseMaskPaths(['__proto__'])) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, MASKED);
});

test('parseMaskPaths skips entries that are not valid paths', () => {
  assert.deepEqual(parseMaskPaths(['a', 7, 'b..c', 'd[0]']), [[{ key: 'a' }], [{ key: 'd' }, { index: 0 }]]);
  assert.deepEqual(parseMaskPaths(undefined), []);
});
