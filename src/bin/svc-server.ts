#!/usr/bin/env node
/**
 * svc-server: parses the configuration, starts the server, and shuts it down gracefully on
 * SIGTERM or SIGINT (the shutdown timeout counts from the signal); SIGHUP re-reads the
 * credentials files. Wiring only.
 */
import { loadConfigOrExit } from '../config/index.js';
import { createLogger, resolveLogFormat } from '../observe/index.js';
import { startServer } from '../server.js';

const config = loadConfigOrExit(process.argv.slice(2), process.env);
// --log-format auto: readable lines and a banner when the log (stderr) goes to a terminal.
const terminal = process.stderr.isTTY === true;
const logger = createLogger({
  level: config.logLevel,
  format: resolveLogFormat(config.logFormat, terminal),
  color: terminal && (process.env['NO_COLOR'] ?? '') === '',
});

// A closed stdout (audit lines) must not take the server down.
process.stdout.on('error', (err) => logger.warn({ err: err.message }, 'stdout write failed'));

// NOTE: the handlers are installed before the server starts: a signal that arrives while it
// starts (e.g. after `http listening`, before start-up returns) starts the shutdown countdown at
// once and closes the server as soon as it is up, instead of killing the process without
// `server_stopped`.
let server: Awaited<ReturnType<typeof startServer>> | undefined;
/** After the shutdown timeout: how long the audit file may take to close before exit 1. */
const ABORT_GRACE_MS = 1000;
let stopping = false;
/** Set when the shutdown timeout ran out: the exit is 1 whichever path ends the process. */
let forced = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, timeout_secs: config.shutdownTimeoutSecs }, 'shutting down');
  const deadline = setTimeout(() => {
    logger.warn({ timeout_secs: config.shutdownTimeoutSecs }, 'shutdown timeout reached; exiting with work in flight');
    forced = true;
    process.exitCode = 1;
    if (!server) process.exit(1);
    // `server_stopped` (forced) still reaches the audit file; closing it takes milliseconds,
    // and at most ABORT_GRACE_MS is waited for it.
    const exit = () => process.exit(1);
    setTimeout(exit, ABORT_GRACE_MS).unref();
    server.abort().then(exit, exit);
  }, config.shutdownTimeoutSecs * 1000);
  deadline.unref();
  if (server) closeAndExit(server);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
// SIGHUP re-reads the API keys and JWKS files (docs/securing.md); it no longer ends the process.
process.on('SIGHUP', () => {
  logger.info({ signal: 'SIGHUP' }, 'reloading credentials');
  server?.reloadCredentials();
});

function closeAndExit(running: NonNullable<typeof server>): void {
  running.close().then(
    () => {
      logger.info({}, 'stopped');
      process.exit(forced ? 1 : 0);
    },
    (err: unknown) => {
      logger.error({ err: (err as Error)?.message }, 'shutdown failed');
      process.exit(1);
    },
  );
}

try {
  server = await startServer(config, logger);
  if (stopping) closeAndExit(server);
} catch (err) {
  logger.error({ err: (err as Error)?.message ?? String(err) }, 'svc-server could not start');
  process.exit(1);
}
