import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, ConfigExit, helpText, parseConfig, type Config } from '../../../src/config/index.js';

const FIXED_BYTES = (size: number): Uint8Array => Uint8Array.from({ length: size }, (_v, i) => i + 1);

function parse(argv: string[], env: Record<string, string | undefined> = {}): Config {
  return parseConfig(argv, env, { version: '9.9.9', randomBytes: FIXED_BYTES });
}

function fails(argv: string[], env: Record<string, string | undefined>, message: string): void {
  assert.throws(
    () => parse(argv, env),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
      assert.equal(err.message, message);
      return true;
    },
  );
}

const DEFAULTS: Config = {
  configFile: null,
  httpAddr: { host: '0.0.0.0', port: 8080 },
  grpcAddr: { host: '0.0.0.0', port: 50051 },
  udsPath: null,
  disableHttp: false,
  disableGrpc: false,
  disableConsole: false,
  disableHttpFastPath: false,
  grpcTlsCert: null,
  grpcTlsKey: null,
  httpTlsCert: null,
  httpTlsKey: null,
  tlsClientCa: null,
  udsMode: 0o600,
  maxRequestBodyBytes: 10485760,
  maxResponseBytes: 10485760,
  requestTimeoutSecs: 30,
  shutdownTimeoutSecs: 30,
  debugMode: false,
  authKeysFile: null,
  authJwtJwksFile: null,
  authJwtIssuer: null,
  authJwtAudience: null,
  authJwtRoleClaim: 'svc_role',
  authJwtTenantsClaim: 'svc_tenants',
  authPublicMetrics: false,
  rulesDir: null,
  maxVersions: 10,
  executionTimeoutMs: 5000,
  maxSteps: 10000,
  maxEvalOps: 10_000_000,
  maxValueBytes: 1_048_576,
  maxDataBytes: 10_485_760,
  maxBatchSize: 10000,
  auditDir: null,
  auditSampleRate: 10,
  decisionLog: null,
  decisionLogSampleRate: 100,
  decisionLogStream: false,
  metricsEnabled: true,
  role: 'standalone',
  writerAddr: null,
  watchRules: false,
  watchPoll: false,
  watchPollIntervalMs: 30000,
  syncUrl: null,
  syncSubjectPrefix: 'svc.rules',
  instanceId: 'svc-010203040506',
  republishIntervalSecs: 300,
  syncToken: null,
  syncUser: null,
  syncPassword: null,
  syncCredsFile: null,
  syncTlsCa: null,
  signatureEnabled: false,
  signatureRequire: false,
  signatureTrustedKeys: [],
  signatureTrustedKeysFile: null,
  signatureAllowUnsignedLocal: true,
  multiTenancyEnabled: false,
  logLevel: 'info',
  logFormat: 'auto',
  serviceName: 'svc-server',
  otlpEndpoint: null,
};

test('no flags and no env give the documented defaults', () => {
  assert.deepEqual(parse([]), DEFAULTS);
});

test('the result is deep-frozen', () => {
  const config = parse(['--signature-trusted-keys', 'a,b']);
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.httpAddr));
  assert.ok(Object.isFrozen(config.grpcAddr));
  assert.ok(Object.isFrozen(config.signatureTrustedKeys));
  assert.throws(() => {
    (config as { maxVersions: number }).maxVersions = 1;
  }, TypeError);
  assert.throws(() => {
    (config.httpAddr as { port: number }).port = 1;
  }, TypeError);
  assert.throws(() => (config.signatureTrustedKeys as string[]).push('c'), TypeError);
});

test('flags set values (one of each kind)', () => {
  const c = parse([
    '--http-addr',
    '127.0.0.1:0',
    '--grpc-addr=[::1]:6000',
    '--uds-path',
    '/tmp/s.sock',
    '--rules-dir',
    './rules',
    '--max-versions',
    '3',
    '--audit-sample-rate',
    '12.5',
    '--role',
    'writer',
    '--log-level',
    'debug',
    '--signature-trusted-keys',
    'k1, k2',
    '--otlp-endpoint',
    'http://127.0.0.1:4318',
    '--execution-timeout-ms',
    '0',
  ]);
  assert.deepEqual(c.httpAddr, { host: '127.0.0.1', port: 0 });
  assert.deepEqual(c.grpcAddr, { host: '::1', port: 6000 });
  assert.equal(c.udsPath, '/tmp/s.sock');
  assert.equal(c.rulesDir, './rules');
  assert.equal(c.maxVersions, 3);
  assert.equal(c.auditSampleRate, 12.5);
  assert.equal(c.role, 'writer');
  assert.equal(c.logLevel, 'debug');
  assert.deepEqual(c.signatureTrustedKeys, ['k1', 'k2']);
  assert.equal(c.otlpEndpoint, 'http://127.0.0.1:4318');
  assert.equal(c.executionTimeoutMs, 0);
});

test('env variables set values (one of each kind)', () => {
  const c = parse([], {
    SVC_HTTP_ADDR: '127.0.0.1:0',
    SVC_RULES_DIR: './rules',
    SVC_MAX_VERSIONS: '3',
    SVC_AUDIT_SAMPLE_RATE: '0',
    SVC_ROLE: 'READER',
    SVC_METRICS_ENABLED: 'no',
    SVC_SIGNATURE_TRUSTED_KEYS: 'k1,k2',
  });
  assert.deepEqual(c.httpAddr, { host: '127.0.0.1', port: 0 });
  assert.equal(c.rulesDir, './rules');
  assert.equal(c.maxVersions, 3);
  assert.equal(c.auditSampleRate, 0);
  assert.equal(c.role, 'reader');
  assert.equal(c.metricsEnabled, false);
  assert.deepEqual(c.signatureTrustedKeys, ['k1', 'k2']);
});

test('precedence: flag beats env beats default', () => {
  assert.equal(parse([]).maxVersions, 10);
  assert.equal(parse([], { SVC_MAX_VERSIONS: '4' }).maxVersions, 4);
  assert.equal(parse(['--max-versions', '5'], { SVC_MAX_VERSIONS: '4' }).maxVersions, 5);
  assert.equal(parse(['--role', 'writer'], { SVC_ROLE: 'reader' }).role, 'writer');
  assert.equal(parse(['--rules-dir', 'a'], { SVC_RULES_DIR: 'b' }).rulesDir, 'a');
  assert.equal(parse([], { SVC_RULES_DIR: 'b' }).rulesDir, 'b');
  assert.equal(parse(['--metrics-enabled'], { SVC_METRICS_ENABLED: 'false' }).metricsEnabled, true);
  assert.equal(parse(['--no-metrics-enabled'], { SVC_METRICS_ENABLED: 'true' }).metricsEnabled, false);
});

test('an env value overridden by a flag is not validated; alone it is', () => {
  assert.equal(parse(['--max-versions', '5'], { SVC_MAX_VERSIONS: 'abc' }).maxVersions, 5);
  fails([], { SVC_MAX_VERSIONS: 'abc' }, 'SVC_MAX_VERSIONS must be a positive integer, got "abc"');
});

test('an empty env variable counts as unset', () => {
  assert.deepEqual(parse([], { SVC_RULES_DIR: '', SVC_MAX_VERSIONS: '', SVC_METRICS_ENABLED: '' }), DEFAULTS);
});

test('process.env is never read (only the env argument)', () => {
  const saved = process.env.SVC_MAX_VERSIONS;
  process.env.SVC_MAX_VERSIONS = '7';
  try {
    assert.equal(parse([]).maxVersions, 10);
    assert.equal(parse([], { SVC_MAX_VERSIONS: '2' }).maxVersions, 2);
  } finally {
    if (saved === undefined) delete process.env.SVC_MAX_VERSIONS;
    else process.env.SVC_MAX_VERSIONS = saved;
  }
});

test('booleans from flags: bare, =value, separate value, --no-', () => {
  const cases: Array<[string[], boolean]> = [
    [['--debug-mode'], true],
    [['--debug-mode=true'], true],
    [['--debug-mode', 'true'], true],
    [['--debug-mode=1'], true],
    [['--debug-mode', 'yes'], true],
    [['--debug-mode=false'], false],
    [['--debug-mode', 'false'], false],
    [['--debug-mode=0'], false],
    [['--debug-mode', 'NO'], false],
    [['--no-debug-mode'], false],
    [['--debug-mode', '--no-debug-mode'], false],
    [['--no-debug-mode', '--debug-mode'], true],
  ];
  for (const [argv, expected] of cases) assert.equal(parse(argv).debugMode, expected, argv.join(' '));
});

test('a default-true boolean can be turned off from the command line', () => {
  assert.equal(parse(['--no-metrics-enabled']).metricsEnabled, false);
  assert.equal(parse(['--metrics-enabled=false']).metricsEnabled, false);
  assert.equal(parse(['--metrics-enabled', 'false']).metricsEnabled, false);
  assert.equal(parse(['--no-signature-allow-unsigned-local']).signatureAllowUnsignedLocal, false);
});

test('a bare boolean flag does not swallow the next option', () => {
  const c = parse(['--debug-mode', '--max-versions', '2']);
  assert.equal(c.debugMode, true);
  assert.equal(c.maxVersions, 2);
});

test('booleans from env: true/false/1/0/yes/no', () => {
  for (const [text, expected] of [
    ['true', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['0', false],
    ['no', false],
  ] as const) {
    assert.equal(parse([], { SVC_DEBUG_MODE: text }).debugMode, expected, text);
    assert.equal(parse([], { SVC_METRICS_ENABLED: text }).metricsEnabled, expected, text);
  }
});

test('-p/--port replaces the port of --http-addr', () => {
  assert.deepEqual(parse(['-p', '9000']).httpAddr, { host: '0.0.0.0', port: 9000 });
  assert.deepEqual(parse(['-p9001']).httpAddr, { host: '0.0.0.0', port: 9001 });
  assert.deepEqual(parse(['--port', '0']).httpAddr, { host: '0.0.0.0', port: 0 });
  assert.deepEqual(parse(['--http-addr', '127.0.0.1:1', '-p', '2']).httpAddr, { host: '127.0.0.1', port: 2 });
  assert.deepEqual(parse(['-p', '2', '--http-addr', '127.0.0.1:1']).httpAddr, { host: '127.0.0.1', port: 2 });
  assert.deepEqual(parse([], { SVC_PORT: '7000' }).httpAddr, { host: '0.0.0.0', port: 7000 });
  assert.deepEqual(parse([], { SVC_HTTP_ADDR: '10.0.0.1:1', SVC_PORT: '7000' }).httpAddr, { host: '10.0.0.1', port: 7000 });
  assert.deepEqual(parse(['-p', '8000'], { SVC_HTTP_ADDR: '10.0.0.1:1' }).httpAddr, { host: '10.0.0.1', port: 8000 });
});

test('an --http-addr flag beats an SVC_PORT variable (flag beats env)', () => {
  assert.deepEqual(parse(['--http-addr', '127.0.0.1:1'], { SVC_PORT: '7000' }).httpAddr, { host: '127.0.0.1', port: 1 });
});

test('--grpc-port replaces the port of --grpc-addr, same rules', () => {
  assert.deepEqual(parse(['--grpc-port', '6000']).grpcAddr, { host: '0.0.0.0', port: 6000 });
  assert.deepEqual(parse(['--grpc-addr', '127.0.0.1:1', '--grpc-port', '2']).grpcAddr, { host: '127.0.0.1', port: 2 });
  assert.deepEqual(parse([], { SVC_GRPC_PORT: '6001' }).grpcAddr, { host: '0.0.0.0', port: 6001 });
  assert.deepEqual(parse(['--grpc-addr', '127.0.0.1:1'], { SVC_GRPC_PORT: '6001' }).grpcAddr, { host: '127.0.0.1', port: 1 });
  assert.deepEqual(parse(['-p', '1']).grpcAddr, DEFAULTS.grpcAddr);
});

test('value errors name the flag or the variable they came from', () => {
  fails(['--max-versions', 'abc'], {}, '--max-versions must be a positive integer, got "abc"');
  fails(['--max-versions', '0'], {}, '--max-versions must be a positive integer, got "0"');
  fails([], { SVC_MAX_VERSIONS: '0' }, 'SVC_MAX_VERSIONS must be a positive integer, got "0"');
  fails(['--shutdown-timeout-secs', '-1'], {}, '--shutdown-timeout-secs must be a non-negative integer, got "-1"');
  fails(['--audit-sample-rate', '101'], {}, '--audit-sample-rate must be a number from 0 to 100, got "101"');
  fails([], { SVC_AUDIT_SAMPLE_RATE: 'ten' }, 'SVC_AUDIT_SAMPLE_RATE must be a number from 0 to 100, got "ten"');
  fails(['--role', 'boss'], {}, '--role must be one of standalone, writer, reader, got "boss"');
  fails([], { SVC_ROLE: 'boss' }, 'SVC_ROLE must be one of standalone, writer, reader, got "boss"');
  fails(['--log-level', 'verbose'], {}, '--log-level must be one of error, warn, info, debug, got "verbose"');
  fails(['--http-addr', '8080'], {}, '--http-addr must be host:port with a port from 0 to 65535 (IPv6 as [::1]:8080), got "8080"');
  fails([], { SVC_GRPC_ADDR: 'x:99999' }, 'SVC_GRPC_ADDR must be host:port with a port from 0 to 65535 (IPv6 as [::1]:8080), got "x:99999"');
  fails(['-p', '70000'], {}, '--port must be an integer from 0 to 65535, got "70000"');
  fails([], { SVC_PORT: 'http' }, 'SVC_PORT must be an integer from 0 to 65535, got "http"');
  fails(['--debug-mode', 'maybe'], {}, '--debug-mode must be a boolean (true, false, 1, 0, yes, no), got "maybe"');
  fails([], { SVC_METRICS_ENABLED: 'on' }, 'SVC_METRICS_ENABLED must be a boolean (true, false, 1, 0, yes, no), got "on"');
  fails(['--rules-dir', ''], {}, '--rules-dir must not be empty');
  fails(['--instance-id', 'has space'], {}, '--instance-id must be 1-64 letters, digits, _ or -, got "has space"');
  fails(['--sync-subject-prefix', 'a..b'], {}, '--sync-subject-prefix must be dot-separated tokens of letters, digits, _ and -, got "a..b"');
  fails(['--otlp-endpoint', 'collector:4318'], {}, '--otlp-endpoint must be an http:// or https:// URL, got "collector:4318"');
});

test('--watch-rules requires --rules-dir', () => {
  fails(['--watch-rules'], {}, '--watch-rules requires --rules-dir (or SVC_RULES_DIR)');
  fails([], { SVC_WATCH_RULES: 'true' }, 'SVC_WATCH_RULES requires --rules-dir (or SVC_RULES_DIR)');
  assert.equal(parse(['--watch-rules', '--rules-dir', 'r']).watchRules, true);
  assert.equal(parse(['--watch-rules'], { SVC_RULES_DIR: 'r' }).watchRules, true);
  assert.equal(parse(['--watch-rules=false']).watchRules, false);
});

test('--grpc-tls-cert and --grpc-tls-key come together or not at all', () => {
  fails(['--grpc-tls-cert', 'c.pem'], {}, '--grpc-tls-cert requires --grpc-tls-key (or SVC_GRPC_TLS_KEY): give both or neither');
  fails([], { SVC_GRPC_TLS_KEY: 'k.pem' }, 'SVC_GRPC_TLS_KEY requires --grpc-tls-cert (or SVC_GRPC_TLS_CERT): give both or neither');
  const c = parse(['--grpc-tls-cert', 'c.pem'], { SVC_GRPC_TLS_KEY: 'k.pem' });
  assert.equal(c.grpcTlsCert, 'c.pem');
  assert.equal(c.grpcTlsKey, 'k.pem');
});

test('HTTPS certificate and key, broker user and password: both or neither', () => {
  fails(['--http-tls-key', 'k.pem'], {}, '--http-tls-key requires --http-tls-cert (or SVC_HTTP_TLS_CERT): give both or neither');
  fails([], { SVC_SYNC_USER: 'u' }, 'SVC_SYNC_USER requires --sync-password (or SVC_SYNC_PASSWORD): give both or neither');
  const c = parse(['--http-tls-cert', 'c.pem', '--http-tls-key', 'k.pem', '--sync-user', 'u'], { SVC_SYNC_PASSWORD: 'p' });
  assert.deepEqual([c.httpTlsCert, c.httpTlsKey, c.syncUser, c.syncPassword], ['c.pem', 'k.pem', 'u', 'p']);
});

test('--tls-client-ca needs TLS on every enabled TCP listener', () => {
  fails(['--tls-client-ca', 'ca.pem'], {}, '--tls-client-ca requires HTTPS (--http-tls-cert and --http-tls-key) unless --disable-http');
  const https = ['--http-tls-cert', 'c.pem', '--http-tls-key', 'k.pem'];
  fails([...https, '--tls-client-ca', 'ca.pem'], {}, '--tls-client-ca requires gRPC TLS (--grpc-tls-cert and --grpc-tls-key) unless --disable-grpc');
  assert.equal(parse([...https, '--grpc-tls-cert', 'g.pem', '--grpc-tls-key', 'gk.pem', '--tls-client-ca', 'ca.pem']).tlsClientCa, 'ca.pem');
  assert.equal(parse(['--disable-http', '--disable-grpc'], { SVC_TLS_CLIENT_CA: 'ca.pem' }).tlsClientCa, 'ca.pem');
});

test('one way to authenticate to the broker', () => {
  fails(['--sync-token', 't', '--sync-creds-file', 'c'], {}, '--sync-token and --sync-creds-file: give one way to authenticate to the broker');
  fails(['--sync-user', 'u', '--sync-password', 'p'], { SVC_SYNC_TOKEN: 't' }, 'SVC_SYNC_TOKEN and --sync-user: give one way to authenticate to the broker');
});

test('JWT issuer and audience need a JWKS file; --uds-mode is octal', () => {
  fails(['--auth-jwt-issuer', 'i'], {}, '--auth-jwt-issuer requires --auth-jwt-jwks-file (or SVC_AUTH_JWT_JWKS_FILE)');
  fails([], { SVC_AUTH_JWT_AUDIENCE: 'a' }, 'SVC_AUTH_JWT_AUDIENCE requires --auth-jwt-jwks-file (or SVC_AUTH_JWT_JWKS_FILE)');
  assert.equal(parse(['--uds-mode', '660']).udsMode, 0o660);
  assert.equal(parse(['--uds-mode', '0600']).udsMode, 0o600);
  assert.throws(() => parse(['--uds-mode', '0800']), /--uds-mode must be an octal file mode/);
});

test('--signature-require requires --signature-enabled', () => {
  fails(['--signature-require'], {}, '--signature-require requires --signature-enabled (or SVC_SIGNATURE_ENABLED)');
  fails([], { SVC_SIGNATURE_REQUIRE: '1' }, 'SVC_SIGNATURE_REQUIRE requires --signature-enabled (or SVC_SIGNATURE_ENABLED)');
  const c = parse(['--signature-require', '--signature-enabled']);
  assert.equal(c.signatureRequire, true);
  assert.equal(c.signatureEnabled, true);
});

test('command-line errors: unknown flag, missing value, stray argument', () => {
  fails(['--foo'], {}, "unknown option '--foo'");
  fails(['--rule-dir', 'x'], {}, "unknown option '--rule-dir'\n(Did you mean --rules-dir?)");
  fails(['--rules-dir'], {}, "option '--rules-dir <path>' argument missing");
  fails(['serve'], {}, 'unexpected argument "serve": svc-server takes only options');
});

test('--help and -h throw ConfigExit with the help text and exit code 0', () => {
  for (const flag of ['--help', '-h']) {
    assert.throws(
      () => parse([flag]),
      (err: unknown) => {
        assert.ok(err instanceof ConfigExit);
        assert.equal(err.exitCode, 0);
        assert.match(err.output, /^Usage: svc-server \[options\]/);
        assert.match(err.output, /--rules-dir <path>/);
        return true;
      },
    );
  }
  assert.equal(
    helpText('9.9.9'),
    (() => {
      try {
        parse(['--help']);
      } catch (err) {
        return (err as ConfigExit).output;
      }
      return '';
    })(),
  );
});

test('--version and -V throw ConfigExit with the version', () => {
  for (const flag of ['--version', '-V']) {
    assert.throws(
      () => parse([flag]),
      (err: unknown) => err instanceof ConfigExit && err.output === '9.9.9\n' && err.exitCode === 0,
    );
  }
});

test('instance id: given, or svc- and 12 random hex digits', () => {
  assert.equal(parse(['--instance-id', 'reader-1']).instanceId, 'reader-1');
  assert.equal(parse([]).instanceId, 'svc-010203040506');
  const a = parseConfig([], {}).instanceId;
  const b = parseConfig([], {}).instanceId;
  assert.match(a, /^svc-[0-9a-f]{12}$/);
  assert.notEqual(a, b);
});

test('the same flag given twice: the last one wins', () => {
  assert.equal(parse(['--max-versions', '2', '--max-versions', '3']).maxVersions, 3);
});
