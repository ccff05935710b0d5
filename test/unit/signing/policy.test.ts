import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPair, signBytes } from '../../../src/signing/ed25519.js';
import { signedBytes } from '../../../src/signing/canonical-json.js';
import {
  checkSignature,
  DISABLED_SIGNATURE_POLICY,
  findSignature,
  signDoc,
  verifyDoc,
  type SignaturePolicy,
  type SignatureSource,
} from '../../../src/signing/policy.js';

const signer = generateKeyPair();
const signerKey = signer.publicKeyRaw.toString('base64');
const stranger = generateKeyPair();

function rule(): Record<string, unknown> {
  return {
    config: { name: 'loan', version: '1.0.0', entry_step: 'check' },
    steps: {
      check: { type: 'decision', branches: [{ condition: 'age >= 18', next_step: 'ok' }], default_next: 'no' },
      ok: { type: 'terminal', result: { code: 'OK', message: 'ünïcode ✓' } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  };
}

const optional: SignaturePolicy = { enabled: true, require: false, trustedKeys: [signerKey], allowUnsignedLocal: true };
const required: SignaturePolicy = { enabled: true, require: true, trustedKeys: [signerKey], allowUnsignedLocal: false };
const requiredLocalOk: SignaturePolicy = { ...required, allowUnsignedLocal: true };

describe('signDoc', () => {
  it('adds an ed25519 _signature with signed_at in ISO UTC, without touching the input', () => {
    const doc = rule();
    const before = JSON.stringify(doc);
    const signed = signDoc(doc, signer.privateKey, new Date('2024-05-06T07:08:09.010Z'));
    assert.equal(JSON.stringify(doc), before);
    assert.equal(signed._signature.algorithm, 'ed25519');
    assert.equal(signed._signature.public_key, signerKey);
    assert.equal(signed._signature.signed_at, '2024-05-06T07:08:09.010Z');
    assert.equal(Buffer.from(signed._signature.signature, 'base64').length, 64);
  });

  it('signs the canonical JSON without _signature, so re-signing gives the same signature', () => {
    const once = signDoc(rule(), signer.privateKey);
    const twice = signDoc(once, signer.privateKey);
    assert.equal(twice._signature.signature, once._signature.signature);
    const expected = signBytes(signer.privateKey, signedBytes(rule())).toString('base64');
    assert.equal(once._signature.signature, expected);
  });

  it('refuses non-objects', () => {
    assert.throws(() => signDoc([] as unknown as object, signer.privateKey), TypeError);
  });
});

describe('checkSignature', () => {
  it('accepts a body signature by a trusted key (round trip, key order irrelevant)', () => {
    const signed = signDoc(rule(), signer.privateKey);
    const reordered = JSON.parse(JSON.stringify({ _signature: signed._signature, steps: signed.steps, config: signed.config }));
    assert.deepEqual(checkSignature(reordered, 'api', optional), { ok: true, signed: true, publicKey: signerKey });
  });

  it('rejects a tampered body with "invalid signature" and the 403 message', () => {
    const signed = signDoc(rule(), signer.privateKey) as ReturnType<typeof rule> & { _signature: unknown };
    (signed.config as Record<string, unknown>).version = '2.0.0';
    assert.deepEqual(checkSignature(signed, 'api', optional), {
      ok: false,
      reason: 'invalid signature',
      status: 403,
      message: 'signature verification failed: invalid signature',
    });
  });

  it('rejects a signature by an untrusted key', () => {
    const signed = signDoc(rule(), stranger.privateKey);
    const verdict = checkSignature(signed, 'api', optional);
    assert.equal(verdict.ok, false);
    assert.equal(!verdict.ok && verdict.reason, 'untrusted public key');
  });

  it('rejects a trusted public key that did not make the signature (wrong key)', () => {
    const signed = signDoc(rule(), stranger.privateKey);
    signed._signature.public_key = signerKey;
    const verdict = checkSignature(signed, 'local', optional);
    assert.equal(!verdict.ok && verdict.reason, 'invalid signature');
  });

  it('rejects a public key that is not base64 of 32 bytes', () => {
    for (const publicKey of ['%%%not-base64%%%', Buffer.alloc(31).toString('base64'), 42]) {
      const signed = signDoc(rule(), signer.privateKey) as unknown as Record<string, unknown> & { _signature: Record<string, unknown> };
      signed._signature.public_key = publicKey;
      const verdict = checkSignature(signed, 'api', optional);
      assert.equal(!verdict.ok && verdict.reason, 'invalid public key base64', String(publicKey));
    }
  });

  it('rejects a malformed signature block as "invalid signature"', () => {
    const base = signDoc(rule(), signer.privateKey);
    const variants: unknown[] = [
      'a string',
      { ...base._signature, algorithm: 'rsa' },
      { ...base._signature, signature: 'not base64!' },
      { ...base._signature, signature: Buffer.alloc(63).toString('base64') },
      { ...base._signature, signature: undefined },
    ];
    for (const block of variants) {
      const verdict = checkSignature({ ...rule(), _signature: block }, 'api', optional);
      assert.equal(!verdict.ok && verdict.reason, 'invalid signature', JSON.stringify(block));
    }
  });

  it('accepts an algorithm written in another case or left out', () => {
    const base = signDoc(rule(), signer.privateKey);
    const { algorithm: _a, ...noAlgorithm } = base._signature;
    assert.equal(checkSignature({ ...base, _signature: { ...base._signature, algorithm: 'Ed25519' } }, 'api', optional).ok, true);
    assert.equal(checkSignature({ ...base, _signature: noAlgorithm }, 'api', optional).ok, true);
  });

  it('treats _signature: null as unsigned', () => {
    assert.equal(checkSignature({ ...rule(), _signature: null }, 'api', optional).ok, true);
    assert.equal(!checkSignature({ ...rule(), _signature: null }, 'api', required).ok, true);
  });

  describe('unsigned rules in the four modes', () => {
    const cases: Array<[string, SignaturePolicy, SignatureSource, boolean]> = [
      ['disabled', DISABLED_SIGNATURE_POLICY, 'api', true],
      ['disabled', DISABLED_SIGNATURE_POLICY, 'local', true],
      ['optional', optional, 'api', true],
      ['optional', optional, 'local', true],
      ['required', required, 'api', false],
      ['required', required, 'local', false],
      ['required + unsigned local allowed', requiredLocalOk, 'api', false],
      ['required + unsigned local allowed', requiredLocalOk, 'local', true],
    ];
    for (const [mode, policy, source, accepted] of cases) {
      it(`${mode}, ${source}: ${accepted ? 'accepted' : 'rejected'}`, () => {
        const verdict = checkSignature(rule(), source, policy);
        if (accepted) {
          assert.deepEqual(verdict, { ok: true, signed: false });
        } else {
          assert.deepEqual(verdict, { ok: false, reason: 'no signature found', status: 403, message: 'signature verification failed: no signature found' });
        }
      });
    }
  });

  it('still verifies signed local files when unsigned local files are allowed', () => {
    const signed = signDoc(rule(), stranger.privateKey);
    assert.equal(!checkSignature(signed, 'local', requiredLocalOk).ok, true);
    assert.equal(checkSignature(signDoc(rule(), signer.privateKey), 'local', requiredLocalOk).ok, true);
  });

  it('disabled mode accepts anything without verifying', () => {
    const signed = signDoc(rule(), stranger.privateKey);
    assert.deepEqual(checkSignature(signed, 'api', DISABLED_SIGNATURE_POLICY), { ok: true, signed: false });
    assert.deepEqual(checkSignature(rule(), 'api', DISABLED_SIGNATURE_POLICY, { signature: 'only one' }), { ok: true, signed: false });
  });

  it('an empty trusted key list trusts nobody', () => {
    const verdict = checkSignature(signDoc(rule(), signer.privateKey), 'api', { ...optional, trustedKeys: [] });
    assert.equal(!verdict.ok && verdict.reason, 'untrusted public key');
  });

  it('matches trusted keys written without padding or with spaces', () => {
    const policy = { ...optional, trustedKeys: [` ${signerKey.replace(/=+$/, '')} `] };
    assert.equal(checkSignature(signDoc(rule(), signer.privateKey), 'api', policy).ok, true);
  });
});

describe('header signatures', () => {
  const headersFor = (doc: unknown, key = signer) => ({
    signature: signBytes(key.privateKey, signedBytes(doc)).toString('base64'),
    publicKey: key.publicKeyRaw.toString('base64'),
  });

  it('accepts a valid header pair for an unsigned body', () => {
    const doc = rule();
    assert.deepEqual(checkSignature(doc, 'api', required, headersFor(doc)), { ok: true, signed: true, publicKey: signerKey });
  });

  it('rejects a header signature over other content, or by an untrusted key', () => {
    const headers = headersFor(rule());
    const changed = { ...rule(), extra: 1 };
    assert.equal((checkSignature(changed, 'api', required, headers) as { reason?: string }).reason, 'invalid signature');
    assert.equal((checkSignature(rule(), 'api', required, headersFor(rule(), stranger)) as { reason?: string }).reason, 'untrusted public key');
    assert.equal((checkSignature(rule(), 'api', required, { ...headers, publicKey: 'bad key' }) as { reason?: string }).reason, 'invalid public key base64');
  });

  it('only one of the two headers is a bad request (400), not a verification failure', () => {
    const headers = headersFor(rule());
    for (const partial of [{ signature: headers.signature }, { publicKey: headers.publicKey }, { signature: headers.signature, publicKey: '  ' }]) {
      const verdict = checkSignature(rule(), 'api', optional, partial);
      assert.deepEqual(verdict, {
        ok: false,
        reason: 'incomplete signature headers',
        status: 400,
        message: 'X-Svc-Signature and X-Svc-Public-Key must be sent together',
      });
    }
  });

  it('headers, when present, take precedence over the body _signature', () => {
    const signedByStranger = signDoc(rule(), stranger.privateKey);
    assert.equal(checkSignature(signedByStranger, 'api', required, headersFor(rule())).ok, true);
    const signedBySigner = signDoc(rule(), signer.privateKey);
    assert.equal(checkSignature(signedBySigner, 'api', required, headersFor(rule(), stranger)).ok, false);
  });

  it('empty header values count as absent', () => {
    assert.equal(findSignature(rule(), { signature: '', publicKey: '' }).kind, 'none');
  });
});

describe('verifyDoc', () => {
  it('never throws, even for values without a JSON form', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(verifyDoc(cyclic, signer.publicKeyRaw, Buffer.alloc(64)), false);
  });

  it('verifies documents holding an own __proto__ key', () => {
    const doc = JSON.parse('{"__proto__":{"polluted":true},"config":{}}') as object;
    const signed = signDoc(doc, signer.privateKey);
    assert.ok(Object.hasOwn(signed, '__proto__'));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(checkSignature(signed, 'api', required).ok, true);
  });
});
