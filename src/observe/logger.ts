/**
 * The server log: pino JSON lines on STDERR (stdout carries only audit lines), levels
 * error, warn, info and debug. Lines look like
 * `{"level":"info","time":"2024-05-01T12:00:00.000Z","msg":"listening","port":8080}`.
 * With the `pretty` format the same records are written as readable lines and a start-up
 * banner (pretty-log.ts).
 */
import { pino, type DestinationStream } from 'pino';
import type { Logger } from '../log.js';
import { PrettyLogStream } from './pretty-log.js';

/** Server log verbosity, lowest volume first. */
export type LogLevelName = 'error' | 'warn' | 'info' | 'debug';

/** How log records are written: JSON lines, or readable lines and a banner. */
export type LogFormatName = 'json' | 'pretty';

/** `--log-format`: `auto` is `pretty` when the log goes to a terminal, else `json`. */
export function resolveLogFormat(setting: 'auto' | LogFormatName, isTerminal: boolean): LogFormatName {
  if (setting === 'auto') return isTerminal ? 'pretty' : 'json';
  return setting;
}

/** The one logger type (src/log.ts); `createLogger` returns a pino logger, which satisfies it. */
export type { Logger } from '../log.js';

/** Options of `createLogger`. */
export interface LoggerOptions {
  readonly level: LogLevelName;
  /** Where lines go; default file descriptor 2 (stderr), written synchronously. */
  readonly destination?: DestinationStream | NodeJS.WritableStream;
  /** Fields on every line (e.g. `{service: 'svc-server'}`); default none. */
  readonly base?: Record<string, unknown>;
  /** Default `json`. */
  readonly format?: LogFormatName;
  /** ANSI colours in the `pretty` format; default false. */
  readonly color?: boolean;
}

/** Creates the server logger (pino, JSON lines, ISO `time`, `level` as a word). */
export function createLogger(options: LoggerOptions): Logger {
  const out = options.destination ?? pino.destination({ fd: 2, sync: true });
  let destination: DestinationStream | NodeJS.WritableStream = out;
  if (options.format === 'pretty') {
    const pretty = new PrettyLogStream({ out, color: options.color ?? false });
    // Lines held back until the banner are not lost when the process ends first.
    process.on('exit', () => pretty.flush());
    destination = pretty;
  }
  return pino(
    {
      level: options.level,
      base: options.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** A logger that drops everything (tests, tools). */
export function silentLogger(): Logger {
  const drop = (): void => {};
  return { error: drop, warn: drop, info: drop, debug: drop };
}
