#!/usr/bin/env node
/**
 * svc-apikey: makes a new API key (EXTENSIONS.md 1). Prints the key on line 1 (shown once:
 * only its SHA-256 is ever stored) and, on line 2, the JSON record to add to the `keys` array
 * of the `--auth-keys-file`. Exit codes: 0 printed, 2 usage error (the message names the
 * option).
 */
import { AUTH_ROLES, KeysFileError, makeKeyRecord } from '../auth/index.js';
import { CliError, createProgram, EXIT_OK, runCli } from '../signing/cli-support.js';

interface ApiKeyOptions {
  id: string;
  role: string;
  tenants: string;
  expiresAt?: string;
}

const program = createProgram('svc-apikey', 'Make a new API key for svc-server --auth-keys-file')
  .requiredOption('--id <id>', 'key id: who the key is for (audit lines show it as principal)')
  .requiredOption('--role <role>', `role of the key: ${AUTH_ROLES.join(', ')}`)
  .option('--tenants <list>', 'comma-separated tenant ids the key may act for, or * for all', '*')
  .option('--expires-at <iso>', 'ISO 8601 date-time after which the key is refused (default: never)');

await runCli<ApiKeyOptions>(program, process.argv, async (opts) => {
  const tenants = opts.tenants
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  let made;
  try {
    made = makeKeyRecord({ id: opts.id, role: opts.role, tenants, expiresAt: opts.expiresAt ?? null });
  } catch (err) {
    if (err instanceof KeysFileError) throw new CliError(optionMessage(err.message));
    throw err;
  }
  process.stdout.write(`${made.key}\n${JSON.stringify(made.record)}\n`);
  return EXIT_OK;
});

/** The keys-file parser's message for record 0, in terms of the command's options. */
function optionMessage(message: string): string {
  const m = /^keys\[0\](?: \([^)]*\))?\.(\w+) (.*)$/.exec(message);
  if (m === null) return message;
  const option = { id: '--id', role: '--role', tenants: '--tenants', expires_at: '--expires-at' }[m[1] as string] ?? m[1];
  return `${option} ${m[2]}`;
}
