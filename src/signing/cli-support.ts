/**
 * Shared plumbing of the signing CLIs (svc-keygen, svc-sign, svc-verify, svc-compile):
 * exit codes, commander set-up, reading input files with clear errors.
 *
 * Exit codes: 0 success; 1 the operation failed (svc-verify: the file is not valid; others:
 * refused, e.g. an existing key or a signature that does not match); 2 usage or I/O error.
 */
import { readFile } from 'node:fs/promises';
import { Command, CommanderError, type OptionValues } from 'commander';

/** Exit code: success. */
export const EXIT_OK = 0;
/** Exit code: the operation failed or the file is invalid. */
export const EXIT_FAILED = 1;
/** Exit code: bad usage, unreadable input, unwritable output. */
export const EXIT_USAGE = 2;

/** An error that ends a CLI with `exitCode` after printing `message` to stderr. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_USAGE,
  ) {
    super(message);
  }
}

/** A commander program whose usage errors exit with `EXIT_USAGE` (help and version with 0). */
export function createProgram(name: string, description: string): Command {
  return new Command(name).description(description).exitOverride().allowExcessArguments(false).showHelpAfterError();
}

/**
 * Parses `argv` with `program` and runs `action` with the parsed options; prints errors to
 * stderr as `<name>: <message>` and sets `process.exitCode`. Never throws.
 */
export async function runCli<T extends OptionValues>(program: Command, argv: readonly string[], action: (options: T) => Promise<number>): Promise<void> {
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed the message (or the help text).
      process.exitCode = err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      return;
    }
    process.stderr.write(`${program.name()}: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = EXIT_USAGE;
    return;
  }
  try {
    process.exitCode = await action(program.opts<T>());
  } catch (err) {
    const code = err instanceof CliError ? err.exitCode : EXIT_FAILED;
    process.stderr.write(`${program.name()}: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = code;
  }
}

/** Reads a file; an I/O failure becomes a `CliError` (exit 2) naming the file and its role. */
export async function readInput(path: string, role = 'input file'): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new CliError(`cannot read ${role} ${path}: ${ioReason(err)}`, EXIT_USAGE);
  }
}

/** Short reason of an I/O error (`no such file or directory`, ...). */
export function ioReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    default:
      return e?.message ?? String(err);
  }
}
