/**
 * The server log: pino JSON lines on STDERR (stdout carries only audit lines), levels
 * error, warn, info and debug. Lines look like
 * `{"level":"info","time":"2024-05-01T12:00:00.000Z","msg":"listening","port":8080}`.
 */
import { pino, type DestinationStream } from 'pino';
import type { Logger } from '../log.js';

/** Server log verbosity, lowest volume first. */
export type LogLevelName = 'error' | 'warn' | 'info' | 'debug';

/** The one logger type (src/log.ts); `createLogger` returns a pino logger, which satisfies it. */
export type { Logger } from '../log.js';

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
  return { error: drop, warn: drop, info: drop, debug: drop };
}
