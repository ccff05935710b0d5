/**
 * gRPC helpers for integration tests: a real grpc-js client of `rules.RuleService` loaded
 * from the same proto as the server, a promise wrapper that turns every answer into a value
 * (`{ok: true, value}` or `{ok: false, code, details, svcCode, trailers}`), and self-signed TLS
 * material made with `openssl`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ruleServiceClient } from '../../src/transport/grpc/proto.js';

/** The outcome of one unary call. */
export type GrpcOutcome<T = any> =
  { ok: true; value: T } | { ok: false; code: number; details: string; svcCode: string | undefined; trailers: grpc.Metadata | undefined };

/** A connected test client; close it when done. */
export interface TestClient {
  /** Calls one RPC by name (`Execute`, `ListRuleSets`, ...). */
  call<T = any>(method: string, request: object, metadata?: Record<string, string>): Promise<GrpcOutcome<T>>;
  /** Like `call` but asserts success. */
  ok<T = any>(method: string, request: object, metadata?: Record<string, string>): Promise<T>;
  readonly raw: grpc.Client;
  close(): void;
}

/** Options of `connect`. */
export interface ConnectOptions {
  /** PEM CA (the self-signed certificate) for TLS; insecure when absent. */
  readonly caPem?: Buffer;
  /** Client certificate and key (PEM) presented to a server that requires one (mTLS); with `caPem`. */
  readonly clientCert?: { readonly cert: Buffer; readonly key: Buffer };
  readonly channelOptions?: grpc.ChannelOptions;
}

/** A client for `target` (`127.0.0.1:port` or `unix:///abs/path`). */
export function connect(target: string, options: ConnectOptions = {}): TestClient {
  const Client = ruleServiceClient();
  const creds = options.caPem
    ? grpc.credentials.createSsl(options.caPem, options.clientCert?.key ?? null, options.clientCert?.cert ?? null)
    : grpc.credentials.createInsecure();
  // NOTE: the certificate names localhost too; checking that name avoids node's warning about
  // an IP address as TLS server name.
  const tlsName = options.caPem ? { 'grpc.ssl_target_name_override': 'localhost' } : {};
  const client = new Client(target, creds, { ...tlsName, ...options.channelOptions });
  const call = <T>(method: string, request: object, md: Record<string, string> = {}): Promise<GrpcOutcome<T>> =>
    new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      for (const [k, v] of Object.entries(md)) metadata.set(k, v);
      const deadline = Date.now() + 60_000;
      const fn = (client as unknown as Record<string, Function>)[method];
      if (typeof fn !== 'function') throw new Error(`no RPC ${method}`);
      fn.call(client, request, metadata, { deadline }, (err: grpc.ServiceError | null, value: T) => {
        if (err) {
          const svc = err.metadata?.get('svc-error-code')[0];
          resolve({ ok: false, code: err.code, details: err.details, svcCode: typeof svc === 'string' ? svc : undefined, trailers: err.metadata });
        } else resolve({ ok: true, value });
      });
    });
  return {
    call,
    async ok<T>(method: string, request: object, md?: Record<string, string>): Promise<T> {
      const out = await call<T>(method, request, md);
      if (!out.ok) throw new Error(`${method} failed: ${grpc.status[out.code]} ${out.details}`);
      return out.value;
    },
    raw: client,
    close: () => client.close(),
  };
}

/** Self-signed certificate and key for `localhost` and `127.0.0.1`, made with openssl in `dir`. */
export function makeSelfSignedCert(dir: string): { certPath: string; keyPath: string; cert: Buffer; key: Buffer } {
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { certPath, keyPath, cert: readFileSync(certPath), key: readFileSync(keyPath) };
}

/** gRPC status numbers by name, for assertions. */
export const Status = grpc.status;
