/**
 * Starts the gRPC server (`rules.RuleService`, proto/rules.proto) on `--grpc-addr` (unless
 * `--disable-grpc`) and on the Unix socket of `--uds-path` (when set), over one façade, with
 * the standard health service (./health.ts) and server reflection (./reflection.ts: v1 and
 * v1alpha, from @grpc/reflection over the same loaded protos) beside it.
 * `close()` stops accepting at once, waits for the calls in flight, then removes the socket.
 */
import { chmod } from 'node:fs/promises';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from '../../log.js';
import type { AuthGuard } from '../../auth/index.js';
import type { Config } from '../../config/index.js';
import type { DataServiceApi } from '../../service/data-service.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import { buildGrpcHandlers } from './handlers.js';
import { HealthService } from './health.js';
import { GrpcInstrumentation, type GrpcInstrumentOptions } from './instrument.js';
import { HEALTH_SERVICE_NAME, ruleServiceDefinition, servedDefinition } from './proto.js';
import { addReflection } from './reflection.js';
import { loadGrpcTls, serverCredentials } from './tls.js';
import { prepareSocketPath, removeSocket, udsTarget } from './uds.js';

/** The config slice the gRPC server reads. */
export type GrpcConfig = Pick<
  Config,
  | 'grpcAddr'
  | 'disableGrpc'
  | 'udsPath'
  | 'grpcTlsCert'
  | 'grpcTlsKey'
  | 'tlsClientCa'
  | 'udsMode'
  | 'maxRequestBodyBytes'
  | 'maxResponseBytes'
  | 'multiTenancyEnabled'
  | 'shutdownTimeoutSecs'
>;

/** The parts besides the façade that some RPCs reach (each absent: its RPCs answer NOT_FOUND, as HTTP's routes). */
export interface GrpcParts {
  /** Reference data (ListData, GetData, PutData, DeleteData). */
  readonly data?: DataServiceApi;
  /** Tenant management (`--multi-tenancy-enabled`). */
  readonly tenants?: TenantManagerApi;
  /** The debug view of a ruleset; give it only with `--debug-mode`. */
  readonly debugRuleset?: (ctx: CallContext, name: string) => unknown;
  /** Period of the readiness check while a health Watch is open (tests shorten it). */
  readonly healthWatchIntervalMs?: number;
}

/** What `startGrpcServer` needs from the logger. */
export type GrpcLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/** A started gRPC server. */
export interface GrpcServerHandle {
  /** `host:port` of the TCP listener (`127.0.0.1:50051`, `[::1]:50051`), or null with `--disable-grpc`. */
  readonly address: string | null;
  /** Absolute path of the Unix socket, or null. */
  readonly socketPath: string | null;
  /**
   * Stops accepting on every listener, waits for calls in flight (tryShutdown), then removes
   * the socket. After `forceAfterMs` (default: the shutdown timeout) the remaining calls are
   * cancelled (forceShutdown). Idempotent.
   */
  close(forceAfterMs?: number): Promise<void>;
}

/**
 * Starts listening. Rejects, with a message naming the file or address, when the TLS files are
 * unusable, the socket path is taken, or a bind fails; nothing stays bound then.
 */
export async function startGrpcServer(
  service: RuleServiceApi,
  config: GrpcConfig,
  logger: GrpcLogger,
  observe: GrpcInstrumentOptions = {},
  security: { readonly guard?: AuthGuard } = {},
  parts: GrpcParts = {},
): Promise<GrpcServerHandle> {
  // Check everything that can be wrong before binding anything.
  // NOTE: --tls-client-ca applies to the TCP listener only; config.ts refuses it without gRPC TLS
  // unless --disable-grpc (then only the socket serves gRPC, without TLS).
  const tls = config.grpcTlsCert !== null && config.grpcTlsKey !== null ? loadGrpcTls(config.grpcTlsCert, config.grpcTlsKey, config.tlsClientCa) : null;
  if (config.udsPath !== null) await prepareSocketPath(config.udsPath);

  const server = new Server({
    // NOTE: the message size limit follows --max-request-body-bytes; bigger requests
    // are answered RESOURCE_EXHAUSTED by grpc-js itself.
    'grpc.max_receive_message_length': config.maxRequestBodyBytes,
  });
  // Spans and debug request lines wrap the handlers only when one of them is on.
  const instrument = observe.tracing || observe.requestLog ? new GrpcInstrumentation(observe) : null;
  const handlers = buildGrpcHandlers(service, {
    multiTenancy: config.multiTenancyEnabled,
    maxResponseBytes: config.maxResponseBytes,
    logger,
    ...(instrument && observe.tracing ? { traceContextOf: instrument.contextOf } : {}),
    ...(security.guard ? { guard: security.guard } : {}),
    ...(parts.data ? { data: parts.data } : {}),
    ...(parts.tenants ? { tenants: parts.tenants } : {}),
    ...(parts.debugRuleset ? { debugRuleset: parts.debugRuleset } : {}),
  });
  server.addService(ruleServiceDefinition(), instrument ? instrument.wrap(handlers) : handlers);
  // NOTE: health and reflection are open to every caller (EXTENSIONS.md 1: `grpc.health.v1` stays
  // open; reflection describes the published proto/ files, nothing more), so they are not wrapped.
  const health = new HealthService(() => service.ready(), parts.healthWatchIntervalMs);
  server.addService(servedDefinition(HEALTH_SERVICE_NAME), health.implementation());
  addReflection(server);

  let address: string | null = null;
  let socketPath: string | null = null;
  try {
    if (!config.disableGrpc) {
      const { host, port } = config.grpcAddr;
      const hostText = host.includes(':') ? `[${host}]` : host;
      const bound = await bind(server, `${hostText}:${port}`, serverCredentials(tls));
      address = `${hostText}:${bound}`;
      logger.info({ address, tls: tls !== null, mtls: tls?.clientCa != null }, 'grpc listening');
    }
    if (config.udsPath !== null) {
      const target = udsTarget(config.udsPath);
      // NOTE: the socket is served without TLS: it is local and guarded by file permissions.
      await bind(server, target, ServerCredentials.createInsecure());
      socketPath = target.slice('unix://'.length);
      // NOTE: the instant between bind and chmod is safe: connecting to a Unix socket needs write
      // permission on it, and the socket is created with 0777 & ~umask, which under the usual
      // umask (022, 027, 077) grants write to its owner only; the mode is set before the socket is
      // announced. Only under umask 0 or 002 could another user connect in that instant.
      await setSocketMode(socketPath, config.udsMode);
      logger.info({ path: socketPath, mode: `0${config.udsMode.toString(8)}` }, 'uds listening');
    }
  } catch (err) {
    server.forceShutdown();
    if (socketPath !== null) await removeSocket(socketPath);
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    address,
    socketPath,
    close(forceAfterMs = config.shutdownTimeoutSecs * 1000) {
      // Health answers NOT_SERVING from now on and ends open Watches, which would hold tryShutdown.
      health.drain();
      closing ??= new Promise<void>((done) => {
        const force = setTimeout(() => {
          logger.warn({ after_ms: forceAfterMs }, 'grpc calls still in flight at the shutdown deadline; cancelling them');
          server.forceShutdown();
          done();
        }, forceAfterMs);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          done();
        });
      }).then(() => (socketPath !== null ? removeSocket(socketPath) : undefined));
      return closing;
    },
  };
}

/** Gives the socket file its `--uds-mode`; the error names the path and the flag. */
async function setSocketMode(path: string, mode: number): Promise<void> {
  try {
    await chmod(path, mode);
  } catch (err) {
    throw new Error(`--uds-path ${path}: cannot set the socket mode (--uds-mode 0${mode.toString(8)}): ${(err as Error).message}`);
  }
}

/** `bindAsync` as a promise; the error names the address. */
function bind(server: Server, target: string, credentials: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(target, credentials, (err, port) => {
      if (err) reject(new Error(`gRPC cannot listen on ${target}: ${err.message}`));
      else resolve(port);
    });
  });
}
