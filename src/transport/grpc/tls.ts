/**
 * gRPC transport security from `--grpc-tls-cert` and `--grpc-tls-key` (PEM files). Every
 * problem (missing or unreadable file, not PEM, key not matching the certificate) stops the
 * start with an error whose message names the file and the flag.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ServerCredentials } from '@grpc/grpc-js';

/** A TLS setting that cannot be used; the message names the file. */
export class TlsConfigError extends Error {
  override readonly name = 'TlsConfigError';
}

/** PEM certificate chain and private key, read and checked. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Reads and checks the PEM files; throws `TlsConfigError` naming the file at fault. */
export function loadTlsMaterial(certPath: string, keyPath: string): TlsMaterial {
  const cert = readPem(certPath, '--grpc-tls-cert', 'certificate');
  const key = readPem(keyPath, '--grpc-tls-key', 'private key');
  if (!/-----BEGIN [A-Z0-9 ]*CERTIFICATE-----/.test(cert.toString('latin1'))) {
    throw new TlsConfigError(`gRPC TLS certificate ${certPath} (--grpc-tls-cert) is not a PEM certificate`);
  }
  try {
    new X509Certificate(cert);
  } catch (err) {
    throw new TlsConfigError(`gRPC TLS certificate ${certPath} (--grpc-tls-cert) is not a valid PEM certificate: ${messageOf(err)}`);
  }
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(key.toString('latin1'))) {
    throw new TlsConfigError(`gRPC TLS private key ${keyPath} (--grpc-tls-key) is not a PEM private key`);
  }
  try {
    createPrivateKey(key);
  } catch (err) {
    throw new TlsConfigError(`gRPC TLS private key ${keyPath} (--grpc-tls-key) is not a valid unencrypted PEM private key: ${messageOf(err)}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new TlsConfigError(`gRPC TLS private key ${keyPath} (--grpc-tls-key) does not match the certificate ${certPath}: ${messageOf(err)}`);
  }
  return { cert, key };
}

/** Server credentials: TLS from the checked material (no client certificates), or insecure. */
export function serverCredentials(tls: TlsMaterial | null): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false);
}

function readPem(path: string, flag: string, what: string): Buffer {
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
    throw new TlsConfigError(`gRPC TLS ${what} ${path} (${flag}) ${reason}`);
  }
  if (bytes.length === 0) throw new TlsConfigError(`gRPC TLS ${what} ${path} (${flag}) is empty`);
  return bytes;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
