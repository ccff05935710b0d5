/**
 * suggest(): the nearest known key by Damerau-Levenshtein distance (swaps count 1), at most 2
 * edits, never the word itself, nothing for an unrelated word (EXTENSIONS.md 2 "Strict documents").
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { didYouMean, editDistance, suggest } from '../../../src/ruleset/suggest.js';

const STEP_KEYS = ['id', 'name', 'type', 'branches', 'default_next'];

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours as one edit each', () => {
    assert.equal(editDistance('default_next', 'default_next'), 0);
    assert.equal(editDistance('defualt_next', 'default_next'), 1); // swap
    assert.equal(editDistance('default_nxt', 'default_next'), 1); // deletion
    assert.equal(editDistance('defaultt_next', 'default_next'), 1); // insertion
    assert.equal(editDistance('default_naxt', 'default_next'), 1); // substitution
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('abc', ''), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });
  it('stops at the limit', () => {
    assert.equal(editDistance('kitten', 'sitting', 1), 2);
    assert.equal(editDistance('a', 'abcdef', 2), 3);
  });
  it('is symmetric', () => {
    for (const [a, b] of [
      ['branch', 'branches'],
      ['tpye', 'type'],
      ['x', 'next_step'],
    ] as const) {
      assert.equal(editDistance(a, b), editDistance(b, a));
    }
  });
});

describe('suggest', () => {
  it('finds the near key', () => {
    assert.equal(suggest('defualt_next', STEP_KEYS), 'default_next');
    assert.equal(suggest('tpye', STEP_KEYS), 'type');
    assert.equal(suggest('branchs', STEP_KEYS), 'branches');
    assert.equal(suggest('Name', STEP_KEYS), 'name'); // case is ignored
    assert.equal(suggest('nmae', STEP_KEYS), 'name');
  });
  it('says nothing when no key is within 2 edits', () => {
    assert.equal(suggest('author', STEP_KEYS), undefined);
    assert.equal(suggest('next_step', STEP_KEYS), undefined);
    assert.equal(suggest('defaults', STEP_KEYS), undefined);
  });
  it('never suggests a key for a word that shares nothing with it', () => {
    // 'x' is 2 edits from 'id' but shares no letter: the distance must stay below the length.
    assert.equal(suggest('x', ['id']), undefined);
    assert.equal(suggest('q', ['a']), undefined);
  });
  it('prefers the nearest, then the first', () => {
    assert.equal(suggest('nam', ['names', 'name']), 'name');
    assert.equal(suggest('ab', ['ac', 'ad']), 'ac');
  });
  it('didYouMean writes the suffix or nothing', () => {
    assert.equal(didYouMean('defualt_next', STEP_KEYS), " (did you mean 'default_next'?)");
    assert.equal(didYouMean('owner', STEP_KEYS), '');
  });
});
