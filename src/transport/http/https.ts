/**
 * HTTPS of the HTTP adapter from `--http-tls-cert` and `--http-tls-key` (PEM files), and mTLS
 * from `--tls-client-ca`. The files are read and checked by the shared ../tls.ts: every problem
 * stops the start with an error whose message names the file and the flag.
 */
import { loadCaBundle, loadTlsMaterial } from '../tls.js';

/** The TLS options of node's HTTPS server (merged into the server options by server-factory.ts). */
export interface HttpsOptions {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** `--tls-client-ca`: only clients with a certificate it signed finish the handshake. */
  readonly ca?: Buffer;
  readonly requestCert: boolean;
  readonly rejectUnauthorized: boolean;
}

/** Reads and checks the HTTPS PEM files; throws `TlsConfigError` naming the file at fault. */
export function loadHttpsOptions(certPath: string, keyPath: string, clientCaPath: string | null): HttpsOptions {
  const { cert, key } = loadTlsMaterial({ label: 'HTTPS', certPath, certFlag: '--http-tls-cert', keyPath, keyFlag: '--http-tls-key' });
  if (clientCaPath === null) return { cert, key, requestCert: false, rejectUnauthorized: false };
  const ca = loadCaBundle(clientCaPath, '--tls-client-ca');
  return { cert, key, ca, requestCert: true, rejectUnauthorized: true };
}
