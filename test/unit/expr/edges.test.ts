/**
 * Edges of the expression language found by hostile input: strings with lone surrogates are
 * ordered by code point like every other string, and the rendered (`parsed`) text of any
 * accepted expression reads back, however deeply its `!`, `-` and `if` nest.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareStrings, evaluate, MAX_NESTING_DEPTH, parse, render } from '../../../src/expr/index.js';

/** Reference order: by code point, a lone surrogate being its own code point. */
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

describe('string order with surrogates', () => {
  it('a lone low surrogate sorts before a supplementary character', () => {
    assert.equal(evaluate('s >= "😀"', { s: '\ude00' }).result, false);
    assert.equal(evaluate('s < "😀"', { s: '\ude00' }).result, true);
    assert.equal(evaluate('s < t', { s: '\ude00', t: '😀' }).result, true);
    assert.equal(evaluate('s > "\uffff"', { s: '😀' }).result, true);
  });
  it('agrees with code point order on every pair of short strings of edge units', () => {
    const units = [0x41, 0xd7ff, 0xd800, 0xd83d, 0xdbff, 0xdc00, 0xde00, 0xdfff, 0xe000, 0xffff];
    const strs = [''];
    for (const u of units) strs.push(String.fromCharCode(u));
    for (const u of units) for (const v of units) strs.push(String.fromCharCode(u, v));
    for (const u of units) for (const v of units) for (const w of [0x41, 0xd83d, 0xde00]) strs.push(String.fromCharCode(u, v, w));
    for (const a of strs) {
      for (const b of strs) {
        assert.equal(Math.sign(compareStrings(a, b)), Math.sign(byCodePoint(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      }
    }
  });
});

describe('the rendered text of an accepted expression reads back', () => {
  const shapes: Array<[string, (n: number) => string]> = [
    ['!', (n) => `${'!'.repeat(n)}x`],
    ['- (negation)', (n) => `${'-'.repeat(n)}x`],
    ['!- mixed', (n) => `${'!-'.repeat(n / 2)}x`],
    ['if', (n) => `${'if false then 1 else '.repeat(n)}0`],
    ['(!', (n) => `${'(!'.repeat(n / 2)}x${')'.repeat(n / 2)}`],
  ];
  for (const [what, source] of shapes) {
    it(`${what} nested up to ${MAX_NESTING_DEPTH} deep`, () => {
      for (const n of [1, 2, 31, 32, 40, MAX_NESTING_DEPTH]) {
        const ast = parse(source(n));
        const text = render(ast);
        assert.equal(render(parse(text)), text, `${what} × ${n}`);
      }
    });
  }
  it('nesting limits of the source are unchanged', () => {
    assert.throws(() => parse(`${'!'.repeat(MAX_NESTING_DEPTH + 1)}x`), /nested too deeply/);
    assert.throws(() => parse(`${'('.repeat(MAX_NESTING_DEPTH + 1)}1${')'.repeat(MAX_NESTING_DEPTH + 1)}`), /nested too deeply/);
    assert.throws(() => parse(`${'(- '.repeat(MAX_NESTING_DEPTH + 1)}x${')'.repeat(MAX_NESTING_DEPTH + 1)}`), /nested too deeply/);
  });
});
