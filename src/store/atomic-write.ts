/**
 * Crash-safe file replacement (DECISIONS.md 4: "Every write is atomic (temp file, fsync, rename)").
 *
 * The data goes to a temp file in the target's directory, is fsynced, renamed over the target
 * (atomic on POSIX within one file system), and then the directory is fsynced so the rename
 * itself survives a crash. Readers see either the old or the new content, never a half-written
 * file. On any failure the temp file is removed and the target is untouched.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Prefix and suffix of temp files: loaders skip dotfiles and `*.tmp`. */
export const TEMP_PREFIX = '.';
export const TEMP_SUFFIX = '.tmp';

/** True when a directory entry name is a temp file of `atomicWrite`. */
export function isTempFileName(fileName: string): boolean {
  return fileName.startsWith(TEMP_PREFIX) && fileName.endsWith(TEMP_SUFFIX);
}

/** Temp path for `target`: same directory, `.` + base name + random part + `.tmp`. */
export function tempPathFor(target: string): string {
  const unique = `${process.pid}.${randomBytes(6).toString('hex')}`;
  return join(dirname(target), `${TEMP_PREFIX}${basename(target)}.${unique}${TEMP_SUFFIX}`);
}

/**
 * Atomically replaces (or creates) `target` with `data`. The directory must exist.
 * Rejects on failure, leaving the previous content of `target` (if any) intact.
 */
export async function atomicWrite(target: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempPathFor(target);
  try {
    const handle = await open(tmp, 'wx', 0o644);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dirname(target));
}

/**
 * Fsyncs a directory so that entries created, renamed or removed in it are durable.
 * NOTE: some platforms (Windows) cannot open or fsync a directory; those errors are ignored
 * because the rename has already happened and nothing better can be done there.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw err;
  } finally {
    await handle?.close();
  }
}
