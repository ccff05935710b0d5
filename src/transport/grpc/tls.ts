/**
 * gRPC transport security from `--grpc-tls-cert` and `--grpc-tls-key` (PEM files), and mTLS
 * from `--tls-client-ca`. The files are read and checked by the shared ../tls.ts: every problem
 * stops the start with an error whose message names the file and the flag.
 */
import { ServerCredentials } from '@grpc/grpc-js';
import { loadCaBundle, loadTlsMaterial, type TlsMaterial } from '../tls.js';

export { TlsConfigError, type TlsMaterial } from '../tls.js';

/** The gRPC server's TLS: certificate and key, and the client CA bundle when mTLS is on. */
export interface GrpcTls extends TlsMaterial {
  /** PEM CA bundle of `--tls-client-ca`: clients must present a certificate it signed. */
  readonly clientCa: Buffer | null;
}

/** Reads and checks the gRPC PEM files; throws `TlsConfigError` naming the file at fault. */
export function loadGrpcTls(certPath: string, keyPath: string, clientCaPath: string | null): GrpcTls {
  const material = loadTlsMaterial({ label: 'gRPC TLS', certPath, certFlag: '--grpc-tls-cert', keyPath, keyFlag: '--grpc-tls-key' });
  const clientCa = clientCaPath === null ? null : loadCaBundle(clientCaPath, '--tls-client-ca');
  return { ...material, clientCa };
}

/**
 * Server credentials: TLS from the checked material, or insecure. With a client CA, a client
 * without a certificate signed by it is refused during the handshake.
 */
export function serverCredentials(tls: GrpcTls | null): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(tls.clientCa, [{ cert_chain: tls.cert, private_key: tls.key }], tls.clientCa !== null);
}
