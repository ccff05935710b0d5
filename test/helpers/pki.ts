/**
 * A small certificate authority for TLS and mTLS tests, made with the `openssl` CLI in a temp
 * dir, with the same commands as docs/securing.md: a CA, a server certificate for
 * `localhost` and 127.0.0.1 (subjectAltName), a client certificate from the same CA, and a
 * client certificate from a second CA that the server does not trust.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A PEM certificate and its key, as paths and bytes. */
export interface Pem {
  readonly certPath: string;
  readonly keyPath: string;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Everything a TLS/mTLS test needs. */
export interface Pki {
  readonly ca: Pem;
  readonly server: Pem;
  readonly client: Pem;
  /** A second CA, not trusted by the server. */
  readonly rogueCa: Pem;
  /** A client certificate signed by `rogueCa`. */
  readonly rogueClient: Pem;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function pem(certPath: string, keyPath: string): Pem {
  return { certPath, keyPath, cert: readFileSync(certPath), key: readFileSync(keyPath) };
}

/** A self-signed CA certificate `<name>.crt` and key `<name>.key` in `dir`. */
function makeCa(dir: string, name: string): Pem {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  openssl(['req', '-x509', ...EC, '-days', '2', '-subj', `/CN=${name}`, '-keyout', keyPath, '-out', certPath]);
  return pem(certPath, keyPath);
}

/** A certificate `<name>.crt` (key `<name>.key`) signed by `ca`, with the given X.509 v3 extensions. */
function issue(dir: string, ca: Pem, name: string, extensions: string): Pem {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  const csrPath = join(dir, `${name}.csr`);
  const extPath = join(dir, `${name}.ext`);
  writeFileSync(extPath, extensions);
  openssl(['req', '-new', ...EC, '-subj', `/CN=${name}`, '-keyout', keyPath, '-out', csrPath]);
  openssl(['x509', '-req', '-in', csrPath, '-CA', ca.certPath, '-CAkey', ca.keyPath, '-CAcreateserial', '-days', '2', '-extfile', extPath, '-out', certPath]);
  return pem(certPath, keyPath);
}

/** Makes the CA, the server and client certificates, and the untrusted CA and its client, in `dir`. */
export function makePki(dir: string): Pki {
  const ca = makeCa(dir, 'ca');
  const server = issue(dir, ca, 'server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  const client = issue(dir, ca, 'client', 'extendedKeyUsage=clientAuth\n');
  const rogueCa = makeCa(dir, 'rogue-ca');
  const rogueClient = issue(dir, rogueCa, 'rogue-client', 'extendedKeyUsage=clientAuth\n');
  return { ca, server, client, rogueCa, rogueClient };
}
