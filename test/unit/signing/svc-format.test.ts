import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { compress } from '@bokuweb/zstd-wasm';
import fc from 'fast-check';
import { canonicalJson } from '../../../src/signing/canonical-json.js';
import { generateKeyPair } from '../../../src/signing/ed25519.js';
import { checkSignature, signatureOf, signDoc } from '../../../src/signing/policy.js';
import { decodeSvc, encodeSvc, initSvcCodec, looksLikeSvc, SvcFormatError } from '../../../src/signing/svc-format.js';
import { MAX_DECOMPRESSED_BYTES } from '../../../src/signing/zstd.js';

// Before initSvcCodec() the codec refuses to work, with a clear message (this test file runs in its own process).
let uninitialisedError = 'no error';
try {
  encodeSvc({ a: 1 });
} catch (err) {
  uninitialisedError = (err as Error).message;
}

const signer = generateKeyPair();
const signerKey = signer.publicKeyRaw.toString('base64');

function rule(): Record<string, unknown> {
  return {
    config: { name: 'svc-rule', version: '1.2.3', entry_step: 'a', description: 'Grüße 😀' },
    steps: { a: { type: 'terminal', result: { code: 'OK', n: 1.5, big: 1e21 } } },
  };
}

/** Builds a .svc file around an arbitrary payload, with a correct CRC and length unless overridden. */
function frame(payload: Buffer, opts: { version?: number; flags?: number; block?: Buffer; crc?: number; length?: number } = {}): Buffer {
  const header = Buffer.alloc(14);
  header.write('SVCR', 0, 'latin1');
  header.writeUInt8(opts.version ?? 1, 4);
  header.writeUInt8(opts.flags ?? (opts.block ? 1 : 0), 5);
  header.writeUInt32LE(opts.crc ?? crc32(payload) >>> 0, 6);
  header.writeUInt32LE(opts.length ?? payload.length, 10);
  return Buffer.concat([header, opts.block ?? Buffer.alloc(0), payload]);
}

function zstd(text: string): Buffer {
  return Buffer.from(compress(Buffer.from(text, 'utf8'), 3));
}

function formatError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof SvcFormatError, `expected SvcFormatError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

await initSvcCodec();

describe('.svc codec', () => {
  it('refuses to work before initSvcCodec(); init is idempotent', async () => {
    assert.match(uninitialisedError, /not initialised: await initSvcCodec\(\)/);
    await Promise.all([initSvcCodec(), initSvcCodec()]);
    assert.deepEqual(decodeSvc(encodeSvc({ a: 1 })).doc, { a: 1 });
  });

  it('writes the header of DECISIONS.md 6 (unsigned)', () => {
    const bytes = encodeSvc(rule());
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'SVCR');
    assert.equal(bytes[4], 1);
    assert.equal(bytes[5], 0);
    const payload = bytes.subarray(14);
    assert.equal(bytes.readUInt32LE(6), crc32(payload) >>> 0);
    assert.equal(bytes.readUInt32LE(10), payload.length);
    assert.ok(looksLikeSvc(bytes));
  });

  it('round-trips an unsigned rule; the payload is its canonical JSON', () => {
    const decoded = decodeSvc(encodeSvc(rule()));
    assert.deepEqual(decoded.doc, rule());
    assert.equal(decoded.signature, undefined);
    assert.equal(canonicalJson(decoded.doc), canonicalJson(rule()));
  });

  it('round-trips a large rule (multi-byte zstd content size field)', () => {
    const steps: Record<string, unknown> = {};
    for (let i = 0; i < 5000; i++) steps[`s${i}`] = { type: 'terminal', result: { code: `C${i}`, note: `step ${i} ${'x'.repeat(i % 97)}` } };
    const big = { config: { name: 'big', entry_step: 's0' }, steps };
    assert.ok(canonicalJson(big).length > 300_000);
    assert.deepEqual(decodeSvc(encodeSvc(big)).doc, big);
  });

  it('does not embed a _signature of the doc unless a signature is passed', () => {
    const signed = signDoc(rule(), signer.privateKey);
    const decoded = decodeSvc(encodeSvc(signed));
    assert.equal(decoded.signature, undefined);
    assert.equal(Object.hasOwn(decoded.doc, '_signature'), false);
  });

  it('round-trips a signed rule, rebuilding _signature so the policy check applies', () => {
    const sig = signatureOf(rule(), signer.privateKey);
    const bytes = encodeSvc(rule(), sig);
    assert.equal(bytes[5], 1);
    assert.deepEqual(bytes.subarray(14, 46), signer.publicKeyRaw);
    assert.deepEqual(bytes.subarray(46, 110), sig.signature);
    const decoded = decodeSvc(bytes);
    assert.deepEqual(decoded.signature, { publicKeyRaw: signer.publicKeyRaw, signature: sig.signature });
    assert.deepEqual(decoded.doc._signature, { algorithm: 'ed25519', public_key: signerKey, signature: sig.signature.toString('base64') });
    const policy = { enabled: true, require: true, trustedKeys: [signerKey], allowUnsignedLocal: false };
    assert.deepEqual(checkSignature(decoded.doc, 'local', policy), { ok: true, signed: true, publicKey: signerKey });
    // The same signature as the JSON twin.
    assert.equal(signDoc(rule(), signer.privateKey)._signature.signature, sig.signature.toString('base64'));
  });

  it('a tampered signature block fails the policy check', () => {
    const bytes = encodeSvc(rule(), signatureOf(rule(), signer.privateKey));
    bytes[50] = (bytes[50] as number) ^ 0x01; // inside the signature, not covered by the CRC
    const policy = { enabled: true, require: true, trustedKeys: [signerKey], allowUnsignedLocal: false };
    const verdict = checkSignature(decodeSvc(bytes).doc, 'local', policy);
    assert.equal(!verdict.ok && verdict.reason, 'invalid signature');
  });

  it('refuses bad signature lengths and non-object docs when encoding', () => {
    assert.throws(() => encodeSvc(rule(), { publicKey: Buffer.alloc(31), signature: Buffer.alloc(64) }), TypeError);
    assert.throws(() => encodeSvc(rule(), { publicKey: Buffer.alloc(32), signature: Buffer.alloc(63) }), TypeError);
    assert.throws(() => encodeSvc([1, 2]), TypeError);
  });
});

describe('.svc decoding errors', () => {
  const unsigned = encodeSvc(rule());
  const signed = encodeSvc(rule(), signatureOf(rule(), signer.privateKey));

  it('truncation at every offset is a SvcFormatError naming the truncated part', () => {
    for (const [bytes, sigEnd] of [
      [unsigned, 14],
      [signed, 110],
    ] as const) {
      for (let n = 0; n < bytes.length; n++) {
        const expected = n < 14 ? /truncated \.svc header/ : n < sigEnd ? /truncated \.svc signature block/ : /truncated \.svc payload/;
        formatError(() => decodeSvc(bytes.subarray(0, n)), expected);
      }
    }
  });

  it('trailing bytes are refused', () => {
    formatError(() => decodeSvc(Buffer.concat([unsigned, Buffer.from([0])])), /1 trailing bytes/);
  });

  it('wrong magic', () => {
    const bad = Buffer.from(unsigned);
    bad.write('SVCX', 0, 'latin1');
    formatError(() => decodeSvc(bad), /wrong magic/);
    formatError(() => decodeSvc(Buffer.from('{"config":{}}')), /wrong magic/);
    formatError(() => decodeSvc(Buffer.from('X')), /wrong magic/);
  });

  it('unsupported version', () => {
    for (const version of [0, 2, 255]) {
      const bad = Buffer.from(unsigned);
      bad[4] = version;
      formatError(() => decodeSvc(bad), new RegExp(`unsupported \\.svc format version ${version}`));
    }
  });

  it('unknown flags', () => {
    for (const flags of [0x02, 0x80, 0x03]) {
      const bad = Buffer.from(signed);
      bad[5] = flags;
      formatError(() => decodeSvc(bad), /unknown \.svc flags/);
    }
  });

  it('a huge declared length is compared with the file, never allocated', () => {
    const bad = Buffer.from(unsigned);
    bad.writeUInt32LE(0xffffffff, 10);
    formatError(() => decodeSvc(bad), /header declares 4294967295 bytes/);
  });

  it('flipping any payload or CRC byte is a CRC mismatch', () => {
    for (let i = 110; i < signed.length; i++) {
      const bad = Buffer.from(signed);
      bad[i] = (bad[i] as number) ^ 0x40;
      formatError(() => decodeSvc(bad), /CRC32 mismatch/);
    }
    for (let i = 6; i < 10; i++) {
      const bad = Buffer.from(unsigned);
      bad[i] = (bad[i] as number) ^ 0x01;
      formatError(() => decodeSvc(bad), /CRC32 mismatch/);
    }
  });

  it('a payload that is not zstd (with a correct CRC) is a zstd error', () => {
    formatError(() => decodeSvc(frame(Buffer.from('not zstd at all'))), /not a zstd frame/);
    formatError(() => decodeSvc(frame(Buffer.alloc(0))), /zstd frame is truncated/);
    const corrupt = zstd(canonicalJson(rule()));
    corrupt[corrupt.length - 3] = (corrupt[corrupt.length - 3] as number) ^ 0xff;
    formatError(() => decodeSvc(frame(corrupt)), /zstd/);
  });

  it('a zstd frame declaring a huge content size is refused before decompressing', () => {
    // Frame header: magic, descriptor 0xE0 (8-byte content size, single segment), size 2^40.
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0]);
    formatError(() => decodeSvc(frame(Buffer.concat([header, Buffer.alloc(8)]))), /over the \d+-byte limit/);
    // 4-byte size just above the limit.
    const four = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 0]);
    four.writeUInt32LE(MAX_DECOMPRESSED_BYTES + 1, 5);
    formatError(() => decodeSvc(frame(four)), /over the \d+-byte limit/);
  });

  it('zstd frames without a declared size, with a dictionary, or skippable are refused', () => {
    formatError(() => decodeSvc(frame(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0, 0, 0]))), /does not declare its content size/);
    formatError(() => decodeSvc(frame(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x21, 0x05, 1, 0, 0]))), /dictionary/);
    formatError(() => decodeSvc(frame(Buffer.from([0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]))), /skippable/);
  });

  it('payload not JSON, not UTF-8, not an object, or holding _signature', () => {
    formatError(() => decodeSvc(frame(zstd('{"config":'))), /payload is not JSON/);
    formatError(() => decodeSvc(frame(Buffer.from(compress(Buffer.from([0xff, 0xfe, 0x7b]), 3)))), /not valid UTF-8/);
    formatError(() => decodeSvc(frame(zstd('[1,2]'))), /not a JSON object \(got an array\)/);
    formatError(() => decodeSvc(frame(zstd('null'))), /not a JSON object \(got null\)/);
    formatError(() => decodeSvc(frame(zstd('{"_signature":{},"a":1}'))), /must not contain _signature/);
  });

  it('a signed file with a valid frame decodes even when the signature is junk (the policy judges it)', () => {
    const payload = zstd(canonicalJson(rule()));
    const decoded = decodeSvc(frame(payload, { block: Buffer.alloc(96, 7) }));
    assert.equal(decoded.signature?.publicKeyRaw.length, 32);
  });
});

describe('.svc decoding (property)', () => {
  const valid = [encodeSvc(rule()), encodeSvc(rule(), signatureOf(rule(), signer.privateKey))];

  function onlyFormatErrors(bytes: Uint8Array): void {
    try {
      decodeSvc(bytes);
    } catch (err) {
      if (!(err instanceof SvcFormatError)) throw err;
    }
  }

  it('random buffers only ever give SvcFormatError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => onlyFormatErrors(bytes)),
      { numRuns: 2000 },
    );
  });

  it('random buffers behind a valid header only ever give SvcFormatError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (payload, signedFile) => {
        onlyFormatErrors(frame(Buffer.from(payload), signedFile ? { block: Buffer.alloc(96) } : {}));
      }),
      { numRuns: 2000 },
    );
  });

  it('mutated valid files (byte changes, cuts, insertions; CRC fixed or not) only ever give SvcFormatError', () => {
    const mutation = fc.record({
      which: fc.nat({ max: valid.length - 1 }),
      edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'cut', 'insert')), { minLength: 1, maxLength: 4 }),
      fixCrc: fc.boolean(),
    });
    fc.assert(
      fc.property(mutation, ({ which, edits, fixCrc }) => {
        let bytes = Buffer.from(valid[which] as Buffer);
        for (const [pos, value, kind] of edits) {
          const i = pos % (bytes.length + 1);
          if (kind === 'set' && i < bytes.length) bytes[i] = value;
          else if (kind === 'cut') bytes = Buffer.concat([bytes.subarray(0, i), bytes.subarray(i + 1)]);
          else bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from([value]), bytes.subarray(i)]);
        }
        if (fixCrc && bytes.length >= 14) {
          const start = bytes[5] === 1 ? 110 : 14;
          if (bytes.length >= start) {
            bytes.writeUInt32LE(bytes.length - start, 10);
            bytes.writeUInt32LE(crc32(bytes.subarray(start)) >>> 0, 6);
          }
        }
        onlyFormatErrors(bytes);
      }),
      { numRuns: 3000 },
    );
  });
});
