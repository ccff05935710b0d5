/**
 * The server log: pino JSON lines on STDERR (stdout carries only audit lines), levels
 * error, warn, info and debug. Lines look like
 * `{"level":"info","time":"2024-05-01T12:00:00.000Z","msg":"listening","port":8080}`.
 */
import { pino, type DestinationStream } from 'pino';

/** Server log verbosity, lowest volume first. */
export type LogLevelName = 'error' | 'warn' | 'info' | 'debug';

/**
 * The logger the rest of the code depends on; a pino logger satisfies it. Each level takes
 * structured fields and an optional message (`log.info({port}, 'listening')`), or just a
 * message. Method syntax on purpose: a test fake such as `{ error: (f: object) => {} }` fits.
 */
export interface Logger {
  error(fieldsOrMsg: object | string, msg?: string): void;
  warn(fieldsOrMsg: object | string, msg?: string): void;
  info(fieldsOrMsg: object | string, msg?: string): void;
  debug(fieldsOrMsg: object | string, msg?: string): void;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): Logger;
}

/** Options of `createLogger`. */
export interface LoggerOptions {
  readonly level: LogLevelName;
  /** Where lines go; default file descriptor 2 (stderr), written synchronously. */
  readonly destination?: DestinationStream | NodeJS.WritableStream;
  /** Fields on every line (e.g. `{service: 'svc-server'}`); default none. */
  readonly base?: Record<string, unknown>;
}

/** Creates the server logger (pino, JSON lines, ISO `time`, `level` as a word). */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: options.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything (tests, tools). */
export function silentLogger(): Logger {
  const drop = (): void => {};
  const logger: Logger = { error: drop, warn: drop, info: drop, debug: drop, child: () => logger };
  return logger;
}
