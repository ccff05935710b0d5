/**
 * The Unix domain socket of `--uds-path` (DECISIONS.md 5): a stale socket file is removed
 * before binding; a live socket (another process answers) or anything that is not a socket is
 * refused with a clear error, never deleted. The socket is removed again at shutdown.
 */
import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { resolve } from 'node:path';

/** A socket path that cannot be used; the message names the path. */
export class SocketPathError extends Error {
  override readonly name = 'SocketPathError';
}

/** The gRPC target of a socket path: `unix:///abs/path` (relative paths resolved from the cwd). */
export function udsTarget(path: string): string {
  return `unix://${resolve(path)}`;
}

/** Removes a stale socket at `path`; throws `SocketPathError` for a live socket or a non-socket. */
export async function prepareSocketPath(path: string): Promise<void> {
  const abs = resolve(path);
  let isSocket: boolean;
  try {
    isSocket = (await lstat(abs)).isSocket();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new SocketPathError(`--uds-path ${abs} cannot be inspected: ${(err as Error).message}`);
  }
  if (!isSocket) throw new SocketPathError(`--uds-path ${abs} exists and is not a socket; refusing to remove it`);
  if (await answers(abs)) throw new SocketPathError(`--uds-path ${abs} is in use: another process is listening on it`);
  try {
    await unlink(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new SocketPathError(`--uds-path ${abs}: cannot remove the stale socket: ${(err as Error).message}`);
    }
  }
}

/** Removes the socket file at shutdown when it is (still) a socket; never throws. */
export async function removeSocket(path: string): Promise<void> {
  const abs = resolve(path);
  try {
    if ((await lstat(abs)).isSocket()) await unlink(abs);
  } catch {
    /* already gone */
  }
}

/** True when something accepts connections on the socket (so it is not stale). */
function answers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(path);
    const finish = (live: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      done(live);
    };
    // NOTE: a listener that neither accepts nor refuses within a second is treated as live.
    const timer = setTimeout(() => finish(true), 1000);
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}
