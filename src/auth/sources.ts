/**
 * Where the guard's credentials come from: the keys file (`--auth-keys-file`) and the JWKS
 * file (`--auth-jwt-jwks-file`). Both are read at start (a bad file stops the start, naming
 * the flag and the file) and again when they change and on `reload()` (SIGHUP); a file that
 * has become bad keeps the previous credentials and logs why.
 */
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { AuthGuard, type AuthFailure } from './guard.js';
import { JwtVerifier, parseJwks } from './jwt.js';
import { parseKeysFile } from './keys-file.js';

/** The config slice of authentication. */
export type AuthConfig = Pick<
  Config,
  'authKeysFile' | 'authJwtJwksFile' | 'authJwtIssuer' | 'authJwtAudience' | 'authJwtRoleClaim' | 'authJwtTenantsClaim' | 'authPublicMetrics'
>;

/** A credentials file that cannot be used at start; the message names the flag and the file. */
export class AuthConfigError extends Error {
  override readonly name = 'AuthConfigError';
}

/** True when authentication is on (EXTENSIONS.md 1: either source configured). */
export function authEnabled(config: AuthConfig): boolean {
  return config.authKeysFile !== null || config.authJwtJwksFile !== null;
}

/** Running authentication: the guard and its file watching. */
export interface AuthRuntime {
  readonly guard: AuthGuard;
  /** `--auth-public-metrics`. */
  readonly publicMetrics: boolean;
  /** Re-reads both files now (SIGHUP); a bad file keeps the previous credentials. */
  reload(): void;
  /** Stops watching the files. */
  close(): void;
}

/** Options of `startAuth`. */
export interface StartAuthOptions {
  readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  readonly onFailure?: (failure: AuthFailure) => void;
  /** Polling interval of the file watch in ms (default 500). */
  readonly watchIntervalMs?: number;
}

/** Builds the guard from the files of `config`; null when authentication is off. Throws `AuthConfigError`. */
export function startAuth(config: AuthConfig, options: StartAuthOptions): AuthRuntime | null {
  if (!authEnabled(config)) return null;
  const { logger } = options;
  const guard = new AuthGuard(options.onFailure ? { onFailure: options.onFailure } : {});
  const keysFile = config.authKeysFile;
  const jwksFile = config.authJwtJwksFile;

  const loadKeys = (path: string): void => {
    const entries = parseKeysFile(readFileSync(path, 'utf8'));
    guard.setKeys(entries);
    logger.info({ file: path, keys: entries.length }, 'api keys loaded');
  };
  const loadJwks = (path: string): void => {
    const jwks = parseJwks(readFileSync(path, 'utf8'));
    guard.setJwt(
      new JwtVerifier(jwks, {
        issuer: config.authJwtIssuer,
        audience: config.authJwtAudience,
        roleClaim: config.authJwtRoleClaim,
        tenantsClaim: config.authJwtTenantsClaim,
      }),
    );
    logger.info({ file: path, keys: jwks.keys.length }, 'jwks loaded');
  };

  const sources: Array<{ path: string; flag: string; load: (path: string) => void }> = [];
  if (keysFile !== null) sources.push({ path: keysFile, flag: '--auth-keys-file', load: loadKeys });
  if (jwksFile !== null) sources.push({ path: jwksFile, flag: '--auth-jwt-jwks-file', load: loadJwks });
  for (const s of sources) {
    try {
      s.load(s.path);
    } catch (err) {
      throw new AuthConfigError(`${s.flag} ${s.path}: ${reasonOf(err)}`);
    }
  }

  const reloadOne = (s: (typeof sources)[number]): void => {
    try {
      s.load(s.path);
    } catch (err) {
      logger.error({ file: s.path, err: reasonOf(err) }, 'credentials file not reloaded; the previous credentials stay in force');
    }
  };
  // NOTE: stat polling (not fs.watch): it sees a file replaced by rename (how editors and
  // config tools write) and works on network file systems; two stats per interval.
  const interval = options.watchIntervalMs ?? 500;
  const listeners = sources.map((s) => {
    const listener = (cur: Stats, prev: Stats): void => {
      if (cur.mtimeMs !== prev.mtimeMs || cur.size !== prev.size || cur.ino !== prev.ino) reloadOne(s);
    };
    watchFile(s.path, { interval, persistent: false }, listener);
    return { path: s.path, listener };
  });

  return {
    guard,
    publicMetrics: config.authPublicMetrics,
    reload: () => sources.forEach(reloadOne),
    close: () => listeners.forEach((l) => unwatchFile(l.path, l.listener)),
  };
}

function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES') return 'is not readable (permission denied)';
  if (code === 'EISDIR') return 'is a directory';
  return err instanceof Error ? err.message : String(err);
}
