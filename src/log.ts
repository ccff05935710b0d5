/**
 * The one logger type of svc: structured fields first, then an optional message
 * (`log.info({port}, 'listening')`), levels error, warn, info and debug. A pino logger satisfies
 * it (src/observe/logger.ts makes the server's). A part that writes only some levels asks for
 * `Pick<Logger, 'warn'>`, so a test fake can be as small as `{ warn: (fields) => {} }`.
 *
 * Types only (no code, no imports), so every layer may name it, the store included.
 */
export interface Logger {
  error(fields: object | string, msg?: string): void;
  warn(fields: object | string, msg?: string): void;
  info(fields: object | string, msg?: string): void;
  debug(fields: object | string, msg?: string): void;
}
