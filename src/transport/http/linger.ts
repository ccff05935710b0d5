/**
 * Lingering close (RFC 9112, section 9.6) for answers sent before the request body was read
 * (413 over the body limit, 408 request timeout). The client may still be sending; closing the
 * socket at once makes the kernel answer that data with a reset, which can destroy the error
 * answer before the client reads it (the client then sees EPIPE/ECONNRESET instead of the 413).
 * Instead the socket is half-closed after the answer and whatever still arrives is read and
 * dropped until the client closes, for at most `maxMs`.
 */
import type { Socket } from 'node:net';

/** Longest time a socket lingers after an early error answer. */
export const LINGER_MS = 5000;

const LINGERING = Symbol('svc.lingering');

/**
 * Makes the `Connection: close` answer on `socket` end with a lingering close.
 * NOTE: node's HTTP server calls `socket.destroySoon()` once an answer with `Connection: close`
 * is written; that call is replaced for this one socket.
 */
export function lingerOnClose(socket: Socket | undefined, maxMs: number = LINGER_MS): void {
  const s = socket as (Socket & { destroySoon?: () => void; [LINGERING]?: boolean }) | undefined;
  if (!s || s.destroyed || s[LINGERING] || typeof s.destroySoon !== 'function') return;
  s[LINGERING] = true;
  s.destroySoon = () => {
    const timer = setTimeout(() => s.destroy(), maxMs);
    timer.unref();
    s.once('close', () => clearTimeout(timer));
    s.once('end', () => s.destroy());
    s.on('error', () => s.destroy());
    s.end();
    s.resume();
  };
}
