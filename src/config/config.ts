/**
 * `parseConfig(argv, env)`: the server configuration, parsed once into a deep-frozen object.
 * Each option comes from its flag, else its `SVC_*` variable (an empty variable counts as
 * unset), else the `--config` file, else its default (ARCHITECTURE.md 10). Every value is
 * validated; a bad one throws `ConfigError` naming the flag, variable or file key it came from.
 */
import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { CommanderError } from 'commander';
import { buildCommand } from './command.js';
import { ConfigFileError, parseConfigFile, type ConfigFileValues } from './config-file.js';
import { renderEffectiveConfig, type PrintFormat, type Source } from './print-config.js';
import { FLAGS, camelOf, flagDef, type FlagDef } from './flags.js';
import {
  ValueError,
  parseAddress,
  parseBool,
  parseChoice,
  parseDecimal,
  parseHttpUrl,
  parseInteger,
  parseList,
  parsePattern,
  parseText,
  type Address,
} from './values.js';
import type { Config, LogFormat, LogLevel, Role } from './types.js';
import { VERSION } from '../version.js';

export type { Address } from './values.js';
export type { Config, LogFormat, LogLevel, Role } from './types.js';

/** A bad flag or environment value; the message names it and says why. Exit code 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** `--help`, `--version` or `--print-config` was given: print `output` to stdout and exit with `exitCode` (0). */
export class ConfigExit extends Error {
  override readonly name = 'ConfigExit';
  constructor(
    readonly output: string,
    readonly exitCode = 0,
  ) {
    super('exit requested by --help, --version or --print-config');
  }
}

/** Test seams of `parseConfig`. */
export interface ParseOptions {
  /** Version printed by `--version`; default `VERSION` of src/version.ts (package.json). */
  readonly version?: string;
  /** Random source of the default instance id; default `crypto.randomBytes`. */
  readonly randomBytes?: (size: number) => Uint8Array;
  /** Reads the `--config` file (UTF-8 text); default `fs.readFileSync`. */
  readonly readFile?: (path: string) => string;
  /** Directory a relative `--config` path is taken from; default `process.cwd()`. */
  readonly cwd?: string;
}

/** One option's final value and where it came from. */
interface Resolved {
  readonly value: unknown;
  readonly source: Source;
  /** `--name`, `SVC_NAME` or `<file>: name`: what error messages call it. */
  readonly label: string;
}

const RANK: Record<Source, number> = { default: 0, file: 1, env: 2, flag: 3 };

/** Parses raw option text by the flag's kind; null stays null (a list becomes []). */
function parseRaw(def: FlagDef, raw: string | null): unknown {
  const kind = def.kind;
  if (raw === null) return kind.type === 'list' ? [] : null;
  switch (kind.type) {
    case 'bool':
      return parseBool(raw);
    case 'int':
      return parseInteger(raw, kind.min, kind.max);
    case 'number':
      return parseDecimal(raw, kind.min, kind.max);
    case 'enum':
      return parseChoice(raw, kind.choices);
    case 'text':
      return parseText(raw);
    case 'pattern':
      return parsePattern(raw, kind.pattern, kind.what);
    case 'url':
      return parseHttpUrl(raw);
    case 'address':
      return parseAddress(raw);
    case 'list':
      return parseList(raw);
  }
}

/**
 * Flag, else non-empty env variable, else the config file, else default; then parsed and
 * validated. A relative path from the file resolves against the file's directory.
 */
function resolve(def: FlagDef, cli: ReadonlyMap<string, unknown>, env: Record<string, string | undefined>, file: ConfigFileValues | null): Resolved {
  let raw: string | null;
  let source: Source;
  const fromFile = file?.values.get(def.name);
  if (cli.has(def.name)) {
    const given = cli.get(def.name);
    raw = typeof given === 'boolean' ? String(given) : String(given ?? '');
    source = 'flag';
  } else if (env[def.env] !== undefined && env[def.env] !== '') {
    raw = env[def.env] as string;
    source = 'env';
  } else if (fromFile !== undefined) {
    raw = fromFile.raw;
    source = 'file';
  } else {
    raw = def.default;
    source = 'default';
  }
  const label = source === 'env' ? def.env : source === 'file' ? `${file?.path}: ${fromFile?.key}` : `--${def.name}`;
  try {
    const value = parseRaw(def, raw);
    if (source === 'file' && def.path && typeof value === 'string') return { value: resolvePath(file!.dir, value), source, label };
    return { value, source, label };
  } catch (err) {
    if (err instanceof ValueError) throw new ConfigError(`${label} ${err.message}`);
    throw err;
  }
}

/** What the command line says: option values given on it (by flag name), and `--print-config`. */
interface CommandLine {
  readonly cli: Map<string, unknown>;
  readonly print: PrintFormat | null;
}

/** Runs commander over argv; returns the values given on the command line, by flag name. */
function parseCommandLine(argv: readonly string[], version: string): CommandLine {
  const program = buildCommand(version);
  let out = '';
  program.configureOutput({ writeOut: (s) => (out += s), writeErr: () => {}, outputError: () => {} });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) throw new ConfigExit(out);
      if (err.code === 'commander.excessArguments') {
        throw new ConfigError(`unexpected argument ${JSON.stringify(program.args[0] ?? '')}: svc-server takes only options`);
      }
      throw new ConfigError(err.message.replace(/^error: /, ''));
    }
    throw err;
  }
  const cli = new Map<string, unknown>();
  for (const def of FLAGS) {
    const key = camelOf(def.name);
    if (program.getOptionValueSource(key) === 'cli') cli.set(def.name, program.getOptionValue(key));
  }
  const print = program.getOptionValue('printConfig') as PrintFormat | undefined;
  return { cli, print: print ?? null };
}

/** Reads and parses the `--config` file; its problems become `ConfigError`s naming it. */
function readConfigFile(given: Resolved, options: ParseOptions): ConfigFileValues | null {
  if (given.value === null) return null;
  const path = given.value as string;
  const cwd = options.cwd ?? process.cwd();
  let text: string;
  try {
    text = (options.readFile ?? ((p: string) => readFileSync(resolvePath(cwd, p), 'utf8')))(path);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new ConfigError(`${given.label} ${path}: cannot read the config file: ${reason}`);
  }
  try {
    return parseConfigFile(path, text, cwd);
  } catch (err) {
    if (err instanceof ConfigFileError) throw new ConfigError(err.message);
    throw err;
  }
}

/** Applies a port option over an address unless the address came from a stronger source. */
function withPort(addr: Resolved, port: Resolved): Address {
  const base = addr.value as Address;
  if (port.value === null || RANK[port.source] < RANK[addr.source]) return base;
  return { host: base.host, port: port.value as number };
}

/** Typed reads of resolved values (a mismatch with the flag table is a programming error). */
function reader(values: ReadonlyMap<string, Resolved>) {
  const get = (name: string, type: string): unknown => {
    const value = (values.get(name) ?? { value: undefined }).value;
    if (typeof value !== type && !(value === null && type === 'string')) {
      throw new Error(`config: ${name} is ${typeof value}, expected ${type}`);
    }
    return value;
  };
  return {
    bool: (name: string) => get(name, 'boolean') as boolean,
    num: (name: string) => get(name, 'number') as number,
    str: (name: string) => get(name, 'string') as string | null,
    list: (name: string) => (values.get(name) as Resolved).value as string[],
    at: (name: string) => values.get(name) as Resolved,
  };
}

/** Cross-option rules that one value alone cannot check. */
function checkCombinations(r: ReturnType<typeof reader>): void {
  const watch = r.at('watch-rules');
  if (watch.value === true && r.str('rules-dir') === null) {
    throw new ConfigError(`${watch.label} requires --rules-dir (or SVC_RULES_DIR)`);
  }
  const stream = r.at('decision-log-stream');
  if (stream.value === true && (r.str('decision-log') === null || r.str('sync-url') === null)) {
    throw new ConfigError(`${stream.label} requires --decision-log and --sync-url (or SVC_DECISION_LOG and SVC_SYNC_URL)`);
  }
  bothOrNeither(r, 'grpc-tls-cert', 'grpc-tls-key');
  bothOrNeither(r, 'http-tls-cert', 'http-tls-key');
  bothOrNeither(r, 'sync-user', 'sync-password');
  const clientCa = r.at('tls-client-ca');
  if (clientCa.value !== null) {
    // NOTE: mTLS on one listener and plain text on the other would leave a door open.
    if (!r.bool('disable-http') && r.str('http-tls-cert') === null) {
      throw new ConfigError(`${clientCa.label} requires HTTPS (--http-tls-cert and --http-tls-key) unless --disable-http`);
    }
    if (!r.bool('disable-grpc') && r.str('grpc-tls-cert') === null) {
      throw new ConfigError(`${clientCa.label} requires gRPC TLS (--grpc-tls-cert and --grpc-tls-key) unless --disable-grpc`);
    }
  }
  const brokerAuth = ['sync-token', 'sync-user', 'sync-creds-file'].map((n) => r.at(n)).filter((v) => v.value !== null);
  if (brokerAuth.length > 1) {
    throw new ConfigError(`${brokerAuth.map((v) => v.label).join(' and ')}: give one way to authenticate to the broker`);
  }
  if (r.str('auth-jwt-jwks-file') === null) {
    for (const name of ['auth-jwt-issuer', 'auth-jwt-audience']) {
      const v = r.at(name);
      if (v.value !== null) throw new ConfigError(`${v.label} requires --auth-jwt-jwks-file (or SVC_AUTH_JWT_JWKS_FILE)`);
    }
  }
  const require = r.at('signature-require');
  if (require.value === true && !r.bool('signature-enabled')) {
    throw new ConfigError(`${require.label} requires --signature-enabled (or SVC_SIGNATURE_ENABLED)`);
  }
}

/** Two options that only work together (TLS certificate and key, broker user and password). */
function bothOrNeither(r: ReturnType<typeof reader>, a: string, b: string): void {
  const first = r.at(a);
  const second = r.at(b);
  if ((first.value === null) !== (second.value === null)) {
    const given = first.value === null ? second : first;
    const missing = first.value === null ? flagDef(a) : flagDef(b);
    throw new ConfigError(`${given.label} requires --${missing.name} (or ${missing.env}): give both or neither`);
  }
}

/** The default instance id: `svc-` and 12 hex digits. */
function randomInstanceId(randomBytes: (size: number) => Uint8Array): string {
  return `svc-${Buffer.from(randomBytes(6)).toString('hex')}`;
}

/** Freezes an object and everything reachable from it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Parses the server configuration. `argv` excludes node and the script
 * (`process.argv.slice(2)`); `env` is usually `process.env`.
 * Throws `ConfigError` for a bad value, an unknown flag or a bad combination, and
 * `ConfigExit` for `--help`/`--version`.
 */
export function parseConfig(argv: readonly string[], env: Record<string, string | undefined>, options: ParseOptions = {}): Config {
  const { cli, print } = parseCommandLine(argv, options.version ?? VERSION);
  const configFile = resolve(flagDef('config'), cli, env, null);
  const file = readConfigFile(configFile, options);
  const values = new Map<string, Resolved>(FLAGS.map((def) => [def.name, def.name === 'config' ? configFile : resolve(def, cli, env, file)]));
  const r = reader(values);
  checkCombinations(r);
  if (print !== null) {
    const entries = FLAGS.map((def) => ({ def, ...(values.get(def.name) as Resolved) }));
    throw new ConfigExit(renderEffectiveConfig(entries, print));
  }
  const config: Config = {
    configFile: r.str('config'),
    httpAddr: withPort(r.at('http-addr'), r.at('port')),
    grpcAddr: withPort(r.at('grpc-addr'), r.at('grpc-port')),
    udsPath: r.str('uds-path'),
    disableHttp: r.bool('disable-http'),
    disableGrpc: r.bool('disable-grpc'),
    disableConsole: r.bool('disable-console'),
    disableHttpFastPath: r.bool('disable-http-fast-path'),
    grpcTlsCert: r.str('grpc-tls-cert'),
    grpcTlsKey: r.str('grpc-tls-key'),
    httpTlsCert: r.str('http-tls-cert'),
    httpTlsKey: r.str('http-tls-key'),
    tlsClientCa: r.str('tls-client-ca'),
    udsMode: Number.parseInt(r.str('uds-mode') as string, 8),
    maxRequestBodyBytes: r.num('max-request-body-bytes'),
    maxResponseBytes: r.num('max-response-bytes'),
    requestTimeoutSecs: r.num('request-timeout-secs'),
    shutdownTimeoutSecs: r.num('shutdown-timeout-secs'),
    debugMode: r.bool('debug-mode'),
    authKeysFile: r.str('auth-keys-file'),
    authJwtJwksFile: r.str('auth-jwt-jwks-file'),
    authJwtIssuer: r.str('auth-jwt-issuer'),
    authJwtAudience: r.str('auth-jwt-audience'),
    authJwtRoleClaim: r.str('auth-jwt-role-claim') as string,
    authJwtTenantsClaim: r.str('auth-jwt-tenants-claim') as string,
    authPublicMetrics: r.bool('auth-public-metrics'),
    rulesDir: r.str('rules-dir'),
    maxVersions: r.num('max-versions'),
    executionTimeoutMs: r.num('execution-timeout-ms'),
    maxSteps: r.num('max-steps'),
    maxEvalOps: r.num('max-eval-ops'),
    maxValueBytes: r.num('max-value-bytes'),
    maxDataBytes: r.num('max-data-bytes'),
    maxBatchSize: r.num('max-batch-size'),
    auditDir: r.str('audit-dir'),
    auditSampleRate: r.num('audit-sample-rate'),
    decisionLog: r.str('decision-log'),
    decisionLogSampleRate: r.num('decision-log-sample-rate'),
    decisionLogStream: r.bool('decision-log-stream'),
    metricsEnabled: r.bool('metrics-enabled'),
    role: r.str('role') as Role,
    writerAddr: r.str('writer-addr'),
    watchRules: r.bool('watch-rules'),
    watchPoll: r.bool('watch-poll'),
    watchPollIntervalMs: r.num('watch-poll-interval-ms'),
    syncUrl: r.str('sync-url'),
    syncSubjectPrefix: r.str('sync-subject-prefix') as string,
    instanceId: r.str('instance-id') ?? randomInstanceId(options.randomBytes ?? nodeRandomBytes),
    republishIntervalSecs: r.num('republish-interval-secs'),
    syncToken: r.str('sync-token'),
    syncUser: r.str('sync-user'),
    syncPassword: r.str('sync-password'),
    syncCredsFile: r.str('sync-creds-file'),
    syncTlsCa: r.str('sync-tls-ca'),
    signatureEnabled: r.bool('signature-enabled'),
    signatureRequire: r.bool('signature-require'),
    signatureTrustedKeys: r.list('signature-trusted-keys'),
    signatureTrustedKeysFile: r.str('signature-trusted-keys-file'),
    signatureAllowUnsignedLocal: r.bool('signature-allow-unsigned-local'),
    multiTenancyEnabled: r.bool('multi-tenancy-enabled'),
    logLevel: r.str('log-level') as LogLevel,
    logFormat: r.str('log-format') as LogFormat,
    serviceName: r.str('service-name') as string,
    otlpEndpoint: r.str('otlp-endpoint'),
  };
  return deepFreeze(config);
}

/** The `--help` text (what `svc-server --help` prints). */
export function helpText(version: string = VERSION): string {
  try {
    parseCommandLine(['--help'], version);
  } catch (err) {
    if (err instanceof ConfigExit) return err.output;
    throw err;
  }
  throw new Error('unreachable: --help did not exit');
}
