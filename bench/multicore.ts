/**
 * Multi-core suite: how throughput grows with server processes. `svc-cluster`
 * (src/bin/svc-cluster.ts) runs 1, 2, ... up to the core count of identical workers on one
 * port (node:cluster, shared rules dir with --watch-rules); wrk drives
 * `POST /api/v1/execute/:name` with 50 connections. Rounds alternate between the worker
 * counts; medians. Several workers are not pinned: the OS spreads them and the load generator
 * over the cores, which is the point. One worker is the baseline at its best: on 2+ cores it is
 * pinned to CPU 0 and the load generator to the others (NOTE: unpinned, one worker measured
 * 15k or 29k req/s from round to round, depending on whether the OS put wrk on its core). On a
 * 2-core machine the load generator needs a good part of one core itself, so 2 workers cannot
 * double the throughput; its CPU share (and other work on the machine) is reported per round.
 *
 *   node --import tsx bench/multicore.ts   (after building dist/)   BENCH_MC_SECONDS, BENCH_MC_ROUNDS
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTool, runLoad } from './lib/load.js';
import { cpuPlan, cpuSeconds, machineBusySeconds, pinned, spawnReady, waitedChildrenCpuSeconds, type Started } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, throughputRow, writeReport, ROOT, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';
import { execFileSync } from 'node:child_process';

const SECONDS = envInt('BENCH_MC_SECONDS', 4);
const ROUNDS = envInt('BENCH_MC_ROUNDS', 5);
const CLUSTER_BIN = join(ROOT, 'dist', 'bin', 'svc-cluster.js');

/** Pids of a process's children (the cluster workers). */
function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** The CPU lists of one worker count: one worker pinned with the load elsewhere, more unpinned. */
function pinning(workers: number): { server: string | null; load: string | null } {
  const plan = workers === 1 ? cpuPlan() : null;
  return { server: plan?.server ?? null, load: plan?.load ?? null };
}

async function startCluster(workers: number, dir: string): Promise<Started & { url: string; workers: number }> {
  const want = Array.from({ length: workers }, () => 'http listening');
  // spawnReady waits for one line per distinct msg; wait for all workers by counting below.
  const [cmd, args] = pinned(pinning(workers).server, process.execPath, [
    CLUSTER_BIN,
    '--workers',
    String(workers),
    '--rules-dir',
    dir,
    '--watch-rules',
    '--http-addr',
    '127.0.0.1:0',
    '--disable-grpc',
  ]);
  const s = await spawnReady(cmd, args, 'stderr', want);
  // Give the other workers time to report too (they start in parallel).
  for (let i = 0; i < 100 && childPids(s.pid).length < workers; i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 500));
  return { ...s, url: String(s.lines.get('http listening')!['url']), workers };
}

/** CPU seconds of the cluster: primary and workers. */
function clusterCpu(pid: number): number {
  return cpuSeconds(pid) + childPids(pid).reduce((n, p) => n + cpuSeconds(p), 0);
}

async function main(): Promise<void> {
  const tool = loadTool();
  if (tool.tool === null) {
    console.log(`multicore bench skipped: ${tool.reason}`);
    return;
  }
  const machine = machineInfo();
  const cores = availableParallelism();
  const counts = [...new Set([1, 2, cores].filter((n) => n <= Math.max(2, cores)))];
  console.log(
    `multicore bench: svc-cluster with ${counts.join(', ')} workers on ${cores} cores, ${tool.tool} 50 connections, ${ROUNDS} rounds of ${SECONDS} s (alternating); load average ${machine.load_average_start.join(' ')}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-mc-'));
  writeFileSync(join(dir, `${APPROVAL_RULESET.config.name}.json`), JSON.stringify(APPROVAL_RULESET));
  const body = JSON.stringify({ input: APPROVAL_INPUT });
  const path = `/api/v1/execute/${APPROVAL_RULESET.config.name}`;
  const servers: Array<Started & { url: string; workers: number }> = [];
  const rounds: Record<
    number,
    Array<{ rps: number; p99_ms: number; cpu_s: number; load_cpu_s: number; other_cpu_s: number; requests: number; seconds: number }>
  > = {};
  try {
    for (const n of counts) servers.push(await startCluster(n, dir));
    for (const s of servers) runLoad({ url: `${s.url}${path}`, body, connections: 50, seconds: 1, cpus: pinning(s.workers).load });
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of servers) {
        const c0 = clusterCpu(s.pid);
        // The load generator's CPU: wrk is a waited-for child of this process (spawnSync).
        const l0 = waitedChildrenCpuSeconds();
        const m0 = machineBusySeconds();
        const x = runLoad({ url: `${s.url}${path}`, body, connections: 50, seconds: SECONDS, cpus: pinning(s.workers).load });
        const busy = machineBusySeconds() - m0;
        const load = waitedChildrenCpuSeconds() - l0;
        const cpu = clusterCpu(s.pid) - c0;
        // Whatever else ran on the machine meanwhile (other work; this process is idle in spawnSync).
        const other = Math.max(0, busy - load - cpu);
        if (x.errors > 0) throw new Error(`${x.errors} failed requests with ${s.workers} workers`);
        (rounds[s.workers] ??= []).push({
          rps: x.rps,
          p99_ms: x.p99_ms,
          cpu_s: round(cpu, 2),
          load_cpu_s: round(load, 2),
          other_cpu_s: round(other, 2),
          requests: x.requests,
          seconds: x.seconds,
        });
        console.log(
          `  round ${r + 1} ${s.workers} worker(s): ${x.rps} req/s, p99 ${x.p99_ms} ms, server CPU ${round(cpu, 2)} s (${round(cpu / x.seconds, 2)} cores), ` +
            `load generator ${round(load / x.seconds, 2)} cores, other work ${round(other / x.seconds, 2)} cores`,
        );
      }
    }
  } finally {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const rps = (n: number) => median(rounds[n]!.map((x) => x.rps));
  const cores_ = (n: number, f: (x: { cpu_s: number; load_cpu_s: number; other_cpu_s: number; seconds: number }) => number) =>
    round(median(rounds[n]!.map((x) => f(x) / x.seconds)), 2);
  const usPerReq = (n: number) => round(median(rounds[n]!.map((x) => (x.cpu_s * 1e6) / x.requests)), 1);
  const describe = (n: number) =>
    `${n} worker(s): ${rps(n)} req/s, p99 ${median(rounds[n]!.map((x) => x.p99_ms))} ms, server ${cores_(n, (x) => x.cpu_s)} cores ` +
    `(${usPerReq(n)} us CPU per request), load generator ${cores_(n, (x) => x.load_cpu_s)} cores, other work on the machine ${cores_(n, (x) => x.other_cpu_s)} cores`;
  const summary: SummaryRow[] = [
    // One row per worker count (the scaling table of docs/performance.md).
    ...counts.map((n) =>
      absoluteRow(`execute requests/s with ${n} worker${n > 1 ? 's' : ''} (svc-cluster, ${cores} cores)`, 'req/s', rps(n), 'report', true, describe(n)),
    ),
    ...counts
      .filter((n) => n > 1)
      .map((n) =>
        throughputRow(
          `execute requests/s with ${n} workers vs 1 (svc-cluster, ${cores} cores)`,
          'req/s',
          rps(n),
          rps(1),
          '1 worker',
          null,
          `scaling ${round(rps(n) / rps(1), 2)}x; server cores used ${cores_(n, (x) => x.cpu_s)} vs ${cores_(1, (x) => x.cpu_s)}; ` +
            `load generator ${cores_(n, (x) => x.load_cpu_s)} vs ${cores_(1, (x) => x.load_cpu_s)} cores of ${cores}`,
        ),
      ),
  ];
  printSummary(summary);
  writeReport({
    suite: 'multicore',
    machine,
    method:
      `svc-cluster (node:cluster, workers share the port; the primary hands connections to workers in turn) with ${counts.join(' / ')} workers over one shared rules dir (--watch-rules); ` +
      `${tool.tool} with 50 connections on loopback, ${ROUNDS} rounds of ${SECONDS} s, alternating between worker counts; medians. 1 worker pinned to CPU 0 (primary and worker) with the load generator on the other cores (its best case); more workers not pinned: workers and load generator share the ${cores} cores. The load generator's CPU time (its children's CPU as seen by this process) is reported in cores, next to the server's (primary and workers, from /proc).`,
    summary,
    details: { cores, counts, rounds },
  });
}

runMain(main);
