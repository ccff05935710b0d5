/**
 * Tests and metadata are part of what a signature covers (EXTENSIONS.md 2 "Tests travel with
 * the ruleset everywhere: ... signing"): changing a test or the metadata of a signed ruleset
 * breaks its signature.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { rawPublicKey } from '../../../src/signing/ed25519.js';
import { signDoc, verifyDoc } from '../../../src/signing/policy.js';

const DOC = {
  config: { name: 'loan', entry_step: 't', metadata: { owner: 'risk' } },
  steps: { t: { type: 'terminal', result: { code: 'OK' } } },
  tests: [{ name: 'ok', input: {}, expect: { code: 'OK' } }],
};

describe('signatures cover tests and metadata', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const signed = signDoc(structuredClone(DOC), privateKey);
  const sig = Buffer.from(signed._signature.signature, 'base64');
  const key = rawPublicKey(privateKey);

  it('the signed document verifies', () => {
    assert.equal(verifyDoc(signed, key, sig), true);
  });
  it('a changed test does not', () => {
    const tampered = structuredClone(signed);
    tampered.tests[0]!.expect.code = 'NOPE';
    assert.equal(verifyDoc(tampered, key, sig), false);
  });
  it('removed tests do not', () => {
    const { tests: _t, ...rest } = structuredClone(signed);
    assert.equal(verifyDoc(rest, key, sig), false);
  });
  it('changed metadata does not', () => {
    const tampered = structuredClone(signed);
    tampered.config.metadata.owner = 'someone else';
    assert.equal(verifyDoc(tampered, key, sig), false);
  });
});
