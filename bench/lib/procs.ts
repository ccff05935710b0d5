/**
 * Processes of the load suites: the real svc server (dist/), the bare baselines, CPU pinning
 * with `taskset`, and /proc readings (CPU seconds, RSS). Every process is stopped by its pid.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { ROOT } from './report.js';

/** The built server entry point. */
export const SERVER_BIN = join(ROOT, 'dist', 'bin', 'svc-server.js');
/** The bare fastify baseline. */
export const BARE_HTTP = join(ROOT, 'bench', 'lib', 'bare-http.mjs');
/** The bare `node:http` baseline (the floor: no framework). */
export const BARE_NODE_HTTP = join(ROOT, 'bench', 'lib', 'bare-node-http.mjs');

/** True when `bin` is on PATH. */
export function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

/**
 * CPU sets for a server and its load generator: on 2+ cores with taskset, the server gets CPU 0
 * and the load generator the rest, so they do not fight for one core. Null: no pinning.
 */
export function cpuPlan(): { server: string; load: string } | null {
  const n = cpus().length;
  if (n < 2 || process.env['BENCH_NO_PIN'] === '1' || !onPath('taskset')) return null;
  return { server: '0', load: n === 2 ? '1' : `1-${n - 1}` };
}

/** The command and arguments to run `cmd args` on the CPU list `cpuList` (null: unpinned). */
export function pinned(cpuList: string | null, cmd: string, args: string[]): [string, string[]] {
  return cpuList === null ? [cmd, args] : ['taskset', ['-c', cpuList, cmd, ...args]];
}

/** A spawned process that reported its address. */
export interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  /** JSON log lines seen until it was ready, by `msg`. */
  readonly lines: Map<string, Record<string, unknown>>;
  /** Milliseconds from spawn until every wanted line was seen. */
  readonly readyMs: number;
  stop(): Promise<void>;
}

/**
 * Spawns `cmd args`, waits for JSON lines whose `msg` is each of `want` on `stream`.
 * `other` is where the other output stream goes.
 */
export function spawnReady(
  cmd: string,
  args: string[],
  stream: 'stdout' | 'stderr',
  want: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Started> {
  const stdio: StdioOptions = ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', stream === 'stderr' ? 'pipe' : 'inherit'];
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio, env: options.env ?? process.env });
  const lines = new Map<string, Record<string, unknown>>();
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${cmd} ${args.join(' ')}: not ready within ${options.timeoutMs ?? 60_000} ms`));
    }, options.timeoutMs ?? 60_000);
    const rl = createInterface({ input: child[stream]! });
    rl.on('line', (line) => {
      let v: Record<string, unknown>;
      try {
        v = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (typeof v['msg'] === 'string' && want.includes(v['msg'])) lines.set(v['msg'], v);
      if (want.every((w) => lines.has(w)) && lines.size > 0) {
        clearTimeout(timer);
        // Keep draining the pipe so the child never blocks on a full pipe.
        resolve({ child, pid: child.pid!, lines, readyMs: performance.now() - t0, stop });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before it was ready`));
    });
  });
}

/** A running svc server. */
export interface SvcServer extends Started {
  readonly url: string;
  readonly grpcAddress: string | null;
}

/**
 * Starts `node dist/bin/svc-server.js` on ephemeral loopback ports with `extra` flags, pinned
 * to `cpuList`. Audit lines (stdout) go to /dev/null; the log (stderr) is read for addresses.
 * `bin`: another build's svc-server.js (before/after comparisons).
 */
export async function startSvc(
  extra: string[],
  cpuList: string | null,
  options: { grpc?: boolean; nodeArgs?: string[]; env?: NodeJS.ProcessEnv; bin?: string } = {},
): Promise<SvcServer> {
  const grpc = options.grpc ?? false;
  const args = [
    ...(options.nodeArgs ?? []),
    options.bin ?? SERVER_BIN,
    '--http-addr',
    '127.0.0.1:0',
    ...(grpc ? ['--grpc-addr', '127.0.0.1:0'] : ['--disable-grpc']),
    ...extra,
  ];
  const [cmd, full] = pinned(cpuList, process.execPath, args);
  const s = await spawnReady(cmd, full, 'stderr', grpc ? ['http listening', 'grpc listening'] : ['http listening'], options.env ? { env: options.env } : {});
  return {
    ...s,
    url: String(s.lines.get('http listening')!['url']),
    grpcAddress: grpc ? String(s.lines.get('grpc listening')!['address']) : null,
  };
}

/**
 * Starts the bare fastify baseline with `routes` (path → constant body), pinned to `cpuList`.
 * `script`: BARE_NODE_HTTP for the bare `node:http` server (same routes, same answers).
 */
export async function startBareHttp(
  routes: Record<string, unknown>,
  cpuList: string | null,
  nodeArgs: string[] = [],
  script: string = BARE_HTTP,
): Promise<Started & { url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-bare-'));
  const file = join(dir, 'routes.json');
  writeFileSync(file, JSON.stringify(routes));
  const [cmd, args] = pinned(cpuList, process.execPath, [...nodeArgs, script, file]);
  try {
    const s = await spawnReady(cmd, args, 'stdout', ['bare listening']);
    return { ...s, url: String(s.lines.get('bare listening')!['url']) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) used so far by `pid` (Linux /proc), NaN elsewhere. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds (user + system) of this process's children that have been waited for (Linux
 * /proc, NaN elsewhere): read before and after a `spawnSync` of the load generator, the
 * difference is the load generator's CPU time.
 */
export function waitedChildrenCpuSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** Busy CPU seconds of the whole machine so far, all cores (Linux /proc/stat), NaN elsewhere. */
export function machineBusySeconds(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    const busy = cpu.slice(0, 8).reduce((n, x, i) => (i === 3 || i === 4 ? n : n + x), 0);
    return busy / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of `pid` in bytes (Linux /proc), NaN elsewhere. */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** POSTs JSON and returns the parsed answer; throws unless the status is `expect`. */
export async function postJson(url: string, body: unknown, expect = 200): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text.length > 0 ? JSON.parse(text) : undefined;
}

/** POSTs JSON text on a fresh agent-less request; resolves with the time to the answer's end (ms), its size and status. */
export function timedPost(url: string, body: string): Promise<{ ms: number; bytes: number; status: number }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ ms: performance.now() - t0, bytes, status: res.statusCode ?? 0 }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
