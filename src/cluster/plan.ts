/**
 * What `svc-cluster` decides before it forks (docs/performance.md "Using every core"):
 * the worker count, the arguments every worker gets, each worker's instance id, and whether
 * the configuration can be served by several identical processes at all.
 */
import type { Config } from '../config/index.js';

/** The `--workers` flag's value and the remaining (svc-server) arguments. */
export interface WorkersArg {
  /** Null: not given (use the environment, then the number of cores). */
  readonly workers: number | null;
  readonly rest: string[];
}

/** Takes `--workers N` / `--workers=N` out of `argv`. Throws on a value that is not 1-256. */
export function takeWorkersFlag(argv: readonly string[]): WorkersArg {
  const rest: string[] = [];
  let workers: number | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    let value: string | undefined;
    if (a === '--workers') value = argv[++i];
    else if (a.startsWith('--workers=')) value = a.slice('--workers='.length);
    else {
      rest.push(a);
      continue;
    }
    workers = parseWorkers(value, '--workers');
  }
  return { workers, rest };
}

/** Parses a worker count (1-256). */
export function parseWorkers(value: string | undefined, what: string): number {
  const n = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || !Number.isInteger(n) || n < 1 || n > 256) {
    throw new Error(`${what} must be a whole number from 1 to 256, got ${JSON.stringify(value ?? '')}`);
  }
  return n;
}

/** `argv` without `--instance-id V` / `--instance-id=V` (each worker gets its own id by env). */
export function withoutInstanceId(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--instance-id') i++;
    else if (!a.startsWith('--instance-id=')) out.push(a);
  }
  return out;
}

/** Instance id of worker `k` (1-based): `<base>-w<k>`, within the 64-character limit. */
export function workerInstanceId(base: string, k: number): string {
  const suffix = `-w${k}`;
  return `${base.slice(0, 64 - suffix.length)}${suffix}`;
}

/**
 * Why `config` cannot run as several identical workers, or null when it can. Every worker is a
 * whole server with its own copy of the rules, so a write must reach the others: readers fed by
 * the broker (or a watched shared dir) qualify, a standalone server only with `--rules-dir` and
 * `--watch-rules`. A writer publishes and keeps history: it stays one process. The Unix socket
 * path cannot be shared by several listeners.
 */
export function clusterProblem(config: Pick<Config, 'role' | 'rulesDir' | 'watchRules' | 'udsPath'>): string | null {
  if (config.udsPath !== null) return '--uds-path cannot be shared by several workers; run the Unix socket listener as a single svc-server';
  if (config.role === 'writer') return 'a writer (--role writer) must be a single process; run several readers behind it instead';
  if (config.role === 'standalone' && (config.rulesDir === null || !config.watchRules)) {
    return 'several standalone workers need a shared --rules-dir with --watch-rules (so a write on one worker reaches the others); or run readers fed by the broker';
  }
  return null;
}
