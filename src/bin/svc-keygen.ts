#!/usr/bin/env node
/**
 * svc-keygen: generates an Ed25519 key pair for signing rules (SPEC.md "Authentication" item 9).
 * Writes `<prefix>public.key` (base64 of the raw 32-byte key, one line) and `<prefix>private.key`
 * (PKCS#8 PEM, mode 0600) into `--output-dir`. Existing key files are never overwritten unless
 * `--force` is given. Exit codes: 0 written, 1 refused (a key file exists), 2 usage or I/O error.
 */
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, createProgram, EXIT_FAILED, EXIT_OK, ioReason, runCli } from '../signing/cli-support.js';
import { generateKeyPair, privateKeyToPem, toBase64 } from '../signing/ed25519.js';
import { atomicWrite } from '../store/atomic-write.js';

interface KeygenOptions {
  outputDir: string;
  prefix: string;
  force: boolean;
}

const program = createProgram('svc-keygen', 'Generate an Ed25519 key pair for signing rules')
  .option('-o, --output-dir <dir>', 'directory for the key files (created if missing)', '.')
  .option('-p, --prefix <prefix>', 'prefix of the key file names', '')
  .option('-f, --force', 'overwrite existing key files', false);

await runCli<KeygenOptions>(program, process.argv, async (opts) => {
  const publicPath = join(opts.outputDir, `${opts.prefix}public.key`);
  const privatePath = join(opts.outputDir, `${opts.prefix}private.key`);
  if (!opts.force) {
    for (const path of [privatePath, publicPath]) {
      if (await exists(path)) throw new CliError(`refusing to overwrite ${path} (use --force to replace the key pair)`, EXIT_FAILED);
    }
  }
  try {
    await mkdir(opts.outputDir, { recursive: true });
  } catch (err) {
    throw new CliError(`cannot create directory ${opts.outputDir}: ${ioReason(err)}`);
  }
  const { privateKey, publicKeyRaw } = generateKeyPair();
  const publicKey = toBase64(publicKeyRaw);
  try {
    await atomicWrite(privatePath, privateKeyToPem(privateKey), { mode: 0o600 });
    await atomicWrite(publicPath, `${publicKey}\n`, { mode: 0o644 });
  } catch (err) {
    throw new CliError(`cannot write the key files in ${opts.outputDir}: ${ioReason(err)}`);
  }
  process.stdout.write(`wrote ${privatePath} (keep it secret) and ${publicPath}\npublic key: ${publicKey}\n`);
  return EXIT_OK;
});

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
