/**
 * The table of every server option: flag, `SVC_*` variable, kind, default, group and meaning.
 * `config.ts` builds the command line and the frozen `Config` from it, the help text comes
 * from it, and tests walk it to keep code, help and `docs/configuration.md` in agreement.
 * Adding an option: add a row here, a field in `Config`, and a line in the docs.
 */

/** How the raw text of an option is parsed and validated. */
export type FlagKind =
  | { readonly type: 'bool' }
  | { readonly type: 'int'; readonly min: number; readonly max?: number }
  | { readonly type: 'number'; readonly min: number; readonly max: number }
  | { readonly type: 'enum'; readonly choices: readonly string[] }
  | { readonly type: 'text' }
  | { readonly type: 'pattern'; readonly pattern: RegExp; readonly what: string }
  | { readonly type: 'url' }
  | { readonly type: 'address' }
  | { readonly type: 'list' };

/** The groups of `docs/configuration.md` and of `--help`, in display order. */
export const FLAG_GROUPS = [
  'General',
  'Network',
  'Security',
  'Storage',
  'Execution',
  'Audit and metrics',
  'Roles and sync',
  'Signatures',
  'Tenancy',
  'Observability',
] as const;

/** One of `FLAG_GROUPS`. */
export type FlagGroup = (typeof FLAG_GROUPS)[number];

/** One server option. */
export interface FlagDef {
  /** Long flag name without `--`, kebab-case. */
  readonly name: string;
  /** Optional one-letter short flag without `-`. */
  readonly short?: string;
  /** Environment variable: `SVC_` + upper-case name with `-` → `_`. */
  readonly env: string;
  readonly kind: FlagKind;
  /** Default as option text (parsed like user input), or null when unset by default. */
  readonly default: string | null;
  /** How docs and help show the default when `default` is null but something is computed. */
  readonly defaultText?: string;
  readonly group: FlagGroup;
  /** One-sentence meaning, shown in `--help` and the docs. */
  readonly doc: string;
  /** A valid, non-default value: used by the docs examples and by the table-driven tests. */
  readonly example: string;
  /**
   * The value is a file or directory path: in a config file, a relative one resolves against
   * the file's directory (from a flag or a variable it stays relative to the working directory).
   */
  readonly path?: true;
  /**
   * The value is a secret (password, token, key material): `--print-config` shows `***`.
   * test/unit/config/print-config.test.ts fails for a flag whose name suggests a secret without it.
   */
  readonly secret?: true;
}

const BOOL = { type: 'bool' } as const;
const TEXT = { type: 'text' } as const;
const ADDRESS = { type: 'address' } as const;
const PORT = { type: 'int', min: 0, max: 65535 } as const;
const POSITIVE = { type: 'int', min: 1 } as const;
const NON_NEGATIVE = { type: 'int', min: 0 } as const;

/** Kebab-case flag name → its `SVC_*` variable name. */
export function envNameOf(name: string): string {
  return `SVC_${name.toUpperCase().replaceAll('-', '_')}`;
}

/** Kebab-case flag name → camelCase key (`max-versions` → `maxVersions`). */
export function camelOf(name: string): string {
  return name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** Every server option, grouped as in the docs. */
export const FLAGS: readonly FlagDef[] = [
  // General
  {
    name: 'config',
    env: 'SVC_CONFIG',
    kind: TEXT,
    default: null,
    group: 'General',
    doc: 'YAML or JSON config file whose keys are these options in snake_case (max_batch_size: 500); flags and variables beat it.',
    example: './svc.yaml',
    path: true,
  },
  // Network
  {
    name: 'http-addr',
    env: 'SVC_HTTP_ADDR',
    kind: ADDRESS,
    default: '0.0.0.0:8080',
    group: 'Network',
    doc: 'HTTP bind address (host:port; [::1]:8080 for IPv6; port 0 picks a free port).',
    example: '127.0.0.1:9000',
  },
  {
    name: 'port',
    short: 'p',
    env: 'SVC_PORT',
    kind: PORT,
    default: null,
    group: 'Network',
    doc: 'HTTP port; replaces the port of --http-addr.',
    example: '9090',
  },
  {
    name: 'grpc-addr',
    env: 'SVC_GRPC_ADDR',
    kind: ADDRESS,
    default: '0.0.0.0:50051',
    group: 'Network',
    doc: 'gRPC bind address (host:port).',
    example: '127.0.0.1:6000',
  },
  {
    name: 'grpc-port',
    env: 'SVC_GRPC_PORT',
    kind: PORT,
    default: null,
    group: 'Network',
    doc: 'gRPC port; replaces the port of --grpc-addr.',
    example: '6001',
  },
  {
    name: 'uds-path',
    env: 'SVC_UDS_PATH',
    kind: TEXT,
    default: null,
    group: 'Network',
    doc: 'Also serve the gRPC service on this Unix domain socket (removed and re-created at start).',
    example: '/tmp/svc.sock',
    path: true,
  },
  { name: 'disable-http', env: 'SVC_DISABLE_HTTP', kind: BOOL, default: 'false', group: 'Network', doc: 'Do not start the HTTP server.', example: 'true' },
  { name: 'disable-grpc', env: 'SVC_DISABLE_GRPC', kind: BOOL, default: 'false', group: 'Network', doc: 'Do not start the gRPC server.', example: 'true' },
  {
    name: 'disable-http-fast-path',
    env: 'SVC_DISABLE_HTTP_FAST_PATH',
    kind: BOOL,
    default: 'false',
    group: 'Network',
    doc: "Serve execute and eval through node's HTTP request objects only, without the HTTP/1.1 fast path (see docs/performance.md).",
    example: 'true',
  },
  {
    name: 'disable-console',
    env: 'SVC_DISABLE_CONSOLE',
    kind: BOOL,
    default: 'false',
    group: 'Network',
    doc: 'Do not serve the web console at /console/ (see docs/console.md).',
    example: 'true',
  },
  {
    name: 'grpc-tls-cert',
    env: 'SVC_GRPC_TLS_CERT',
    kind: TEXT,
    default: null,
    group: 'Network',
    doc: 'PEM certificate for gRPC TLS (needs --grpc-tls-key).',
    example: '/etc/svc/tls.crt',
    path: true,
  },
  {
    name: 'grpc-tls-key',
    env: 'SVC_GRPC_TLS_KEY',
    kind: TEXT,
    default: null,
    group: 'Network',
    doc: 'PEM private key for gRPC TLS (needs --grpc-tls-cert).',
    example: '/etc/svc/tls.key',
    path: true,
  },
  {
    name: 'http-tls-cert',
    env: 'SVC_HTTP_TLS_CERT',
    kind: TEXT,
    default: null,
    group: 'Network',
    doc: 'PEM certificate: serve HTTPS (HTTP/1.1) instead of HTTP (needs --http-tls-key).',
    example: '/etc/svc/http.crt',
    path: true,
  },
  {
    name: 'http-tls-key',
    env: 'SVC_HTTP_TLS_KEY',
    kind: TEXT,
    default: null,
    group: 'Network',
    doc: 'PEM private key for HTTPS (needs --http-tls-cert).',
    example: '/etc/svc/http.key',
    path: true,
  },
  {
    name: 'tls-client-ca',
    env: 'SVC_TLS_CLIENT_CA',
    kind: TEXT,
    default: null,
    group: 'Network',
    doc: 'PEM CA bundle: require client certificates signed by it on HTTPS and gRPC (mTLS; needs TLS on every TCP listener).',
    example: '/etc/svc/clients-ca.crt',
    path: true,
  },
  {
    name: 'uds-mode',
    env: 'SVC_UDS_MODE',
    kind: { type: 'pattern', pattern: /^0?[0-7]{3}$/, what: 'an octal file mode such as 0600 or 660' },
    default: '0600',
    group: 'Network',
    doc: 'File mode of the Unix socket of --uds-path (octal).',
    example: '0660',
  },
  {
    name: 'max-request-body-bytes',
    env: 'SVC_MAX_REQUEST_BODY_BYTES',
    kind: POSITIVE,
    default: '10485760',
    group: 'Network',
    doc: 'Largest accepted HTTP request body in bytes (larger: 413).',
    example: '1048576',
  },
  {
    name: 'max-response-bytes',
    env: 'SVC_MAX_RESPONSE_BYTES',
    kind: POSITIVE,
    default: '10485760',
    group: 'Network',
    doc: 'Largest answer in bytes, HTTP and gRPC (larger: LIMIT_EXCEEDED, the answer is not sent).',
    example: '1048576',
  },
  {
    name: 'request-timeout-secs',
    env: 'SVC_REQUEST_TIMEOUT_SECS',
    kind: NON_NEGATIVE,
    default: '30',
    group: 'Network',
    doc: 'Time allowed to receive a whole HTTP request, in seconds (408 after it); 0 disables.',
    example: '60',
  },
  {
    name: 'shutdown-timeout-secs',
    env: 'SVC_SHUTDOWN_TIMEOUT_SECS',
    kind: NON_NEGATIVE,
    default: '30',
    group: 'Network',
    doc: 'After SIGTERM/SIGINT, wait this many seconds for in-flight requests.',
    example: '5',
  },
  {
    name: 'debug-mode',
    env: 'SVC_DEBUG_MODE',
    kind: BOOL,
    default: 'false',
    group: 'Network',
    doc: 'Enable CORS for any origin and the debug API endpoints.',
    example: 'true',
  },
  // Security
  {
    name: 'auth-keys-file',
    env: 'SVC_AUTH_KEYS_FILE',
    kind: TEXT,
    default: null,
    group: 'Security',
    doc: 'API keys file (JSON or YAML; made with svc-apikey): turns authentication on; re-read when it changes and on SIGHUP.',
    example: '/etc/svc/keys.json',
    path: true,
  },
  {
    name: 'auth-jwt-jwks-file',
    env: 'SVC_AUTH_JWT_JWKS_FILE',
    kind: TEXT,
    default: null,
    group: 'Security',
    doc: 'Local JWKS file of the keys that sign accepted JWTs (RS256, ES256, EdDSA): turns authentication on.',
    example: '/etc/svc/jwks.json',
    path: true,
  },
  {
    name: 'auth-jwt-issuer',
    env: 'SVC_AUTH_JWT_ISSUER',
    kind: TEXT,
    default: null,
    group: 'Security',
    doc: 'Required `iss` of accepted JWTs (needs --auth-jwt-jwks-file).',
    example: 'https://id.example.com/',
  },
  {
    name: 'auth-jwt-audience',
    env: 'SVC_AUTH_JWT_AUDIENCE',
    kind: TEXT,
    default: null,
    group: 'Security',
    doc: 'Required `aud` of accepted JWTs (needs --auth-jwt-jwks-file).',
    example: 'svc',
  },
  {
    name: 'auth-jwt-role-claim',
    env: 'SVC_AUTH_JWT_ROLE_CLAIM',
    kind: TEXT,
    default: 'svc_role',
    group: 'Security',
    doc: 'JWT claim holding the role (executor, viewer, editor, admin).',
    example: 'role',
  },
  {
    name: 'auth-jwt-tenants-claim',
    env: 'SVC_AUTH_JWT_TENANTS_CLAIM',
    kind: TEXT,
    default: 'svc_tenants',
    group: 'Security',
    doc: 'JWT claim holding the tenants the caller may act for (a list; "*" for all).',
    example: 'tenants',
  },
  {
    name: 'auth-public-metrics',
    env: 'SVC_AUTH_PUBLIC_METRICS',
    kind: BOOL,
    default: 'false',
    group: 'Security',
    doc: 'With authentication on, serve GET /metrics without credentials.',
    example: 'true',
  },
  // Storage
  {
    name: 'rules-dir',
    env: 'SVC_RULES_DIR',
    kind: TEXT,
    default: null,
    group: 'Storage',
    doc: 'Rule persistence directory; without it the service is memory-only.',
    example: './rules',
    path: true,
  },
  {
    name: 'max-versions',
    env: 'SVC_MAX_VERSIONS',
    kind: POSITIVE,
    default: '10',
    group: 'Storage',
    doc: 'History versions kept per rule; the oldest are removed first.',
    example: '20',
  },
  // Execution
  {
    name: 'execution-timeout-ms',
    env: 'SVC_EXECUTION_TIMEOUT_MS',
    kind: NON_NEGATIVE,
    default: '5000',
    group: 'Execution',
    doc: "Default execution timeout in milliseconds (a ruleset's config.timeout_ms overrides it); 0 disables.",
    example: '1000',
  },
  {
    name: 'max-steps',
    env: 'SVC_MAX_STEPS',
    kind: POSITIVE,
    default: '10000',
    group: 'Execution',
    doc: 'Most steps one execution may take (ends runaway cycles with a 500).',
    example: '500',
  },
  {
    name: 'max-eval-ops',
    env: 'SVC_MAX_EVAL_OPS',
    kind: POSITIVE,
    default: '10000000',
    group: 'Execution',
    doc: 'Work budget of one execution or /eval: element-wise operations (deep equality, in, contains, sum, string scans...); more is LIMIT_EXCEEDED.',
    example: '1000000',
  },
  {
    name: 'max-value-bytes',
    env: 'SVC_MAX_VALUE_BYTES',
    kind: POSITIVE,
    default: '1048576',
    group: 'Execution',
    doc: 'Largest string an evaluation may build, in UTF-8 bytes; larger is LIMIT_EXCEEDED.',
    example: '65536',
  },
  {
    name: 'max-data-bytes',
    env: 'SVC_MAX_DATA_BYTES',
    kind: POSITIVE,
    default: '10485760',
    group: 'Execution',
    doc: 'Largest reference dataset (PUT /api/v1/data/:name) in bytes of its compact JSON; larger is 413 PAYLOAD_TOO_LARGE.',
    example: '1048576',
  },
  {
    name: 'max-batch-size',
    env: 'SVC_MAX_BATCH_SIZE',
    kind: POSITIVE,
    default: '10000',
    group: 'Execution',
    doc: 'Most inputs in one batch execution request.',
    example: '100',
  },
  // Audit and metrics
  {
    name: 'audit-dir',
    env: 'SVC_AUDIT_DIR',
    kind: TEXT,
    default: null,
    group: 'Audit and metrics',
    doc: 'Also append audit lines to audit-YYYY-MM-DD.jsonl files in this directory (created if missing).',
    example: './audit',
    path: true,
  },
  {
    name: 'audit-sample-rate',
    env: 'SVC_AUDIT_SAMPLE_RATE',
    kind: { type: 'number', min: 0, max: 100 },
    default: '10',
    group: 'Audit and metrics',
    doc: 'Percent of executions written as rule_executed audit events (0-100; changeable at run time).',
    example: '50',
  },
  {
    name: 'decision-log',
    env: 'SVC_DECISION_LOG',
    kind: TEXT,
    default: null,
    group: 'Audit and metrics',
    doc: 'Write a decision record (input, code, output, path; config.mask paths masked) per sampled execution to decisions-YYYY-MM-DD.jsonl files in this directory (created if missing).',
    example: './decisions',
  },
  {
    name: 'decision-log-sample-rate',
    env: 'SVC_DECISION_LOG_SAMPLE_RATE',
    kind: { type: 'number', min: 0, max: 100 },
    default: '100',
    group: 'Audit and metrics',
    doc: 'Percent of executions written as decision records with --decision-log (0-100).',
    example: '10',
  },
  {
    name: 'decision-log-stream',
    env: 'SVC_DECISION_LOG_STREAM',
    kind: BOOL,
    default: 'false',
    group: 'Audit and metrics',
    doc: 'Also publish each decision record to the JetStream stream svc-decisions over the --sync-url connection (requires --decision-log and --sync-url).',
    example: 'true',
  },
  {
    name: 'metrics-enabled',
    env: 'SVC_METRICS_ENABLED',
    kind: BOOL,
    default: 'true',
    group: 'Audit and metrics',
    doc: 'Serve GET /metrics (turn off with --no-metrics-enabled or --metrics-enabled=false).',
    example: 'false',
  },
  // Roles and sync
  {
    name: 'role',
    env: 'SVC_ROLE',
    kind: { type: 'enum', choices: ['standalone', 'writer', 'reader'] },
    default: 'standalone',
    group: 'Roles and sync',
    doc: 'Instance role: standalone, writer or reader (a reader rejects writes with 409).',
    example: 'reader',
  },
  {
    name: 'writer-addr',
    env: 'SVC_WRITER_ADDR',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'Writer address that a reader reports in its 409 answers.',
    example: 'http://writer:8080',
  },
  {
    name: 'watch-rules',
    env: 'SVC_WATCH_RULES',
    kind: BOOL,
    default: 'false',
    group: 'Roles and sync',
    doc: 'Watch --rules-dir and hot-reload changed rules (200 ms debounce); requires --rules-dir.',
    example: 'true',
  },
  {
    name: 'watch-poll',
    env: 'SVC_WATCH_POLL',
    kind: BOOL,
    default: 'false',
    group: 'Roles and sync',
    doc: 'Make the watcher poll instead of using native file events (NFS, tests).',
    example: 'true',
  },
  {
    name: 'watch-poll-interval-ms',
    env: 'SVC_WATCH_POLL_INTERVAL_MS',
    kind: POSITIVE,
    default: '30000',
    group: 'Roles and sync',
    doc: 'Polling interval of the watcher in milliseconds (when polling).',
    example: '500',
  },
  {
    name: 'sync-url',
    env: 'SVC_SYNC_URL',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'Message broker (NATS JetStream) URL for rule sync; sync is off when unset.',
    example: 'nats://127.0.0.1:4222',
  },
  {
    name: 'sync-subject-prefix',
    env: 'SVC_SYNC_SUBJECT_PREFIX',
    kind: { type: 'pattern', pattern: /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, what: 'dot-separated tokens of letters, digits, _ and -' },
    default: 'svc.rules',
    group: 'Roles and sync',
    doc: 'Subject prefix of sync events ({prefix}.{tenant}.{name}).',
    example: 'prod.rules',
  },
  {
    name: 'instance-id',
    env: 'SVC_INSTANCE_ID',
    kind: { type: 'pattern', pattern: /^[A-Za-z0-9_-]{1,64}$/, what: '1-64 letters, digits, _ or -' },
    default: null,
    defaultText: 'random (svc- and 12 hex digits)',
    group: 'Roles and sync',
    doc: 'Unique instance id, used for the durable consumer name and echo suppression.',
    example: 'reader-1',
  },
  {
    name: 'republish-interval-secs',
    env: 'SVC_REPUBLISH_INTERVAL_SECS',
    kind: NON_NEGATIVE,
    default: '300',
    group: 'Roles and sync',
    doc: 'A writer re-publishes its full rule state this often, in seconds; 0 disables.',
    example: '60',
  },
  {
    name: 'sync-token',
    env: 'SVC_SYNC_TOKEN',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'Token for a NATS server that requires token authentication.',
    example: 's3cr3t-token',
    secret: true,
  },
  {
    name: 'sync-user',
    env: 'SVC_SYNC_USER',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'User name for a NATS server that requires user/password authentication (needs --sync-password).',
    example: 'svc',
  },
  {
    name: 'sync-password',
    env: 'SVC_SYNC_PASSWORD',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'Password for --sync-user (prefer the variable: flags show in the process list).',
    example: 's3cr3t-password',
    secret: true,
  },
  {
    name: 'sync-creds-file',
    env: 'SVC_SYNC_CREDS_FILE',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'NATS credentials file (user JWT and NKey seed) for a server in decentralized-auth mode.',
    example: '/etc/svc/nats.creds',
    path: true,
  },
  {
    name: 'sync-tls-ca',
    env: 'SVC_SYNC_TLS_CA',
    kind: TEXT,
    default: null,
    group: 'Roles and sync',
    doc: 'PEM CA bundle that signs the NATS server certificate: connect with TLS.',
    example: '/etc/svc/nats-ca.crt',
    path: true,
  },
  // Signatures
  {
    name: 'signature-enabled',
    env: 'SVC_SIGNATURE_ENABLED',
    kind: BOOL,
    default: 'false',
    group: 'Signatures',
    doc: 'Verify Ed25519 rule signatures against the trusted keys.',
    example: 'true',
  },
  {
    name: 'signature-require',
    env: 'SVC_SIGNATURE_REQUIRE',
    kind: BOOL,
    default: 'false',
    group: 'Signatures',
    doc: 'Reject unsigned rules on API updates; requires --signature-enabled.',
    example: 'true',
  },
  {
    name: 'signature-trusted-keys',
    env: 'SVC_SIGNATURE_TRUSTED_KEYS',
    kind: { type: 'list' },
    default: null,
    group: 'Signatures',
    doc: 'Comma-separated base64 Ed25519 public keys that are trusted.',
    example: 'a2V5MQ==,a2V5Mg==',
  },
  {
    name: 'signature-trusted-keys-file',
    env: 'SVC_SIGNATURE_TRUSTED_KEYS_FILE',
    kind: TEXT,
    default: null,
    group: 'Signatures',
    doc: 'File with one trusted base64 public key per line (# starts a comment).',
    example: './trusted.keys',
    path: true,
  },
  {
    name: 'signature-allow-unsigned-local',
    env: 'SVC_SIGNATURE_ALLOW_UNSIGNED_LOCAL',
    kind: BOOL,
    default: 'true',
    group: 'Signatures',
    doc: 'Accept unsigned rule files from --rules-dir at start even when signatures are required.',
    example: 'false',
  },
  // Tenancy
  {
    name: 'multi-tenancy-enabled',
    env: 'SVC_MULTI_TENANCY_ENABLED',
    kind: BOOL,
    default: 'false',
    group: 'Tenancy',
    doc: 'Turn on multi-tenancy (tenant from X-Tenant-ID; unknown tenants get 404).',
    example: 'true',
  },
  // Observability
  {
    name: 'log-level',
    env: 'SVC_LOG_LEVEL',
    kind: { type: 'enum', choices: ['error', 'warn', 'info', 'debug'] },
    default: 'info',
    group: 'Observability',
    doc: 'Server log verbosity (on stderr): error, warn, info or debug.',
    example: 'debug',
  },
  {
    name: 'log-format',
    env: 'SVC_LOG_FORMAT',
    kind: { type: 'enum', choices: ['auto', 'json', 'pretty'] },
    default: 'auto',
    group: 'Observability',
    doc: 'Server log format: json (JSON lines), pretty (a start-up banner and one readable line per entry), or auto (pretty when stderr is a terminal).',
    example: 'pretty',
  },
  {
    name: 'service-name',
    env: 'SVC_SERVICE_NAME',
    kind: TEXT,
    default: 'svc-server',
    group: 'Observability',
    doc: 'Service name in exported traces.',
    example: 'rules-eu',
  },
  {
    name: 'otlp-endpoint',
    env: 'SVC_OTLP_ENDPOINT',
    kind: { type: 'url' },
    default: null,
    group: 'Observability',
    doc: 'OTLP/HTTP (protobuf) trace export endpoint; trace export is off when unset.',
    example: 'http://127.0.0.1:4318',
  },
];

const FLAGS_BY_NAME: ReadonlyMap<string, FlagDef> = new Map(FLAGS.map((f) => [f.name, f]));

/** Looks up a definition by long name (throws for an unknown name: a programming error). */
export function flagDef(name: string): FlagDef {
  const def = FLAGS_BY_NAME.get(name);
  if (def === undefined) throw new Error(`no such flag definition: ${name}`);
  return def;
}
