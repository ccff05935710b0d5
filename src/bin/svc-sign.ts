#!/usr/bin/env node
/**
 * svc-sign: signs a rule file with an Ed25519 private key (SPEC.md "Authentication" item 9).
 * JSON gets a `_signature` block (pretty JSON), YAML gets a `_signature` mapping (comments and
 * layout kept), `.svc` is re-encoded with the signature block. Without `-o` the input is
 * replaced atomically. Exit codes: 0 signed, 1 the rule file is invalid, 2 usage or I/O error.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CliError, createProgram, EXIT_FAILED, EXIT_OK, ioReason, readInput, runCli } from '../signing/cli-support.js';
import { parsePrivateKey, rawPublicKey, toBase64, type KeyFormatError } from '../signing/ed25519.js';
import { RuleFileError, ruleFileFormat } from '../signing/rule-file.js';
import { signRuleFile } from '../signing/rule-file-ops.js';
import { initSvcCodec } from '../signing/svc-format.js';
import { atomicWrite } from '../store/atomic-write.js';

interface SignOptions {
  privateKey: string;
  input: string;
  output?: string;
}

const program = createProgram('svc-sign', 'Sign a rule file (.json, .yaml, .yml or .svc) with an Ed25519 private key')
  .requiredOption('-k, --private-key <file>', 'private key file (PKCS#8 PEM from svc-keygen, or base64 of the 32-byte seed)')
  .requiredOption('-i, --input <file>', 'rule file to sign')
  .option('-o, --output <file>', 'where to write the signed file (default: replace the input; its directory is created if missing)');

await runCli<SignOptions>(program, process.argv, async (opts) => {
  const output = opts.output ?? opts.input;
  const format = ruleFileFormat(opts.input);
  if (!format) throw new CliError(`${opts.input}: unknown rule file extension (expected .json, .yaml, .yml or .svc)`);
  if (ruleFileFormat(output) !== format) {
    throw new CliError(`the output ${output} must have the same format as the input (${format}); use svc-compile to convert to .svc`);
  }
  const keyText = (await readInput(opts.privateKey, 'private key file')).toString('utf8');
  let key;
  try {
    key = parsePrivateKey(keyText);
  } catch (err) {
    throw new CliError(`private key file ${opts.privateKey}: ${(err as KeyFormatError).message}`);
  }
  const bytes = await readInput(opts.input);
  if (format === 'svc') await initSvcCodec();
  let signed: Buffer;
  try {
    signed = signRuleFile(opts.input, bytes, key);
  } catch (err) {
    if (err instanceof RuleFileError) throw new CliError(err.message, EXIT_FAILED);
    throw err;
  }
  try {
    // The output's directory is created when missing, as svc-keygen does for its --output-dir.
    await mkdir(dirname(output), { recursive: true });
    await atomicWrite(output, signed, { keepMode: true });
  } catch (err) {
    throw new CliError(`cannot write ${output}: ${ioReason(err)}`);
  }
  process.stdout.write(`signed ${output} with ${toBase64(rawPublicKey(key))}\n`);
  return EXIT_OK;
});
