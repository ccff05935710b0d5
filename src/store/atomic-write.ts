/**
 * Crash-safe file replacement (DECISIONS.md 4: "Every write is atomic (temp file, fsync, rename)").
 *
 * The data goes to a temp file in the target's directory, is fsynced, renamed over the target
 * (atomic on POSIX within one file system), and then the directory is fsynced so the rename
 * itself survives a crash. Readers see either the old or the new content, never a half-written
 * file. On any failure the temp file is removed and the target is untouched.
 *
 * This is the one atomic writer of the code base: the rule store, the tenant registry file and
 * the signing CLIs (signed rule files, keys) all write through it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, open, rename, rm, stat } from 'node:fs/promises';
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

/** What identifies one version of a file on disk (a rename keeps all three). */
export interface FileFingerprint {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** Options of `atomicWrite`. */
export interface AtomicWriteOptions {
  /**
   * File mode of the result, set with chmod so the umask cannot change it. Default: created
   * with 0o644 through the umask (rule store and history files).
   */
  readonly mode?: number;
  /** Keep the mode of an existing target (else `mode`, else 0o644, set with chmod): CLIs replacing a file. */
  readonly keepMode?: boolean;
}

/**
 * Atomically replaces (or creates) `target` with `data`. The directory must exist.
 * Rejects on failure, leaving the previous content of `target` (if any) intact. Resolves to the
 * fingerprint of the written file (taken from the open file, so no extra path lookup).
 */
export async function atomicWrite(target: string, data: string | Uint8Array, options?: AtomicWriteOptions): Promise<FileFingerprint> {
  const tmp = tempPathFor(target);
  const mode = options?.keepMode ? ((await existingMode(target)) ?? options.mode ?? 0o644) : options?.mode;
  let fingerprint: FileFingerprint;
  try {
    const handle = await open(tmp, 'wx', mode === undefined ? 0o644 : 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
      const st = await handle.stat();
      fingerprint = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    } finally {
      await handle.close();
    }
    // NOTE: chmod after creation so the umask cannot change the requested mode.
    if (mode !== undefined) await chmod(tmp, mode);
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dirname(target));
  return fingerprint;
}

async function existingMode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
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
