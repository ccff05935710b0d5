/**
 * A synchronized rule is verified exactly as a local rule file (EXTENSIONS.md 1 "Broker
 * credentials"): the façade's `applyChange` runs the local-file signature policy on every
 * `ruleset.put` from the broker; a rule that fails is logged (tenant, name, reason) and not
 * applied, and the version already held keeps serving.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { generateKeyPair, signDoc, toBase64, type SignaturePolicy } from '../../../src/signing/index.js';
import { makeFixture, ruleset, type Fixture } from './service-fixture.js';

const trusted = generateKeyPair();
const stranger = generateKeyPair();
const TRUSTED = toBase64(trusted.publicKeyRaw);

const required: SignaturePolicy = { enabled: true, require: true, trustedKeys: [TRUSTED], allowUnsignedLocal: false };
const SKIPPED = 'synchronized rule skipped; the loaded version keeps serving';

let fx: Fixture | undefined;
afterEach(() => fx?.cleanup());

const put = (doc: unknown, tenant = 'default') => fx!.service.applyChange({ kind: 'ruleset.put', tenant, doc }, 'sync', false);
const held = (name: string) => fx!.store.get('default', name)?.version;

describe('synchronized rules and the signature policy', () => {
  it('applies a rule signed by a trusted key, and keeps its signature for republication', async () => {
    fx = await makeFixture({ signature: required });
    assert.equal(await put(signDoc(ruleset('pricing', '1.0.0'), trusted.privateKey)), 'applied');
    assert.equal(held('pricing'), '1.0.0');
    assert.equal(fx.store.get('default', 'pricing')?.signature?.public_key, TRUSTED);
    assert.deepEqual(fx.logger.find(SKIPPED), []);
  });

  it('skips an unsigned, an untrusted and a tampered rule, logs why, and keeps the version held', async () => {
    fx = await makeFixture({ signature: required });
    assert.equal(await put(signDoc(ruleset('pricing', '1.0.0', 'GOOD'), trusted.privateKey)), 'applied');
    const stored = fx.events.length;
    const signed = signDoc(ruleset('pricing', '3.0.0', 'GOOD'), trusted.privateKey);
    const tampered = { ...signed, steps: { t: { type: 'terminal', result: { code: 'EVIL' } } } };
    const cases: Array<[string, unknown, string]> = [
      ['unsigned', ruleset('pricing', '2.0.0', 'EVIL'), 'signature verification failed: no signature found'],
      ['untrusted key', signDoc(ruleset('pricing', '2.1.0', 'EVIL'), stranger.privateKey), 'signature verification failed: untrusted public key'],
      ['tampered body', tampered, 'signature verification failed: invalid signature'],
    ];
    for (const [what, doc, reason] of cases) {
      const before: number = fx.logger.find(SKIPPED).length;
      assert.equal(await put(doc), 'rejected', what);
      assert.equal(held('pricing'), '1.0.0', `${what}: the previous version keeps serving`);
      const lines = fx.logger.find(SKIPPED);
      assert.equal(lines.length, before + 1, what);
      assert.deepEqual(
        { level: lines.at(-1)!.level, tenant: lines.at(-1)!['tenant'], name: lines.at(-1)!['name'], reason: lines.at(-1)!['reason'] },
        { level: 'warn', tenant: 'default', name: 'pricing', reason },
        what,
      );
    }
    assert.equal(fx.events.length, stored, 'nothing more reached the store');
  });

  it('follows --signature-allow-unsigned-local like a local file: unsigned accepted, bad signatures still refused', async () => {
    fx = await makeFixture({ signature: { ...required, allowUnsignedLocal: true } });
    assert.equal(await put(ruleset('plain', '1.0.0')), 'applied');
    assert.equal(await put(signDoc(ruleset('plain', '2.0.0'), stranger.privateKey)), 'rejected');
    assert.equal(held('plain'), '1.0.0');
  });

  it('verifies nothing with verification off (the default)', async () => {
    fx = await makeFixture();
    assert.equal(await put(signDoc(ruleset('any', '1.0.0'), stranger.privateKey)), 'applied');
  });
});
