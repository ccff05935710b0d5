/**
 * The `ready` log record and the start-up banner a person sees. The server logs one `ready`
 * line once every listener is up (JSON: one line with the fields below); with
 * `--log-format pretty` the same record is shown as a short block of readable lines.
 * Pure: no I/O.
 */
import type { Config } from '../config/index.js';

/** The fields of the `ready` log line. */
export interface ReadyReport {
  readonly version: string;
  /** Milliseconds since the process started. */
  readonly ready_ms: number;
  /** `http://host:port` or `https://…`, or null with `--disable-http`. */
  readonly http: string | null;
  /** `host:port` of gRPC (with ` (TLS)`), or null. */
  readonly grpc: string | null;
  /** Unix socket path, or null. */
  readonly uds: string | null;
  readonly role: string;
  /** Rules directory, or null: memory only. */
  readonly rules_dir: string | null;
  /** Rulesets held, all tenants. */
  readonly rulesets: number;
  /** Registered tenants with multi-tenancy on, else null. */
  readonly tenants: number | null;
  /** `off`, `api keys`, `jwt` or `api keys and jwt`. */
  readonly auth: string;
  /** `off`, or what keeps the rules in sync (watcher, broker). */
  readonly sync: string;
  readonly config_file: string | null;
  /** Things a person should know (memory only, open door, ...). */
  readonly warnings: readonly string[];
}

/** The warning of a server without `--rules-dir`. */
export const MEMORY_ONLY_WARNING = 'memory only: rules are lost on exit';

/**
 * Start-up info lines the banner repeats; the pretty log leaves them out when the banner
 * follows. NOTE: a renamed message only shows twice in pretty mode; JSON is not affected.
 */
export const BANNER_REPEATS: ReadonlySet<string> = new Set(['rules loaded', 'http listening', 'grpc listening', 'uds listening']);

/** What the server knows once it listens (the rest comes from the config). */
export interface ReadyFacts {
  readonly version: string;
  readonly readyMs: number;
  readonly httpUrl: string | null;
  readonly grpcAddress: string | null;
  readonly socketPath: string | null;
  readonly rulesets: number;
  readonly tenants: number | null;
  /** `--sync-url` with any credentials masked, or null. */
  readonly shownSyncUrl: string | null;
  /** The open-door warning text when a listener takes calls without credentials, else null. */
  readonly openDoor: string | null;
}

/** The config slice the report reads. */
export type ReadyConfig = Pick<
  Config,
  'role' | 'rulesDir' | 'authKeysFile' | 'authJwtJwksFile' | 'watchRules' | 'watchPoll' | 'watchPollIntervalMs' | 'syncUrl' | 'configFile' | 'grpcTlsCert'
>;

/** Builds the `ready` record. */
export function buildReadyReport(config: ReadyConfig, facts: ReadyFacts): ReadyReport {
  const auth = [config.authKeysFile !== null ? 'api keys' : null, config.authJwtJwksFile !== null ? 'jwt' : null].filter((a) => a !== null);
  const sync: string[] = [];
  if (config.watchRules) sync.push(`watching the rules dir${config.watchPoll ? ` (polling every ${config.watchPollIntervalMs} ms)` : ''}`);
  if (config.syncUrl !== null) {
    sync.push(config.role === 'standalone' ? 'broker ignored (standalone; use --role writer or reader)' : `broker ${facts.shownSyncUrl} as ${config.role}`);
  }
  const warnings: string[] = [];
  if (config.rulesDir === null) warnings.push(MEMORY_ONLY_WARNING);
  if (facts.openDoor !== null) warnings.push(facts.openDoor);
  return {
    version: facts.version,
    ready_ms: facts.readyMs,
    http: facts.httpUrl,
    grpc: facts.grpcAddress === null ? null : `${facts.grpcAddress}${config.grpcTlsCert !== null ? ' (TLS)' : ''}`,
    uds: facts.socketPath,
    role: config.role,
    rules_dir: config.rulesDir,
    rulesets: facts.rulesets,
    tenants: facts.tenants,
    auth: auth.length === 0 ? 'off' : auth.join(' and '),
    sync: sync.length === 0 ? 'off' : sync.join('; '),
    config_file: config.configFile,
    warnings,
  };
}

/** True when a log record is the `ready` record (pretty mode draws it as the banner). */
export function isReadyRecord(record: Record<string, unknown>): boolean {
  return record['msg'] === 'ready' && typeof record['version'] === 'string' && typeof record['ready_ms'] === 'number';
}

/** ANSI styles, or none. */
function styles(color: boolean) {
  const wrap = (code: string) => (text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { bold: wrap('1'), dim: wrap('2'), yellow: wrap('33'), green: wrap('32') };
}

/**
 * The banner: a title line (`svc-server 1.4.0 ready in 85 ms`), then one aligned line per
 * fact and one per warning. Ends with a newline.
 */
export function renderBanner(report: ReadyReport, color = false): string {
  const s = styles(color);
  const rows: Array<[string, string]> = [];
  if (report.http !== null) rows.push([report.http.startsWith('https:') ? 'HTTPS' : 'HTTP', report.http]);
  if (report.grpc !== null) rows.push(['gRPC', report.grpc]);
  if (report.uds !== null) rows.push(['socket', report.uds]);
  rows.push(['role', report.role]);
  rows.push(['storage', report.rules_dir ?? 'memory only']);
  rows.push(['rulesets', `${report.rulesets}${report.tenants === null ? '' : ` (${report.tenants} tenant${report.tenants === 1 ? '' : 's'})`}`]);
  rows.push(['auth', report.auth]);
  rows.push(['sync', report.sync]);
  if (report.config_file !== null) rows.push(['config', report.config_file]);
  const lines = [`${s.bold(`svc-server ${report.version}`)} ${s.green(`ready in ${report.ready_ms} ms`)}`];
  for (const [label, value] of rows) lines.push(`  ${s.dim(label.padEnd(10))}${value}`);
  for (const warning of report.warnings) lines.push(`  ${s.yellow(`${'warning'.padEnd(10)}${warning}`)}`);
  return `${lines.join('\n')}\n`;
}
