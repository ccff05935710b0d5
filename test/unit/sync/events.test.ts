import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EnvelopeError, allSubjects, decodeEnvelope, encodeEnvelope, eventSubject, ruleSubject, rulePutOf, tenantsSubject } from '../../../src/sync/events.js';
import type { RuleRecord } from '../../../src/store/types.js';

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

describe('sync events (wire format)', () => {
  it('uses the subjects of the spec', () => {
    assert.equal(ruleSubject('svc.rules', 'default', 'pricing'), 'svc.rules.default.pricing');
    assert.equal(tenantsSubject('svc.rules'), 'svc.rules.tenants');
    assert.equal(allSubjects('svc.rules'), 'svc.rules.>');
    assert.equal(eventSubject('p', { type: 'TenantConfigChanged', tenant_id: 't', tenant: null }), 'p.tenants');
  });

  it('escapes dots inside a name so subjects stay valid and one-to-one', () => {
    assert.equal(ruleSubject('svc.rules', 'default', 'a.b'), 'svc.rules.default.a%2Eb');
    assert.equal(ruleSubject('svc.rules', 'default', 'ends.'), 'svc.rules.default.ends%2E');
    assert.notEqual(ruleSubject('p', 'x.y', 'z'), ruleSubject('p', 'x', 'y.z'));
  });

  it('round-trips an envelope with a RulePut carrying the signature', () => {
    const rec = {
      tenant: 'default',
      name: 'r',
      version: '2.0.0',
      doc: { config: { name: 'r', version: '2.0.0', entry_step: 't' }, steps: {} },
      signature: { algorithm: 'ed25519', public_key: 'pk', signature: 'sig' },
    } as unknown as RuleRecord;
    const event = rulePutOf(rec);
    assert.equal(event.type, 'RulePut');
    assert.equal(JSON.parse(event.ruleset_json)._signature.signature, 'sig');
    const env = decodeEnvelope(encodeEnvelope({ instance_id: 'w1', event, timestamp_ms: 123 }));
    assert.deepEqual(env, { instance_id: 'w1', event, timestamp_ms: 123 });
  });

  it('rejects bodies that are not valid envelopes, saying why', () => {
    const ok = { instance_id: 'w', timestamp_ms: 1, event: { type: 'RuleDeleted', tenant_id: 'default', name: 'r' } };
    assert.doesNotThrow(() => decodeEnvelope(bytes(ok)));
    const bad: Array<[unknown, RegExp]> = [
      ['not json', /not JSON/],
      [[1], /not a JSON object/],
      [{ ...ok, instance_id: '' }, /instance_id/],
      [{ ...ok, timestamp_ms: 'x' }, /timestamp_ms/],
      [{ ...ok, event: { ...ok.event, type: 'Nope' } }, /unknown event type/],
      [{ ...ok, event: { ...ok.event, name: '../etc' } }, /event.name/],
      [{ ...ok, event: { ...ok.event, tenant_id: '' } }, /tenant_id/],
      [{ ...ok, event: { type: 'RulePut', tenant_id: 'default', name: 'r', version: '1' } }, /ruleset_json/],
    ];
    for (const [body, re] of bad) {
      const raw = typeof body === 'string' ? new TextEncoder().encode(body) : bytes(body);
      assert.throws(
        () => decodeEnvelope(raw),
        (err: unknown) => err instanceof EnvelopeError && re.test((err as Error).message),
      );
    }
  });
});
