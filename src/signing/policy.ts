/**
 * The rule signature policy (SPEC.md "Authentication" items 2, 5, 7 and 8; DECISIONS.md 3).
 *
 * Four modes, from `SignaturePolicy`:
 * - disabled (`enabled: false`): nothing is checked, every rule is accepted;
 * - optional (`enabled`, `require: false`): signed rules must verify against a trusted key,
 *   unsigned rules are accepted;
 * - required (`enabled`, `require`, `allowUnsignedLocal: false`): unsigned rules are rejected;
 * - required with unsigned local files (`enabled`, `require`, `allowUnsignedLocal`): API uploads
 *   need a signature, files loaded from the rules directory do not (signed ones are verified).
 *
 * Where a signature comes from: the body's `_signature` block, or the header pair
 * `X-Svc-Signature` + `X-Svc-Public-Key`. When the header pair is present it is THE signature
 * and a body `_signature` is ignored. Only one of the two headers is a malformed request:
 * reason `incomplete signature headers`, status 400 (not a 403: nothing was verified).
 */
import type { KeyObject } from 'node:crypto';
import type { SignatureBlock } from '../ruleset/model.js';
import { signedBytes } from './canonical-json.js';
import { decodeBase64Strict, decodePublicKeyBase64, rawPublicKey, signBytes, SIGNATURE_BYTES, toBase64, verifyBytes } from './ed25519.js';
import { normalizePublicKey } from './trusted-keys.js';

/** Settings of signature verification (server flags `--signature-*`). */
export interface SignaturePolicy {
  /** `--signature-enabled`: verify at all (default false). */
  enabled: boolean;
  /** `--signature-require`: reject unsigned rules (default false). */
  require: boolean;
  /** Trusted base64 public keys (`--signature-trusted-keys` plus the keys file). */
  trustedKeys: readonly string[];
  /** `--signature-allow-unsigned-local`: with `require`, still accept unsigned local files (default true). */
  allowUnsignedLocal: boolean;
}

/** The default policy: verification disabled. */
export const DISABLED_SIGNATURE_POLICY: Readonly<SignaturePolicy> = Object.freeze({
  enabled: false,
  require: false,
  trustedKeys: Object.freeze([]) as readonly string[],
  allowUnsignedLocal: true,
});

/** A verification failure reason (the four of SPEC.md "Authentication" item 8). */
export type SignatureFailureReason = 'no signature found' | 'untrusted public key' | 'invalid signature' | 'invalid public key base64';

/** Reason for a request that sent only one of the two signature headers (answer 400). */
export const INCOMPLETE_SIGNATURE_HEADERS = 'incomplete signature headers';

/** Where a rule came from: an API upload, or a file of the rules directory. */
export type SignatureSource = 'api' | 'local';

/** Signature headers of an upload (`X-Svc-Signature`, `X-Svc-Public-Key`), both base64. */
export interface HeaderSignatureInput {
  signature?: string | undefined;
  publicKey?: string | undefined;
}

/** Outcome of `checkSignature`. `signed` is true when a signature was verified. */
export type SignatureCheck =
  | { ok: true; signed: boolean; publicKey?: string }
  | { ok: false; reason: SignatureFailureReason; status: 403; message: string }
  | { ok: false; reason: typeof INCOMPLETE_SIGNATURE_HEADERS; status: 400; message: string };

/** A signature found on a document, not yet verified. */
export type FoundSignature =
  | { kind: 'none' }
  | { kind: 'incomplete' }
  | { kind: 'malformed'; reason: SignatureFailureReason }
  | { kind: 'found'; publicKeyRaw: Buffer; signature: Buffer };

/**
 * Finds the signature of `doc`: the header pair when given, else the body `_signature`.
 * Checks its shape only (algorithm, base64, lengths), not its validity.
 */
export function findSignature(doc: unknown, headers?: HeaderSignatureInput): FoundSignature {
  const hSig = nonEmpty(headers?.signature);
  const hKey = nonEmpty(headers?.publicKey);
  if (hSig !== undefined || hKey !== undefined) {
    if (hSig === undefined || hKey === undefined) return { kind: 'incomplete' };
    return parseParts(hKey, hSig);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !Object.hasOwn(doc, '_signature')) {
    return { kind: 'none' };
  }
  const block = (doc as { _signature?: unknown })._signature;
  if (block === null || block === undefined) return { kind: 'none' };
  if (typeof block !== 'object' || Array.isArray(block)) return { kind: 'malformed', reason: 'invalid signature' };
  const { algorithm, public_key: publicKey, signature } = block as Record<string, unknown>;
  // NOTE: an absent algorithm is read as ed25519 (the only one); another value is refused.
  if (algorithm !== undefined && (typeof algorithm !== 'string' || algorithm.toLowerCase() !== 'ed25519')) {
    return { kind: 'malformed', reason: 'invalid signature' };
  }
  return parseParts(publicKey, signature);
}

function parseParts(publicKey: unknown, signature: unknown): FoundSignature {
  const publicKeyRaw = typeof publicKey === 'string' ? decodePublicKeyBase64(publicKey) : undefined;
  if (!publicKeyRaw) return { kind: 'malformed', reason: 'invalid public key base64' };
  const sig = typeof signature === 'string' ? decodeBase64Strict(signature) : undefined;
  if (!sig || sig.length !== SIGNATURE_BYTES) return { kind: 'malformed', reason: 'invalid signature' };
  return { kind: 'found', publicKeyRaw, signature: sig };
}

/**
 * Applies the signature policy to a rule document from `source`. The signature covers the
 * UTF-8 bytes of the canonical JSON of `doc` without `_signature`. Never throws.
 */
export function checkSignature(doc: unknown, source: SignatureSource, policy: SignaturePolicy, headerSignature?: HeaderSignatureInput): SignatureCheck {
  if (!policy.enabled) return { ok: true, signed: false };
  const found = findSignature(doc, headerSignature);
  switch (found.kind) {
    case 'incomplete':
      return {
        ok: false,
        reason: INCOMPLETE_SIGNATURE_HEADERS,
        status: 400,
        message: 'X-Svc-Signature and X-Svc-Public-Key must be sent together',
      };
    case 'none': {
      const unsignedAllowed = !policy.require || (source === 'local' && policy.allowUnsignedLocal);
      return unsignedAllowed ? { ok: true, signed: false } : fail('no signature found');
    }
    case 'malformed':
      return fail(found.reason);
    case 'found': {
      const publicKey = toBase64(found.publicKeyRaw);
      if (!trustedSet(policy.trustedKeys).has(publicKey)) return fail('untrusted public key');
      return verifyDoc(doc, found.publicKeyRaw, found.signature) ? { ok: true, signed: true, publicKey } : fail('invalid signature');
    }
  }
}

/**
 * True when `signature` is a valid signature of `doc` (its canonical JSON without `_signature`)
 * by the raw public key. Never throws (a document without a JSON form gives false).
 */
export function verifyDoc(doc: unknown, publicKeyRaw: Uint8Array, signature: Uint8Array): boolean {
  let bytes: Buffer;
  try {
    bytes = signedBytes(doc);
  } catch {
    return false;
  }
  return verifyBytes(publicKeyRaw, bytes, signature);
}

/** The raw signature of `doc` (canonical JSON without `_signature`) and the signer's raw key. */
export function signatureOf(doc: unknown, privateKey: KeyObject): { publicKey: Buffer; signature: Buffer } {
  return { publicKey: rawPublicKey(privateKey), signature: signBytes(privateKey, signedBytes(doc)) };
}

/**
 * Returns a copy of the rule document `doc` (a JSON object) carrying a fresh `_signature`
 * (algorithm ed25519, base64 public key and signature, `signed_at` = `now` as ISO 8601 UTC).
 * An existing `_signature` is replaced (it keeps its position among the keys).
 */
export function signDoc<T extends object>(doc: T, privateKey: KeyObject, now: Date = new Date()): T & { _signature: SignatureBlock } {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new TypeError('only a JSON object (a ruleset) can be signed');
  }
  const { publicKey, signature } = signatureOf(doc, privateKey);
  const block: SignatureBlock = {
    algorithm: 'ed25519',
    public_key: toBase64(publicKey),
    signature: toBase64(signature),
    signed_at: now.toISOString(),
  };
  // NOTE: spread defines own data properties, so an own `__proto__` key stays plain data.
  return { ...doc, _signature: block };
}

/** The 403 message of DECISIONS.md 3: `signature verification failed: <reason>`. */
export function signatureFailureMessage(reason: SignatureFailureReason): string {
  return `signature verification failed: ${reason}`;
}

function fail(reason: SignatureFailureReason): SignatureCheck {
  return { ok: false, reason, status: 403, message: signatureFailureMessage(reason) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Normalised set of the trusted keys (entries that are not keys are ignored). */
function trustedSet(keys: readonly string[]): ReadonlySet<string> {
  return new Set(keys.map((k) => normalizePublicKey(k)).filter((k): k is string => k !== undefined));
}
