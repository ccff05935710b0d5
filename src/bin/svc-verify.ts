#!/usr/bin/env node
/**
 * svc-verify: checks that a rule file (.json, .yaml, .yml or .svc) is signed by a given public
 * key and that the signature matches its content (SPEC.md "Authentication" item 9).
 * `-k` is a base64 public key, or a file holding one or more (one per line, `#` comments, as
 * written by svc-keygen or as a trusted keys file); a signature by any of them is accepted.
 * Prints `valid: <file> signed by <key>` (exit 0) or `failed: <reason>` (exit 1).
 * Exit 2: usage error, unreadable file, or a `-k` that holds no valid key.
 */
import { CliError, createProgram, EXIT_FAILED, EXIT_OK, readInput, runCli } from '../signing/cli-support.js';
import { normalizePublicKey, parseTrustedKeysFile, TrustedKeyError } from '../signing/trusted-keys.js';
import { RuleFileError } from '../signing/rule-file.js';
import { verifyRuleFile } from '../signing/rule-file-ops.js';
import { initSvcCodec } from '../signing/svc-format.js';

interface VerifyOptions {
  publicKey: string;
  input: string;
}

const program = createProgram('svc-verify', 'Verify the Ed25519 signature of a rule file')
  .requiredOption('-k, --public-key <key-or-file>', 'base64 public key, or a file with one base64 key per line')
  .requiredOption('-i, --input <file>', 'rule file to verify (.json, .yaml, .yml or .svc)');

await runCli<VerifyOptions>(program, process.argv, async (opts) => {
  const keys = await resolveKeys(opts.publicKey);
  const bytes = await readInput(opts.input);
  await initSvcCodec();
  let outcome;
  try {
    outcome = verifyRuleFile(opts.input, bytes, keys);
  } catch (err) {
    if (!(err instanceof RuleFileError)) throw err;
    process.stdout.write(`failed: ${err.message}\n`);
    return EXIT_FAILED;
  }
  if (!outcome.valid) {
    process.stdout.write(`failed: ${outcome.reason}\n`);
    return EXIT_FAILED;
  }
  process.stdout.write(`valid: ${opts.input} signed by ${outcome.publicKey}\n`);
  return EXIT_OK;
});

/** The key itself when `-k` is a base64 key, else the keys in the file it names. */
async function resolveKeys(arg: string): Promise<string[]> {
  const direct = normalizePublicKey(arg);
  if (direct) return [direct];
  const text = (await readInput(arg, 'public key file')).toString('utf8');
  let keys: string[];
  try {
    keys = parseTrustedKeysFile(text, arg);
  } catch (err) {
    if (err instanceof TrustedKeyError) throw new CliError(err.message);
    throw err;
  }
  if (keys.length === 0) throw new CliError(`public key file ${arg} holds no key`);
  return keys;
}
