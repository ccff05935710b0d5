/**
 * HTTP load over loopback, bounded in time: wrk (Debian `wrk`, a C load generator, preferred:
 * it leaves more of a small machine to the server) or autocannon (bench/node_modules) when wrk
 * is missing. Both run as child processes pinned to the load CPUs when pinning is on.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './report.js';
import { onPath, pinned } from './procs.js';

/** One load round. */
export interface LoadRound {
  readonly tool: 'wrk' | 'autocannon';
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Non-2xx answers plus socket errors. */
  readonly errors: number;
}

/** What to send. */
export interface LoadSpec {
  readonly url: string;
  readonly body: string;
  readonly connections: number;
  readonly seconds: number;
  /** CPU list of the load generator (null: unpinned). */
  readonly cpus: string | null;
  /** wrk only: each request goes to a random one of these paths on the url's host. */
  readonly paths?: readonly string[];
  /** Extra request headers (lower-case names), e.g. `authorization`. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * wrk only: `host:port` of the servers to spread the load over. wrk then runs one thread per
   * entry (or `threads`), thread k connecting to entry k mod n (its share of the connections):
   * round-robin over the servers by connection, as a balancer would, without a proxy.
   */
  readonly targets?: readonly string[];
  /** wrk only: threads (default 1, or one per target). */
  readonly threads?: number;
}

/** The load tool that will be used, or null with the reason. */
export function loadTool(): { tool: 'wrk' | 'autocannon' } | { tool: null; reason: string } {
  if (process.env['BENCH_LOAD_TOOL'] !== 'autocannon' && onPath('wrk')) return { tool: 'wrk' };
  try {
    const p = join(ROOT, 'bench', 'node_modules', 'autocannon', 'autocannon.js');
    spawnSync(process.execPath, [p, '--version'], { stdio: 'ignore' });
    return { tool: 'autocannon' };
  } catch {
    return { tool: null, reason: 'neither wrk nor bench/node_modules/autocannon is available' };
  }
}

/** Runs one bounded load round. */
export function runLoad(spec: LoadSpec): LoadRound {
  const t = loadTool();
  if (t.tool === null) throw new Error(t.reason);
  if (t.tool !== 'wrk' && spec.targets !== undefined && spec.targets.length > 1) throw new Error('spreading load over several servers needs wrk');
  return t.tool === 'wrk' ? wrk(spec) : autocannon(spec);
}

function wrk(spec: LoadSpec): LoadRound {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-wrk-'));
  try {
    const script = join(dir, 'post.lua');
    writeFileSync(
      script,
      `wrk.method = "POST"\nwrk.body = ${luaString(spec.body)}\nwrk.headers["Content-Type"] = "application/json"\n` +
        Object.entries(spec.headers ?? {})
          .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}\n`)
          .join('') +
        (spec.paths && spec.paths.length > 0
          ? `local paths = {${spec.paths.map(luaString).join(',')}}\nrequest = function() return wrk.format(nil, paths[math.random(#paths)]) end\n`
          : '') +
        (spec.targets && spec.targets.length > 0
          ? `local targets = {${spec.targets.map(luaString).join(',')}}\nlocal started = 0\n` +
            'setup = function(thread)\n  local t = targets[(started % #targets) + 1]\n  started = started + 1\n' +
            '  local host, port = t:match("^(.*):(%d+)$")\n  thread.addr = wrk.lookup(host, port)[1]\nend\n'
          : ''),
    );
    const threads = spec.threads ?? (spec.targets && spec.targets.length > 0 ? spec.targets.length : 1);
    const [cmd, args] = pinned(spec.cpus, 'wrk', [
      '-t',
      String(threads),
      '-c',
      String(spec.connections),
      '-d',
      `${spec.seconds}s`,
      '--latency',
      '-s',
      script,
      spec.url,
    ]);
    const out = spawnSync(cmd, args, { encoding: 'utf8', timeout: (spec.seconds + 30) * 1000 });
    const text = out.stdout ?? '';
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
    const total = /(\d+) requests in ([\d.]+)(m?s|m)/.exec(text);
    if (!rps || !total) throw new Error(`wrk output not understood:\n${text}\n${out.stderr}`);
    const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
    const errors = (non2xx ? Number(non2xx[1]) : 0) + (sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0);
    const secs = total[3] === 'ms' ? Number(total[2]) / 1000 : total[3] === 'm' ? Number(total[2]) * 60 : Number(total[2]);
    return {
      tool: 'wrk',
      requests: Number(total[1]),
      seconds: secs,
      rps: Math.round(Number(rps[1])),
      p50_ms: wrkPercentile(text, '50'),
      p99_ms: wrkPercentile(text, '99'),
      errors,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `    99%    2.31ms` → 2.31 (us and s converted to ms). */
function wrkPercentile(text: string, p: string): number {
  const m = new RegExp(`^\\s+${p}(?:\\.000)?%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(text);
  if (!m) return Number.NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}

function luaString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

function autocannon(spec: LoadSpec): LoadRound {
  const bin = join(ROOT, 'bench', 'node_modules', 'autocannon', 'autocannon.js');
  const [cmd, args] = pinned(spec.cpus, process.execPath, [
    bin,
    '-c',
    String(spec.connections),
    '-d',
    String(spec.seconds),
    '-m',
    'POST',
    '-H',
    'content-type=application/json',
    ...Object.entries(spec.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}=${v}`]),
    '-b',
    spec.body,
    '--json',
    spec.url,
  ]);
  const out = spawnSync(cmd, args, { encoding: 'utf8', timeout: (spec.seconds + 30) * 1000, maxBuffer: 64 * 1024 * 1024 });
  let r: any;
  try {
    r = JSON.parse(out.stdout);
  } catch {
    throw new Error(`autocannon output not understood:\n${out.stdout}\n${out.stderr}`);
  }
  return {
    tool: 'autocannon',
    requests: r.requests.total,
    seconds: r.duration,
    rps: Math.round(r.requests.total / r.duration),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    errors: (r.non2xx ?? 0) + (r.errors ?? 0) + (r.timeouts ?? 0),
  };
}
