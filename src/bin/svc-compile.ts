#!/usr/bin/env node
/**
 * svc-compile: compiles a JSON or YAML rule file to the binary `.svc` format (DECISIONS.md 6).
 * With `-k` the output is signed with that private key. Without it, a signed input keeps its
 * signature, but only when the signature matches the rule (checked against the public key it
 * names); otherwise nothing is written. An invalid ruleset (the server's validation, strict keys
 * included) is refused with every problem on its own line. Exit codes: 0 compiled, 1 invalid
 * input, ruleset or signature, 2 usage or I/O error.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CliError, createProgram, EXIT_FAILED, EXIT_OK, ioReason, readInput, runCli } from '../signing/cli-support.js';
import { parsePrivateKey, rawPublicKey, toBase64, type KeyFormatError } from '../signing/ed25519.js';
import { RuleFileError, ruleFileFormat } from '../signing/rule-file.js';
import { CompileError, compileRuleFile } from '../signing/rule-file-ops.js';
import { decodeSvc, initSvcCodec } from '../signing/svc-format.js';
import { atomicWrite } from '../store/atomic-write.js';
import { validateRuleset } from '../ruleset/validate.js';
import { decodeRuleFile } from '../signing/rule-file.js';

interface CompileOptions {
  input: string;
  output?: string;
  privateKey?: string;
}

const program = createProgram('svc-compile', 'Compile a JSON or YAML rule file to the binary .svc format')
  .requiredOption('-i, --input <file>', 'rule file to compile (.json, .yaml or .yml)')
  .option('-o, --output <file>', 'output file (default: the input with the .svc extension; its directory is created if missing)')
  .option('-k, --private-key <file>', 'sign the compiled file with this private key');

await runCli<CompileOptions>(program, process.argv, async (opts) => {
  const format = ruleFileFormat(opts.input);
  if (format !== 'json' && format !== 'yaml') {
    throw new CliError(`${opts.input}: svc-compile reads .json, .yaml or .yml rule files`);
  }
  const output = opts.output ?? opts.input.replace(/\.(json|ya?ml)$/i, '.svc');
  let key;
  if (opts.privateKey !== undefined) {
    const keyText = (await readInput(opts.privateKey, 'private key file')).toString('utf8');
    try {
      key = parsePrivateKey(keyText);
    } catch (err) {
      throw new CliError(`private key file ${opts.privateKey}: ${(err as KeyFormatError).message}`);
    }
  }
  const bytes = await readInput(opts.input);
  await initSvcCodec();
  let result;
  try {
    // EXTENSIONS.md 2: a ruleset the server would refuse is not compiled.
    refuseInvalid(opts.input, decodeRuleFile(opts.input, bytes));
    result = compileRuleFile(opts.input, bytes, key);
  } catch (err) {
    if (err instanceof RuleFileError || err instanceof CompileError) throw new CliError(err.message, EXIT_FAILED);
    throw err;
  }
  if (result.signature === 'replaced') {
    process.stderr.write(`svc-compile: note: the existing _signature of ${opts.input} was replaced by a new signature\n`);
  }
  try {
    // The output's directory is created when missing, as svc-keygen does for its --output-dir.
    await mkdir(dirname(output), { recursive: true });
    await atomicWrite(output, result.svc, { keepMode: true });
  } catch (err) {
    throw new CliError(`cannot write ${output}: ${ioReason(err)}`);
  }
  const signer = key ? toBase64(rawPublicKey(key)) : decodeSvc(result.svc).signature?.publicKeyRaw.toString('base64');
  const how = result.signature === 'none' ? 'unsigned' : `${result.signature === 'kept' ? 'signature kept, ' : ''}signed by ${signer}`;
  process.stdout.write(`compiled ${opts.input} -> ${output} (${how})\n`);
  return EXIT_OK;
});

/** Throws (exit 1) when the document has validation problems: one line per problem, `file: path: message`. */
function refuseInvalid(input: string, doc: unknown): void {
  const problems = validateRuleset(doc);
  if (problems.length === 0) return;
  const lines = problems.map((p) => `${input}: ${p.path}: ${p.message}`).join('\n');
  throw new CliError(
    `${input}: invalid ruleset (${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}); refusing to compile\n${lines}`,
    EXIT_FAILED,
  );
}
