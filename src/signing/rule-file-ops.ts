/**
 * What the signing CLIs do to rule files, as pure byte-in/byte-out functions:
 * sign a JSON, YAML or `.svc` file; compile JSON/YAML to `.svc`; verify any of them.
 */
import type { KeyObject } from 'node:crypto';
import { parseDocument } from 'yaml';
import { unsignedCanonical } from './canonical-json.js';
import { checkSignature, findSignature, signatureOf, signDoc, verifyDoc, type SignatureFailureReason } from './policy.js';
import { decodeRuleFile, parseYamlRule, ruleFileFormat, RuleFileError } from './rule-file.js';
import { encodeSvc } from './svc-format.js';

/**
 * Returns the signed form of a rule file, in the same format: JSON is rewritten as pretty JSON
 * (2-space indent) with `_signature`; YAML keeps its comments and layout and gains (or has
 * replaced) a `_signature` mapping; `.svc` is re-encoded with the signature block. All three
 * sign the same canonical JSON, so twins carry the same signature (Ed25519 is deterministic).
 */
export function signRuleFile(path: string, bytes: Uint8Array, privateKey: KeyObject, now: Date = new Date()): Buffer {
  const doc = decodeRuleFile(path, bytes);
  switch (ruleFileFormat(path)) {
    case 'svc':
      return encodeSvc(doc, signatureOf(doc, privateKey));
    case 'yaml':
      return Buffer.from(signYamlText(path, Buffer.from(bytes).toString('utf8'), doc, privateKey, now), 'utf8');
    default:
      return Buffer.from(`${JSON.stringify(signDoc(doc, privateKey, now), null, 2)}\n`, 'utf8');
  }
}

function signYamlText(path: string, text: string, doc: Record<string, unknown>, privateKey: KeyObject, now: Date): string {
  const { _signature: block } = signDoc(doc, privateKey, now);
  const yamlDoc = parseDocument(text.replace(/^\uFEFF/, ''), { schema: 'core', resolveKnownTags: false, merge: false, logLevel: 'error' });
  yamlDoc.set('_signature', yamlDoc.createNode(block));
  const out = yamlDoc.toString({ lineWidth: 0 });
  // The edited document must still hold exactly the signed data.
  if (unsignedCanonical(parseYamlRule(out)) !== unsignedCanonical(doc)) {
    throw new RuleFileError(path, 'internal error: the signed YAML no longer holds the same data');
  }
  return out;
}

/** What happened to the signature while compiling. */
export type CompileSignature = 'none' | 'kept' | 'signed' | 'replaced';

/** Error of `compileRuleFile`: the input's own signature does not verify. */
export class CompileError extends Error {
  override readonly name = 'CompileError';
}

/**
 * Compiles a JSON or YAML rule file to `.svc`. With `privateKey` the output is signed with it
 * (an existing `_signature` is replaced: `replaced`). Without it, a signed input keeps its
 * signature (`kept`) only when that signature verifies against its own embedded public key;
 * otherwise `CompileError`. An unsigned input gives an unsigned `.svc` (`none`).
 */
export function compileRuleFile(path: string, bytes: Uint8Array, privateKey?: KeyObject): { svc: Buffer; signature: CompileSignature } {
  const format = ruleFileFormat(path);
  if (format !== 'json' && format !== 'yaml') {
    throw new RuleFileError(path, 'svc-compile reads .json, .yaml or .yml rule files');
  }
  const doc = decodeRuleFile(path, bytes);
  const found = findSignature(doc);
  if (privateKey) {
    return { svc: encodeSvc(doc, signatureOf(doc, privateKey)), signature: found.kind === 'none' ? 'signed' : 'replaced' };
  }
  switch (found.kind) {
    case 'none':
    case 'incomplete':
      return { svc: encodeSvc(doc), signature: 'none' };
    case 'malformed':
      throw new CompileError(`${path}: the embedded signature is unusable (${found.reason}); refusing to compile`);
    case 'found':
      if (!verifyDoc(doc, found.publicKeyRaw, found.signature)) {
        throw new CompileError(`${path}: the embedded signature does not match the rule (invalid signature); refusing to compile`);
      }
      return { svc: encodeSvc(doc, { publicKey: found.publicKeyRaw, signature: found.signature }), signature: 'kept' };
  }
}

/** Outcome of `verifyRuleFile`. */
export type VerifyOutcome = { valid: true; publicKey: string } | { valid: false; reason: SignatureFailureReason };

/**
 * Verifies a rule file (any format) against the expected base64 public keys: valid only when
 * the file is signed, by one of those keys, and the signature matches its content. A file that
 * does not decode throws `RuleFileError`. Keys that are not base64 Ed25519 keys are ignored.
 */
export function verifyRuleFile(path: string, bytes: Uint8Array, publicKeys: readonly string[]): VerifyOutcome {
  const doc = decodeRuleFile(path, bytes);
  const verdict = checkSignature(doc, 'local', { enabled: true, require: true, trustedKeys: publicKeys, allowUnsignedLocal: false });
  if (verdict.ok) return { valid: true, publicKey: verdict.publicKey ?? '' };
  // NOTE: 'incomplete signature headers' cannot happen without headers.
  return { valid: false, reason: verdict.reason === 'incomplete signature headers' ? 'no signature found' : verdict.reason };
}
