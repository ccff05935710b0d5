/**
 * PEM files of transport security, read and checked at start for every listener that uses
 * them: gRPC TLS (`--grpc-tls-cert`, `--grpc-tls-key`), HTTPS (`--http-tls-cert`,
 * `--http-tls-key`) and the client CA bundle of mTLS (`--tls-client-ca`). Every problem
 * (missing or unreadable file, not PEM, key not matching the certificate) stops the start with
 * an error whose message names the file and the flag. Nothing here logs or echoes file contents.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** A TLS setting that cannot be used; the message names the file and the flag. */
export class TlsConfigError extends Error {
  override readonly name = 'TlsConfigError';
}

/** PEM certificate chain and private key, read and checked. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Which listener's files these are, for the messages: `gRPC TLS`, `HTTPS`. */
export interface TlsFiles {
  /** Message prefix: `gRPC TLS` gives "gRPC TLS certificate /p (--grpc-tls-cert) ...". */
  readonly label: string;
  readonly certPath: string;
  readonly certFlag: string;
  readonly keyPath: string;
  readonly keyFlag: string;
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Reads and checks a certificate and its key; throws `TlsConfigError` naming the file at fault. */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial {
  const { label, certPath, certFlag, keyPath, keyFlag } = files;
  const cert = readPem(certPath, `${label} certificate`, certFlag);
  const key = readPem(keyPath, `${label} private key`, keyFlag);
  if (!/-----BEGIN [A-Z0-9 ]*CERTIFICATE-----/.test(cert.toString('latin1'))) {
    throw new TlsConfigError(`${label} certificate ${certPath} (${certFlag}) is not a PEM certificate`);
  }
  try {
    new X509Certificate(cert);
  } catch (err) {
    throw new TlsConfigError(`${label} certificate ${certPath} (${certFlag}) is not a valid PEM certificate: ${messageOf(err)}`);
  }
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(key.toString('latin1'))) {
    throw new TlsConfigError(`${label} private key ${keyPath} (${keyFlag}) is not a PEM private key`);
  }
  try {
    createPrivateKey(key);
  } catch (err) {
    throw new TlsConfigError(`${label} private key ${keyPath} (${keyFlag}) is not a valid unencrypted PEM private key: ${messageOf(err)}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new TlsConfigError(`${label} private key ${keyPath} (${keyFlag}) does not match the certificate ${certPath}: ${messageOf(err)}`);
  }
  return { cert, key };
}

/**
 * Reads and checks a PEM CA bundle (one or more certificates) such as `--tls-client-ca`;
 * throws `TlsConfigError` naming the file and the flag.
 */
export function loadCaBundle(path: string, flag: string): Buffer {
  const what = 'mTLS client CA bundle';
  const ca = readPem(path, what, flag);
  const blocks = ca.toString('latin1').match(CERT_BLOCK) ?? [];
  if (blocks.length === 0) throw new TlsConfigError(`${what} ${path} (${flag}) holds no PEM certificate`);
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new TlsConfigError(`${what} ${path} (${flag}): certificate ${i + 1} is not a valid PEM certificate: ${messageOf(err)}`);
    }
  });
  try {
    createSecureContext({ ca });
  } catch (err) {
    throw new TlsConfigError(`${what} ${path} (${flag}) cannot be used as a CA bundle: ${messageOf(err)}`);
  }
  return ca;
}

function readPem(path: string, what: string, flag: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable (permission denied)'
          : code === 'EISDIR'
            ? 'is a directory'
            : `cannot be read: ${messageOf(err)}`;
    throw new TlsConfigError(`${what} ${path} (${flag}) ${reason}`);
  }
  if (bytes.length === 0) throw new TlsConfigError(`${what} ${path} (${flag}) is empty`);
  return bytes;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
