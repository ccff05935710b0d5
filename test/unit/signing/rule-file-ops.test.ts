import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPair } from '../../../src/signing/ed25519.js';
import { decodeRuleFile } from '../../../src/signing/rule-file.js';
import { CompileError, compileRuleFile, signRuleFile, verifyRuleFile } from '../../../src/signing/rule-file-ops.js';
import { decodeSvc, encodeSvc, initSvcCodec } from '../../../src/signing/svc-format.js';

await initSvcCodec();

const key = generateKeyPair();
const pub = key.publicKeyRaw.toString('base64');
const other = generateKeyPair();
const now = new Date('2025-01-02T03:04:05.000Z');

const json = `{
  "config": { "name": "twin", "version": "1.0", "entry_step": "s" },
  "steps": { "s": { "type": "terminal", "result": { "code": "OK", "amount": 1.0, "label": "naïve ✓" } } }
}
`;
const yaml = `# Twin rule in YAML
config:
  name: twin
  version: "1.0" # quoted on purpose
  entry_step: s
steps:
  s:
    type: terminal
    result: { code: OK, amount: 1.0, label: "naïve ✓" }
`;

function sigOf(path: string, bytes: Buffer): Record<string, string> {
  return decodeRuleFile(path, bytes)._signature as Record<string, string>;
}

describe('signRuleFile', () => {
  it('JSON and YAML twins get the same signature', () => {
    const j = signRuleFile('twin.json', Buffer.from(json), key.privateKey, now);
    const y = signRuleFile('twin.yaml', Buffer.from(yaml), key.privateKey, now);
    assert.equal(sigOf('twin.json', j).signature, sigOf('twin.yaml', y).signature);
    assert.deepEqual(sigOf('twin.json', j), {
      algorithm: 'ed25519',
      public_key: pub,
      signature: sigOf('twin.yaml', y).signature,
      signed_at: '2025-01-02T03:04:05.000Z',
    });
  });

  it('writes pretty JSON with _signature last', () => {
    const out = signRuleFile('twin.json', Buffer.from(json), key.privateKey, now).toString('utf8');
    assert.match(out, /^\{\n {2}"config": \{\n/);
    assert.ok(out.endsWith('}\n'));
    assert.deepEqual(Object.keys(JSON.parse(out)), ['config', 'steps', '_signature']);
  });

  it('keeps YAML comments and layout, adding a _signature mapping', () => {
    const out = signRuleFile('twin.yaml', Buffer.from(yaml), key.privateKey, now).toString('utf8');
    assert.ok(out.startsWith('# Twin rule in YAML\n'));
    assert.match(out, /version: "1\.0" # quoted on purpose/);
    assert.match(out, /\n_signature:\n {2}algorithm: ed25519\n {2}public_key: \S+\n {2}signature: \S+\n {2}signed_at: /);
  });

  it('re-signing replaces the old signature (YAML keeps one _signature)', () => {
    const once = signRuleFile('twin.yaml', Buffer.from(yaml), other.privateKey, now);
    const twice = signRuleFile('twin.yaml', once, key.privateKey, now).toString('utf8');
    assert.equal(twice.match(/_signature:/g)?.length, 1);
    assert.equal(sigOf('twin.yaml', Buffer.from(twice)).public_key, pub);
    assert.deepEqual(verifyRuleFile('twin.yaml', Buffer.from(twice), [pub]), { valid: true, publicKey: pub });
  });

  it('signs a .svc file by re-encoding it with the signature block', () => {
    const unsigned = encodeSvc(JSON.parse(json));
    const signed = signRuleFile('twin.svc', unsigned, key.privateKey, now);
    const decoded = decodeSvc(signed);
    assert.deepEqual(decoded.signature?.publicKeyRaw, key.publicKeyRaw);
    const jsonSig = sigOf('twin.json', signRuleFile('twin.json', Buffer.from(json), key.privateKey, now)).signature;
    assert.equal(decoded.signature?.signature.toString('base64'), jsonSig);
  });
});

describe('compileRuleFile', () => {
  it('keeps a valid embedded signature; the .svc verifies like its JSON twin', () => {
    const signedJson = signRuleFile('twin.json', Buffer.from(json), key.privateKey, now);
    const { svc, signature } = compileRuleFile('twin.json', signedJson);
    assert.equal(signature, 'kept');
    assert.equal(decodeSvc(svc).signature?.signature.toString('base64'), sigOf('twin.json', signedJson).signature);
    assert.deepEqual(verifyRuleFile('twin.svc', svc, [pub]), { valid: true, publicKey: pub });
  });

  it('a signed YAML compiles to the same .svc as its signed JSON twin', () => {
    const fromJson = compileRuleFile('twin.json', signRuleFile('twin.json', Buffer.from(json), key.privateKey, now)).svc;
    const fromYaml = compileRuleFile('twin.yaml', signRuleFile('twin.yaml', Buffer.from(yaml), key.privateKey, now)).svc;
    assert.deepEqual(fromYaml, fromJson);
  });

  it('refuses an embedded signature that does not match the rule', () => {
    const signed = JSON.parse(signRuleFile('twin.json', Buffer.from(json), key.privateKey, now).toString('utf8'));
    signed.config.version = '9.9';
    assert.throws(
      () => compileRuleFile('twin.json', Buffer.from(JSON.stringify(signed))),
      (err: unknown) => {
        assert.ok(err instanceof CompileError);
        assert.match(err.message, /twin\.json: the embedded signature does not match the rule \(invalid signature\); refusing to compile/);
        return true;
      },
    );
    signed._signature.public_key = 'bad';
    assert.throws(() => compileRuleFile('twin.json', Buffer.from(JSON.stringify(signed))), /invalid public key base64/);
  });

  it('signs with a given key, replacing an existing signature', () => {
    const signedByOther = signRuleFile('twin.json', Buffer.from(json), other.privateKey, now);
    const replaced = compileRuleFile('twin.json', signedByOther, key.privateKey);
    assert.equal(replaced.signature, 'replaced');
    assert.deepEqual(decodeSvc(replaced.svc).signature?.publicKeyRaw, key.publicKeyRaw);
    assert.equal(compileRuleFile('twin.yaml', Buffer.from(yaml), key.privateKey).signature, 'signed');
  });

  it('compiles an unsigned rule to an unsigned .svc', () => {
    const { svc, signature } = compileRuleFile('twin.yaml', Buffer.from(yaml));
    assert.equal(signature, 'none');
    assert.equal(decodeSvc(svc).signature, undefined);
    assert.deepEqual(verifyRuleFile('twin.svc', svc, [pub]), { valid: false, reason: 'no signature found' });
  });

  it('reads only JSON and YAML', () => {
    assert.throws(() => compileRuleFile('twin.svc', encodeSvc({ a: 1 })), /reads \.json, \.yaml or \.yml/);
  });
});

describe('verifyRuleFile', () => {
  it('reports each failure reason', () => {
    const signed = signRuleFile('twin.json', Buffer.from(json), key.privateKey, now);
    assert.deepEqual(verifyRuleFile('twin.json', signed, [other.publicKeyRaw.toString('base64')]), { valid: false, reason: 'untrusted public key' });
    const tampered = Buffer.from(signed.toString('utf8').replace('"OK"', '"KO"'));
    assert.deepEqual(verifyRuleFile('twin.json', tampered, [pub]), { valid: false, reason: 'invalid signature' });
    assert.deepEqual(verifyRuleFile('twin.json', Buffer.from(json), [pub]), { valid: false, reason: 'no signature found' });
    const badKey = Buffer.from(signed.toString('utf8').replace(pub, 'xyz'));
    assert.deepEqual(verifyRuleFile('twin.json', badKey, [pub]), { valid: false, reason: 'invalid public key base64' });
  });

  it('accepts a signature by any of several keys', () => {
    const signed = signRuleFile('twin.json', Buffer.from(json), key.privateKey, now);
    assert.equal(verifyRuleFile('twin.json', signed, [other.publicKeyRaw.toString('base64'), pub]).valid, true);
  });
});
