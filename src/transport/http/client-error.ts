/**
 * Errors node's HTTP server raises before a request exists (malformed HTTP, headers that do not
 * arrive within the timeout, oversized headers), answered with the catalog body like every other
 * error (DECISIONS.md 3) instead of fastify's default `{error, message, statusCode}`.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ServiceError } from '../../service/errors.js';

/** Node's server options that make headers count against `--request-timeout-secs`. */
export function headerTimeoutOptions(requestTimeoutMs: number): { headersTimeout?: number; connectionsCheckingInterval?: number } {
  // NOTE: 0 disables the request timeout; node's default header timeout (60 s) still applies then.
  if (requestTimeoutMs <= 0) return {};
  // node checks pending headers every `connectionsCheckingInterval` (default 30 s).
  return { headersTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeoutMs / 4))) };
}

/** A fastify `clientErrorHandler` that writes the catalog error and closes the connection. */
export function clientErrorHandler(requestTimeoutMs: number): (err: Error & { code?: string }, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let e: ServiceError;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      e = new ServiceError('REQUEST_TIMEOUT', `request headers not received within ${Math.round(requestTimeoutMs / 1000)} s (--request-timeout-secs)`);
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      e = new ServiceError('BAD_REQUEST', 'request headers are too large');
    } else {
      e = new ServiceError('BAD_REQUEST', 'malformed HTTP request');
    }
    const body = JSON.stringify(e.toBody());
    if (socket.writable) {
      socket.end(
        `HTTP/1.1 ${e.httpStatus} ${STATUS_CODES[e.httpStatus]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    const timer = setTimeout(() => socket.destroy(), 1000);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
