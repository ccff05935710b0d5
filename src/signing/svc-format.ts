/**
 * The compiled rule format `.svc` (SPEC.md "Authentication" item 4, DECISIONS.md 6).
 *
 * | offset | size | field                                                        |
 * |-------:|-----:|--------------------------------------------------------------|
 * |      0 |    4 | magic `SVCR`                                                 |
 * |      4 |    1 | format version, `1`                                          |
 * |      5 |    1 | flags: bit 0 HAS_SIGNATURE, other bits must be 0             |
 * |      6 |    4 | CRC32 (IEEE, `zlib.crc32`) of the compressed payload, LE     |
 * |     10 |    4 | payload length (compressed bytes), LE                        |
 * |     14 |   32 | (signed only) raw Ed25519 public key                         |
 * |     46 |   64 | (signed only) Ed25519 signature                              |
 * | 14/110 |    n | zstd frame of the canonical JSON of the ruleset without `_signature` |
 *
 * The signature covers the canonical JSON bytes (the decompressed payload), so a signed JSON
 * rule and its compiled twin carry the same signature. Decoding never trusts a length before
 * comparing it with the buffer, and every problem is a `SvcFormatError`.
 */
import { crc32 } from 'node:zlib';
import type { SignatureBlock } from '../ruleset/model.js';
import { unsignedCanonical } from './canonical-json.js';
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES, toBase64 } from './ed25519.js';
import { initZstd, isZstdReady, MAX_DECOMPRESSED_BYTES, zstdCompress, zstdDecompress, ZstdError } from './zstd.js';

/** Magic tag at offset 0. */
export const SVC_MAGIC = Buffer.from('SVCR', 'latin1');
/** The only format version (SPEC.md "Versioning" item 3). */
export const SVC_VERSION = 1;
/** Flag bit: a 96-byte signature block follows the header. */
export const FLAG_HAS_SIGNATURE = 0x01;
/** Size of the fixed header (magic, version, flags, CRC32, length). */
export const SVC_HEADER_BYTES = 14;
/** Size of the signature block (public key then signature). */
export const SVC_SIGNATURE_BLOCK_BYTES = PUBLIC_KEY_BYTES + SIGNATURE_BYTES;

/** A `.svc` file that cannot be decoded; the message says why. */
export class SvcFormatError extends Error {
  override readonly name = 'SvcFormatError';
}

/** A raw signature block to embed: 32-byte public key and 64-byte signature. */
export interface SvcSignatureInput {
  publicKey: Uint8Array;
  signature: Uint8Array;
}

/** Result of `decodeSvc`. When signed, `doc._signature` is rebuilt from the block (base64). */
export interface DecodedSvc {
  doc: Record<string, unknown>;
  signature?: { publicKeyRaw: Buffer; signature: Buffer };
}

/** Prepares the codec (loads zstd wasm). Idempotent; must complete before encode/decode. */
export function initSvcCodec(): Promise<void> {
  return initZstd();
}

/** True when `bytes` starts with the `.svc` magic tag. */
export function looksLikeSvc(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && SVC_MAGIC.equals(bytes.subarray(0, 4));
}

/**
 * Encodes a ruleset document as `.svc`. The payload is the canonical JSON of `doc` without its
 * `_signature` (a `_signature` in `doc` is NOT embedded: pass `signature` to sign the file).
 * Throws when the codec is not initialised, the signature parts have the wrong length, or the
 * canonical JSON is over `MAX_DECOMPRESSED_BYTES` (the decoder would refuse it).
 */
export function encodeSvc(doc: unknown, signature?: SvcSignatureInput): Buffer {
  assertReady();
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new TypeError('encodeSvc: the ruleset must be a JSON object');
  }
  if (signature) {
    if (signature.publicKey.length !== PUBLIC_KEY_BYTES) throw new TypeError(`encodeSvc: public key must be ${PUBLIC_KEY_BYTES} bytes`);
    if (signature.signature.length !== SIGNATURE_BYTES) throw new TypeError(`encodeSvc: signature must be ${SIGNATURE_BYTES} bytes`);
  }
  const json = Buffer.from(unsignedCanonical(doc), 'utf8');
  if (json.length > MAX_DECOMPRESSED_BYTES) {
    throw new RangeError(`encodeSvc: the ruleset is ${json.length} bytes of JSON, over the ${MAX_DECOMPRESSED_BYTES}-byte .svc limit`);
  }
  const payload = zstdCompress(json);
  const header = Buffer.alloc(SVC_HEADER_BYTES);
  SVC_MAGIC.copy(header, 0);
  header.writeUInt8(SVC_VERSION, 4);
  header.writeUInt8(signature ? FLAG_HAS_SIGNATURE : 0, 5);
  header.writeUInt32LE(crc32(payload) >>> 0, 6);
  header.writeUInt32LE(payload.length, 10);
  const parts: Uint8Array[] = [header];
  if (signature) parts.push(signature.publicKey, signature.signature);
  parts.push(payload);
  return Buffer.concat(parts);
}

/**
 * Decodes a `.svc` file. Throws `SvcFormatError` for: truncated header or signature block,
 * wrong magic, unsupported version, unknown flags, payload length not matching the file
 * (truncated or trailing bytes), CRC mismatch, zstd failure, payload not UTF-8 JSON, not a
 * JSON object, or holding `_signature`. Throws a plain Error when the codec is not initialised.
 */
export function decodeSvc(bytes: Uint8Array): DecodedSvc {
  assertReady();
  try {
    return decodeUnchecked(bytes);
  } catch (err) {
    if (err instanceof SvcFormatError) throw err;
    // NOTE: every other failure of untrusted input is still a format error (never a crash).
    throw new SvcFormatError(`invalid .svc file: ${(err as Error)?.message ?? String(err)}`);
  }
}

function decodeUnchecked(input: Uint8Array): DecodedSvc {
  if (!(input instanceof Uint8Array)) throw new SvcFormatError('.svc input must be bytes');
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const magicPart = bytes.subarray(0, Math.min(4, bytes.length));
  if (!SVC_MAGIC.subarray(0, magicPart.length).equals(magicPart)) {
    throw new SvcFormatError(`not a .svc file: wrong magic (expected "SVCR", got 0x${magicPart.toString('hex')})`);
  }
  if (bytes.length < SVC_HEADER_BYTES) {
    throw new SvcFormatError(`truncated .svc header: ${bytes.length} bytes, the header has ${SVC_HEADER_BYTES}`);
  }
  const version = bytes.readUInt8(4);
  if (version !== SVC_VERSION) throw new SvcFormatError(`unsupported .svc format version ${version} (supported: ${SVC_VERSION})`);
  const flags = bytes.readUInt8(5);
  if ((flags & ~FLAG_HAS_SIGNATURE) !== 0) {
    throw new SvcFormatError(`unknown .svc flags 0x${flags.toString(16).padStart(2, '0')} (only bit 0, HAS_SIGNATURE, is defined)`);
  }
  const signed = (flags & FLAG_HAS_SIGNATURE) !== 0;
  const expectedCrc = bytes.readUInt32LE(6);
  const declaredLength = bytes.readUInt32LE(10);
  const payloadStart = SVC_HEADER_BYTES + (signed ? SVC_SIGNATURE_BLOCK_BYTES : 0);
  if (bytes.length < payloadStart) {
    throw new SvcFormatError(`truncated .svc signature block: ${bytes.length} bytes, header and signature need ${payloadStart}`);
  }
  const available = bytes.length - payloadStart;
  if (declaredLength > available) {
    throw new SvcFormatError(`truncated .svc payload: header declares ${declaredLength} bytes, file holds ${available}`);
  }
  if (declaredLength < available) {
    throw new SvcFormatError(`${available - declaredLength} trailing bytes after the .svc payload (header declares ${declaredLength})`);
  }
  const payload = bytes.subarray(payloadStart);
  const actualCrc = crc32(payload) >>> 0;
  if (actualCrc !== expectedCrc) {
    throw new SvcFormatError(`.svc CRC32 mismatch: header 0x${hex32(expectedCrc)}, payload 0x${hex32(actualCrc)} (file corrupted)`);
  }
  const doc = parsePayload(payload);
  if (!signed) return { doc };
  const publicKeyRaw = Buffer.from(bytes.subarray(SVC_HEADER_BYTES, SVC_HEADER_BYTES + PUBLIC_KEY_BYTES));
  const signature = Buffer.from(bytes.subarray(SVC_HEADER_BYTES + PUBLIC_KEY_BYTES, payloadStart));
  const block: SignatureBlock = { algorithm: 'ed25519', public_key: toBase64(publicKeyRaw), signature: toBase64(signature) };
  return { doc: { ...doc, _signature: block }, signature: { publicKeyRaw, signature } };
}

function parsePayload(payload: Buffer): Record<string, unknown> {
  let json: Buffer;
  try {
    json = zstdDecompress(payload);
  } catch (err) {
    if (err instanceof ZstdError) throw new SvcFormatError(`.svc payload: ${err.message}`);
    throw err;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(json);
  } catch {
    throw new SvcFormatError('.svc payload is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SvcFormatError(`.svc payload is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SvcFormatError(`.svc payload is not a JSON object (got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`);
  }
  if (Object.hasOwn(value, '_signature')) {
    throw new SvcFormatError('.svc payload must not contain _signature (the signature lives in the header)');
  }
  return value as Record<string, unknown>;
}

function assertReady(): void {
  if (!isZstdReady()) throw new Error('the .svc codec is not initialised: await initSvcCodec() first');
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, '0');
}
