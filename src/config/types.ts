/** The shape of the parsed server configuration (built by `parseConfig` in config.ts). */
import type { Address } from './values.js';

/** Server log verbosity. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** Server log format: `auto` is `pretty` when stderr is a terminal, else `json`. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** Instance role (SPEC "Instance roles"). */
export type Role = 'standalone' | 'writer' | 'reader';

/** The whole server configuration; see docs/configuration.md for each field's flag. */
export interface Config {
  // General
  /** The config file the values were read from (`--config`, as given), or null. */
  readonly configFile: string | null;
  // Network
  /** HTTP bind address, with `-p/--port` already applied. */
  readonly httpAddr: Address;
  /** gRPC bind address, with `--grpc-port` already applied. */
  readonly grpcAddr: Address;
  /** Unix socket for the gRPC service, or null. */
  readonly udsPath: string | null;
  readonly disableHttp: boolean;
  readonly disableGrpc: boolean;
  /** `--disable-console`: no `/console/` routes. */
  readonly disableConsole: boolean;
  /** `--disable-http-fast-path`: the hot routes through node's request objects only. */
  readonly disableHttpFastPath: boolean;
  /** PEM certificate and key for gRPC TLS: both set or both null. */
  readonly grpcTlsCert: string | null;
  readonly grpcTlsKey: string | null;
  /** PEM certificate and key for HTTPS: both set or both null. */
  readonly httpTlsCert: string | null;
  readonly httpTlsKey: string | null;
  /** PEM CA bundle of client certificates (mTLS on HTTPS and gRPC), or null. */
  readonly tlsClientCa: string | null;
  /** File mode of the Unix socket (0o600 by default). */
  readonly udsMode: number;
  readonly maxRequestBodyBytes: number;
  /** Largest answer (HTTP body, gRPC message text) in bytes. */
  readonly maxResponseBytes: number;
  /** 0 disables the request timeout. */
  readonly requestTimeoutSecs: number;
  readonly shutdownTimeoutSecs: number;
  readonly debugMode: boolean;
  // Security (EXTENSIONS.md 1); authentication is on when a keys file or a JWKS file is set.
  readonly authKeysFile: string | null;
  readonly authJwtJwksFile: string | null;
  readonly authJwtIssuer: string | null;
  readonly authJwtAudience: string | null;
  readonly authJwtRoleClaim: string;
  readonly authJwtTenantsClaim: string;
  readonly authPublicMetrics: boolean;
  // Storage
  /** Persistence directory; null means memory-only. */
  readonly rulesDir: string | null;
  readonly maxVersions: number;
  // Execution
  /** Default execution timeout; 0 disables. */
  readonly executionTimeoutMs: number;
  readonly maxSteps: number;
  /** Work budget of one execution or /eval: element-wise operations (EXTENSIONS.md 6). */
  readonly maxEvalOps: number;
  /** Largest string an evaluation may build, in UTF-8 bytes (EXTENSIONS.md 6). */
  readonly maxValueBytes: number;
  /** Largest reference dataset in bytes of its compact JSON (EXTENSIONS.md 3 "Reference data"). */
  readonly maxDataBytes: number;
  readonly maxBatchSize: number;
  // Audit and metrics
  readonly auditDir: string | null;
  /** Initial execution audit sample rate, percent 0-100. */
  readonly auditSampleRate: number;
  /** Decision records directory (EXTENSIONS.md 4); null: off. */
  readonly decisionLog: string | null;
  /** Percent of executions recorded, 0-100. */
  readonly decisionLogSampleRate: number;
  /** Also publish records to the JetStream stream `svc-decisions`; only with `decisionLog` and `syncUrl`. */
  readonly decisionLogStream: boolean;
  readonly metricsEnabled: boolean;
  // Roles and sync
  readonly role: Role;
  readonly writerAddr: string | null;
  /** True only together with a `rulesDir`. */
  readonly watchRules: boolean;
  readonly watchPoll: boolean;
  readonly watchPollIntervalMs: number;
  readonly syncUrl: string | null;
  readonly syncSubjectPrefix: string;
  /** Given, or `svc-` + 12 random hex digits. */
  readonly instanceId: string;
  /** 0 disables periodic re-publishing. */
  readonly republishIntervalSecs: number;
  /** Broker credentials: at most one of token, user/password, creds file. */
  readonly syncToken: string | null;
  readonly syncUser: string | null;
  readonly syncPassword: string | null;
  readonly syncCredsFile: string | null;
  readonly syncTlsCa: string | null;
  // Signatures
  readonly signatureEnabled: boolean;
  /** True only together with `signatureEnabled`. */
  readonly signatureRequire: boolean;
  /** Base64 public keys from `--signature-trusted-keys` (not yet decoded or checked). */
  readonly signatureTrustedKeys: readonly string[];
  readonly signatureTrustedKeysFile: string | null;
  readonly signatureAllowUnsignedLocal: boolean;
  // Tenancy
  readonly multiTenancyEnabled: boolean;
  // Observability
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly serviceName: string;
  readonly otlpEndpoint: string | null;
}
