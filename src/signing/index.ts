/**
 * Rule signing and rule file formats (SPEC.md "Authentication", DECISIONS.md 6):
 * canonical JSON, Ed25519 keys, trusted keys, the signature policy, the compiled `.svc`
 * codec and rule file decoding. See docs/signing.md.
 */
export { canonicalJson, unsignedCanonical, signedBytes, compareCodePoints, CanonicalJsonError } from './canonical-json.js';
export {
  generateKeyPair,
  rawPublicKey,
  publicKeyFromRaw,
  privateKeyFromSeed,
  privateKeyToPem,
  parsePrivateKey,
  signBytes,
  verifyBytes,
  decodeBase64Strict,
  decodePublicKeyBase64,
  toBase64,
  KeyFormatError,
  PUBLIC_KEY_BYTES,
  SIGNATURE_BYTES,
  SEED_BYTES,
  type GeneratedKeyPair,
} from './ed25519.js';
export { parseTrustedKeyList, parseTrustedKeysFile, readTrustedKeysFile, loadTrustedKeys, normalizePublicKey, TrustedKeyError } from './trusted-keys.js';
export {
  checkSignature,
  findSignature,
  verifyDoc,
  signDoc,
  signatureOf,
  signatureFailureMessage,
  DISABLED_SIGNATURE_POLICY,
  INCOMPLETE_SIGNATURE_HEADERS,
  type SignaturePolicy,
  type SignatureCheck,
  type SignatureFailureReason,
  type SignatureSource,
  type HeaderSignatureInput,
  type FoundSignature,
} from './policy.js';
export {
  initSvcCodec,
  encodeSvc,
  decodeSvc,
  looksLikeSvc,
  SvcFormatError,
  SVC_MAGIC,
  SVC_VERSION,
  FLAG_HAS_SIGNATURE,
  SVC_HEADER_BYTES,
  SVC_SIGNATURE_BLOCK_BYTES,
  type DecodedSvc,
  type SvcSignatureInput,
} from './svc-format.js';
export { MAX_DECOMPRESSED_BYTES } from './zstd.js';
export {
  decodeRuleFile,
  readFileBounded,
  readRuleFile,
  readRuleFileSync,
  ruleFileFormat,
  parseYamlRule,
  plainDataProblem,
  RuleFileError,
  MAX_RULE_FILE_BYTES,
  YAML_MAX_ALIAS_COUNT,
  MAX_NESTING_DEPTH,
  type RuleFileFormat,
} from './rule-file.js';
export { signRuleFile, compileRuleFile, verifyRuleFile, CompileError, type CompileSignature, type VerifyOutcome } from './rule-file-ops.js';
