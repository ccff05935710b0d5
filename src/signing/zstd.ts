/**
 * zstd for the `.svc` payload, through `@bokuweb/zstd-wasm` (pure wasm; Node 20's zlib has no
 * zstd). The wasm module needs one asynchronous `initZstd()`; after it, `zstdCompress` and
 * `zstdDecompress` are synchronous.
 *
 * NOTE: the library's `decompress` allocates an output buffer of the size declared in the frame
 * header (an untrusted number) and does not handle the "size unknown/error" markers safely.
 * `zstdDecompress` therefore parses the frame header itself first and refuses frames that do
 * not declare their size, use a dictionary, or declare more than `MAX_DECOMPRESSED_BYTES`.
 */
import { compress, decompress, init } from '@bokuweb/zstd-wasm';

/** Largest decompressed `.svc` payload accepted (64 MiB). */
export const MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

/** zstd compression level used for `.svc` payloads. */
export const ZSTD_LEVEL = 9;

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

/** A zstd frame that cannot (or must not) be decoded; `message` says why. */
export class ZstdError extends Error {
  override readonly name = 'ZstdError';
}

let ready = false;
let pending: Promise<void> | undefined;

/** Loads the zstd wasm module once; later calls return the same promise. */
export function initZstd(): Promise<void> {
  pending ??= init().then(
    () => {
      ready = true;
    },
    (err: unknown) => {
      pending = undefined;
      throw err;
    },
  );
  return pending;
}

/** True once `initZstd()` has completed. */
export function isZstdReady(): boolean {
  return ready;
}

function assertReady(): void {
  if (!ready) throw new Error('the .svc codec is not initialised: await initSvcCodec() first');
}

/** Compresses `data` into one zstd frame that declares its content size. */
export function zstdCompress(data: Uint8Array): Buffer {
  assertReady();
  const out = compress(data, ZSTD_LEVEL);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * Decompresses one zstd frame. Throws `ZstdError` for anything but a well-formed frame that
 * declares a content size of at most `MAX_DECOMPRESSED_BYTES`.
 */
export function zstdDecompress(frame: Uint8Array): Buffer {
  assertReady();
  const size = declaredContentSize(frame);
  let out: Uint8Array;
  try {
    out = decompress(frame);
  } catch (err) {
    throw new ZstdError(`zstd decompression failed (${(err as Error).message.replace('compress', 'decompress')})`);
  }
  if (out.byteLength !== size) {
    throw new ZstdError(`zstd frame declares ${size} bytes but holds ${out.byteLength}`);
  }
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * Reads the Frame_Content_Size of a zstd frame header (RFC 8878 3.1.1.1) without trusting it:
 * checks the magic, the reserved bit, no dictionary, a declared size within the limit.
 */
export function declaredContentSize(frame: Uint8Array): number {
  if (frame.length < 5) throw new ZstdError(`zstd frame is truncated (${frame.length} bytes)`);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const magic = view.getUint32(0, true);
  if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) throw new ZstdError('zstd skippable frames are not accepted');
  if (magic !== ZSTD_MAGIC) throw new ZstdError('payload is not a zstd frame (bad zstd magic number)');
  const descriptor = frame[4] as number;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  if ((descriptor & 0x08) !== 0) throw new ZstdError('zstd frame header has its reserved bit set');
  if ((descriptor & 0x03) !== 0) throw new ZstdError('zstd frames with a dictionary are not accepted');
  const pos = 5 + (singleSegment ? 0 : 1);
  const fcsBytes = fcsFlag === 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]!;
  if (fcsBytes === 0) throw new ZstdError('zstd frame does not declare its content size');
  if (frame.length < pos + fcsBytes) throw new ZstdError('zstd frame header is truncated');
  let size: number;
  switch (fcsBytes) {
    case 1:
      size = view.getUint8(pos);
      break;
    case 2:
      size = view.getUint16(pos, true) + 256;
      break;
    case 4:
      size = view.getUint32(pos, true);
      break;
    default: {
      const big = view.getBigUint64(pos, true);
      size = big > BigInt(MAX_DECOMPRESSED_BYTES) ? Number.POSITIVE_INFINITY : Number(big);
    }
  }
  if (size > MAX_DECOMPRESSED_BYTES) {
    throw new ZstdError(`zstd frame declares ${Number.isFinite(size) ? size : 'more than 2^53'} bytes, over the ${MAX_DECOMPRESSED_BYTES}-byte limit`);
  }
  return size;
}
