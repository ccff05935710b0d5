/**
 * Atomic file replacement for the signing CLIs: temp file in the target's directory, fsync,
 * chmod, rename. A crash or an error never leaves a half-written rule or key file, and the
 * previous content stays intact on failure.
 */
import { randomBytes } from 'node:crypto';
import { chmod, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  /** File mode of the result. Default: the mode of the existing target, else 0o644. */
  mode?: number;
}

/** Atomically writes `data` to `target` (created or replaced). */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const mode = options.mode ?? (await existingMode(target)) ?? 0o644;
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // NOTE: chmod after creation so the umask cannot change the requested mode.
    await chmod(tmp, mode);
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

async function existingMode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
}
