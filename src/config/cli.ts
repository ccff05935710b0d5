/**
 * What `svc-server` does with its command line before anything else: parse the config, or
 * print the help/version (exit 0) or the config error (exit 2) and exit.
 */
import { ConfigError, ConfigExit, parseConfig, type Config, type ParseOptions } from './config.js';

/** The process edges `loadConfigOrExit` touches (injectable for tests). */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly exit: (code: number) => never;
}

const PROCESS_IO: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  exit: (code) => process.exit(code),
};

/**
 * Parses the config, or exits: `--help`/`--version` print to stdout and exit 0; a
 * `ConfigError` prints `svc-server: <message>` to stderr and exits 2. Other errors propagate.
 */
export function loadConfigOrExit(argv: readonly string[], env: Record<string, string | undefined>, io: CliIo = PROCESS_IO, options: ParseOptions = {}): Config {
  try {
    return parseConfig(argv, env, options);
  } catch (err) {
    if (err instanceof ConfigExit) {
      io.stdout.write(err.output);
      return io.exit(err.exitCode);
    }
    if (err instanceof ConfigError) {
      io.stderr.write(`svc-server: ${err.message}\n(see svc-server --help)\n`);
      return io.exit(2);
    }
    throw err;
  }
}
