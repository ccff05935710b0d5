/**
 * The drain state of one HTTP adapter, shared by both request paths: once the server drains
 * for shutdown, a new request is shed with 503 NOT_READY and `Connection: close`, and a request
 * already taken is answered with `Connection: close` (node closes only the connections idle
 * when the drain starts, so a kept-alive one would hold the shutdown open).
 */
import { ServiceError } from '../../service/errors.js';

/** Whether the adapter drains; set by the fastify `preClose` hook (./hooks.ts). */
export class Drain {
  closing = false;
}

/** The answer to a request that arrives while the server drains. */
export function shuttingDown(): ServiceError {
  return new ServiceError('NOT_READY', 'server is shutting down');
}
