/**
 * Broker credentials and TLS (EXTENSIONS.md 1 "Broker credentials"): turns `--sync-token`,
 * `--sync-user`/`--sync-password`, `--sync-creds-file` and `--sync-tls-ca` into options of the
 * NATS connection.
 *
 * The files are read once, when sync is prepared (before the server listens): an unreadable
 * creds or CA file, or one that is not what the flag expects, stops the start with a
 * `ConfigError` naming the flag and the file. The secrets themselves (token, password, the
 * creds file's seed) only go into the connection options: `describe()` says which kind of
 * authentication is in use, for the log, and nothing else. `redactUrl` hides credentials a
 * user may have written into `--sync-url` itself (`nats://user:pass@host`).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { ConfigError, type Config } from '../config/index.js';
import type { NatsApi } from './nats-api.js';

/** The configuration fields read here. */
export type BrokerAuthConfig = Pick<Config, 'syncUrl' | 'syncToken' | 'syncUser' | 'syncPassword' | 'syncCredsFile' | 'syncTlsCa'>;

/** How the connection authenticates, for the log (never a secret). */
export type BrokerAuthKind = 'none' | 'token' | 'user' | 'creds';

/** Credentials and TLS settings read at start. */
export interface BrokerAuth {
  readonly kind: BrokerAuthKind;
  /** True when `--sync-tls-ca` is set: TLS, the server verified against that CA. */
  readonly tls: boolean;
  /** The options to merge into `connect()`. Throws when the client lacks `credsAuthenticator`. */
  connectOptions(api: NatsApi): Record<string, unknown>;
}

/** A file reader (injectable for tests). */
export type ReadFile = (path: string) => Buffer;

const defaultRead: ReadFile = (path) => readFileSync(path);

/** The two `-----...-----` delimited blocks of a creds file (user JWT, then NKey seed), as the client parses them. */
const CREDS_BLOCK = /\s*(?:(?:[-]{3,}[^\n]*[-]{3,}\n)(.+)(?:\n\s*[-]{3,}[^\n]*[-]{3,}\n))/gi;

/** Reads the credential files the configuration names (see the module comment). */
export function readBrokerAuth(config: BrokerAuthConfig, read: ReadFile = defaultRead): BrokerAuth {
  const creds = config.syncCredsFile === null ? null : readCreds(config.syncCredsFile, read);
  const ca = config.syncTlsCa === null ? null : readCa(config.syncTlsCa, read);
  const kind: BrokerAuthKind = creds ? 'creds' : config.syncToken !== null ? 'token' : config.syncUser !== null ? 'user' : 'none';
  return {
    kind,
    tls: ca !== null,
    connectOptions(api) {
      const out: Record<string, unknown> = {};
      if (ca !== null) out['tls'] = { ca, checkServerIdentity: serverIdentityCheck(ipHosts(config.syncUrl ?? '')) };
      if (creds) {
        if (!api.credsAuthenticator) throw new Error('the NATS client does not export credsAuthenticator (--sync-creds-file)');
        out['authenticator'] = api.credsAuthenticator(creds);
      } else if (config.syncToken !== null) {
        out['token'] = config.syncToken;
      } else if (config.syncUser !== null) {
        out['user'] = config.syncUser;
        out['pass'] = config.syncPassword ?? '';
      }
      return out;
    },
  };
}

/**
 * The host name check of the TLS connection. The NATS client gives node no server name for a URL
 * whose host is an IP address, and node then checks the certificate against `localhost`; for
 * that case the certificate must instead name one of the IP addresses of `--sync-url` (an IP
 * subjectAltName). Host names are checked as usual. The chain is always verified against the CA.
 */
function serverIdentityCheck(ips: readonly string[]): (name: string, cert: PeerCertificate) => Error | undefined {
  return (name, cert) => {
    const err = checkServerIdentity(name, cert);
    if (err === undefined || name !== 'localhost') return err;
    return ips.some((ip) => checkServerIdentity(ip, cert) === undefined) ? undefined : err;
  };
}

/** The IP-address hosts of a `--sync-url` list (`nats://10.0.0.5:4222,nats://[::1]:4222`). */
function ipHosts(url: string): string[] {
  const out: string[] = [];
  for (const entry of url.split(',')) {
    const hostPort =
      entry
        .trim()
        .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
        .replace(/^[^@/]*@/, '')
        .split('/')[0] ?? '';
    const host = hostPort.startsWith('[') ? hostPort.slice(1, hostPort.indexOf(']')) : hostPort.replace(/:\d+$/, '');
    if (isIP(host) !== 0) out.push(host);
  }
  return out;
}

function readCreds(path: string, read: ReadFile): Uint8Array {
  const bytes = readOrFail('--sync-creds-file', path, read);
  const text = bytes.toString('utf8');
  CREDS_BLOCK.lastIndex = 0;
  const blocks = [CREDS_BLOCK.exec(text), CREDS_BLOCK.exec(text)];
  CREDS_BLOCK.lastIndex = 0;
  if (blocks.some((m) => m === null)) {
    throw new ConfigError(`--sync-creds-file: ${path} is not a NATS credentials file (expected a user JWT block and an NKey seed block)`);
  }
  return new Uint8Array(bytes);
}

function readCa(path: string, read: ReadFile): string {
  const text = readOrFail('--sync-tls-ca', path, read).toString('utf8');
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(`--sync-tls-ca: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return text;
}

function readOrFail(flag: string, path: string, read: ReadFile): Buffer {
  try {
    return read(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | null)?.code;
    throw new ConfigError(`${flag}: cannot read ${path}: ${code ?? (err instanceof Error ? err.message : String(err))}`);
  }
}

/** `url` (one or a comma-separated list) with any `user:password@` or `token@` part replaced by `***@`. */
export function redactUrl(url: string): string {
  return url.replace(/(^|,)(\s*[a-z][a-z0-9+.-]*:\/\/)[^/@,\s]*@/gi, '$1$2***@');
}
