/**
 * Fleet suite: the reader fleet model (docs/data-sync.md). One writer and two readers fed by a
 * real nats-server (broker sync); `POST /api/v1/execute/:name` is driven against one reader,
 * then against both, in the same run. Rounds alternate 1 reader / 2 readers (the order rotating
 * each round); the figure is the median of the per-round ratios 2 readers / 1 reader.
 *
 * The load balancer is wrk itself: two threads, each with its own connections (25 of 50), thread
 * k connecting to reader k (bench/lib/load.ts `targets`). That is round-robin by connection, as
 * a balancer that keeps connections alive does, with no proxy process taking CPU. With 1 reader
 * both threads connect to it, so the load generator works the same way in both cases.
 * With 2+ cores and taskset, reader k is pinned to CPU k-1 (one process per core, as a fleet
 * spreads over hosts); with 1 reader the load generator is pinned to the other cores (the
 * baseline at its best: a whole core, no competition from the generator), with 2 readers it is
 * not pinned and shares the cores with them, which is the point. The load generator's CPU and
 * what else ran on the machine are reported next to the readers'.
 *
 *   node --import tsx bench/fleet.ts   (after building dist/; or `bash bench/run.sh fleet`)
 *   BENCH_FLEET_SECONDS=4 BENCH_FLEET_ROUNDS=7
 */
import { availableParallelism } from 'node:os';
import { startNatsServer, type NatsServer } from '../test/helpers/nats-server.js';
import { loadNatsApi } from '../src/sync/nats-api.js';
import { loadTool, runLoad } from './lib/load.js';
import { cpuPlan, cpuSeconds, machineBusySeconds, postJson, startSvc, waitedChildrenCpuSeconds, type SvcServer } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, throughputRow, writeReport, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECONDS = envInt('BENCH_FLEET_SECONDS', 4);
const ROUNDS = envInt('BENCH_FLEET_ROUNDS', 7);
const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;

interface Round {
  readonly rps: number;
  readonly p99_ms: number;
  readonly requests: number;
  readonly seconds: number;
  /** CPU seconds of the readers (both, whether loaded or not). */
  readonly readers_cpu_s: number;
  readonly load_cpu_s: number;
  readonly other_cpu_s: number;
  readonly errors: number;
}

/** `host:port` of a server URL. */
function hostPort(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port}`;
}

async function main(): Promise<void> {
  const tool = loadTool();
  if (tool.tool !== 'wrk') {
    console.log('fleet bench skipped: it needs wrk (the load is spread over the readers by wrk threads)');
    return;
  }
  const nats = await loadNatsApi();
  if (!nats.ok) {
    console.log(`fleet bench skipped: the NATS client is not installed (${nats.reason})`);
    return;
  }
  const machine = machineInfo();
  const cores = availableParallelism();
  const plan = cpuPlan();
  console.log(
    `fleet bench: 1 writer + 2 readers (broker sync), wrk 2 threads ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s (1 / 2 readers alternating), ` +
      `${cores} cores, ${plan ? 'readers pinned to CPU 0 and 1, load generator to ' + plan.load + ' with 1 reader, unpinned with 2' : 'no pinning'}; load average ${machine.load_average_start.join(' ')}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-fleet-'));
  let broker: NatsServer | undefined;
  const procs: SvcServer[] = [];
  const rounds: Record<1 | 2, Round[]> = { 1: [], 2: [] };
  try {
    broker = await startNatsServer();
    const writer = await startSvc(['--role', 'writer', '--sync-url', broker.url, '--rules-dir', dir, '--instance-id', 'fleet-writer'], null);
    procs.push(writer);
    const readers: SvcServer[] = [];
    for (const [k, id] of ['fleet-reader-1', 'fleet-reader-2'].entries()) {
      const r = await startSvc(['--role', 'reader', '--sync-url', broker.url, '--instance-id', id], plan ? String(k) : null);
      procs.push(r);
      readers.push(r);
    }
    await postJson(`${writer.url}/api/v1/rulesets`, APPROVAL_RULESET);
    const path = `/api/v1/execute/${APPROVAL_RULESET.config.name}`;
    const body = JSON.stringify({ input: APPROVAL_INPUT });
    // Every reader must serve the ruleset the writer stored (through the broker) before timing.
    for (const r of readers) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await fetch(`${r.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.text();
        if (res.status === 200) break;
        if (Date.now() > deadline) throw new Error(`reader ${r.url} did not get the ruleset through the broker within 30 s (last status ${res.status})`);
        await new Promise((res_) => setTimeout(res_, 100));
      }
    }
    const [a, b] = readers as [SvcServer, SvcServer];
    const targets: Record<1 | 2, string[]> = { 1: [hostPort(a.url), hostPort(a.url)], 2: [hostPort(a.url), hostPort(b.url)] };
    const readersCpu = () => cpuSeconds(a.pid) + cpuSeconds(b.pid);
    const run = (n: 1 | 2, seconds: number): Round => {
      const c0 = readersCpu();
      const l0 = waitedChildrenCpuSeconds();
      const m0 = machineBusySeconds();
      const x = runLoad({
        url: `${a.url}${path}`,
        body,
        connections: CONNECTIONS,
        seconds,
        cpus: n === 1 ? (plan?.load ?? null) : null,
        targets: targets[n],
        threads: 2,
      });
      const busy = machineBusySeconds() - m0;
      const load = waitedChildrenCpuSeconds() - l0;
      const cpu = readersCpu() - c0;
      return {
        rps: x.rps,
        p99_ms: x.p99_ms,
        requests: x.requests,
        seconds: x.seconds,
        readers_cpu_s: round(cpu, 2),
        load_cpu_s: round(load, 2),
        // The writer and the broker are idle during a round: this is other work on the machine.
        other_cpu_s: round(Math.max(0, busy - cpu - load), 2),
        errors: x.errors,
      };
    };
    run(1, WARMUP_SECONDS);
    run(2, WARMUP_SECONDS);
    for (let i = 0; i < ROUNDS; i++) {
      for (const n of (i % 2 === 0 ? [1, 2] : [2, 1]) as Array<1 | 2>) {
        const x = run(n, SECONDS);
        if (x.errors > 0) throw new Error(`${x.errors} failed requests with ${n} reader(s)`);
        rounds[n].push(x);
        console.log(
          `  round ${i + 1} ${n} reader(s): ${x.rps} req/s, p99 ${x.p99_ms} ms, readers ${round(x.readers_cpu_s / x.seconds, 2)} cores, ` +
            `load generator ${round(x.load_cpu_s / x.seconds, 2)} cores, other work ${round(x.other_cpu_s / x.seconds, 2)} cores`,
        );
      }
    }
  } finally {
    await Promise.allSettled(procs.map((p) => p.stop()));
    await broker?.dispose().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }

  const med = (n: 1 | 2, f: (x: Round) => number) => median(rounds[n].map(f));
  const coresOf = (n: 1 | 2, f: (x: Round) => number) =>
    round(
      med(n, (x) => f(x) / x.seconds),
      2,
    );
  const pairedRatio = round(median(rounds[2].map((x, i) => x.rps / (rounds[1][i] as Round).rps)), 3);
  const describe = (n: 1 | 2) =>
    `${med(n, (x) => x.rps)} req/s, p99 ${med(n, (x) => x.p99_ms)} ms; readers ${coresOf(n, (x) => x.readers_cpu_s)} cores ` +
    `(${round(
      med(n, (x) => (x.readers_cpu_s * 1e6) / x.requests),
      1,
    )} us CPU per request), load generator ${coresOf(n, (x) => x.load_cpu_s)} cores, ` +
    `other work on the machine ${coresOf(n, (x) => x.other_cpu_s)} cores (of ${cores})`;
  const summary: SummaryRow[] = [
    absoluteRow(
      'execute requests/s, 1 reader (broker-fed, wrk 2 threads)',
      'req/s',
      med(1, (x) => x.rps),
      'report',
      true,
      describe(1),
    ),
    absoluteRow(
      'execute requests/s, 2 readers (broker-fed, wrk 2 threads, one per reader)',
      'req/s',
      med(2, (x) => x.rps),
      'report',
      true,
      describe(2),
    ),
    {
      ...throughputRow(
        `execute requests/s, 2 readers vs 1 (median of per-round ratios, ${cores} cores)`,
        'req/s',
        med(2, (x) => x.rps),
        med(1, (x) => x.rps),
        '1 reader',
        null,
        `unpaired medians ratio ${round(med(2, (x) => x.rps) / med(1, (x) => x.rps), 3)}`,
      ),
      ratio: pairedRatio,
    },
  ];
  printSummary(summary);
  writeReport({
    suite: 'fleet',
    machine,
    method:
      `One writer (--role writer, rules dir) and two readers (--role reader) fed by a local nats-server (broker sync); the readers got the ruleset through the broker before timing. ` +
      `wrk with 2 threads and ${CONNECTIONS} connections on loopback; with 2 readers thread k connects to reader k (a Lua setup script: round-robin by connection, no proxy), with 1 reader both threads connect to it. ` +
      `${ROUNDS} rounds of ${SECONDS} s alternating 1 / 2 readers (order rotating), after ${WARMUP_SECONDS} s warm-up each; the ratio is the median of the per-round ratios. ` +
      `${plan ? `Reader k pinned to CPU k-1; with 1 reader the load generator is pinned to CPU ${plan.load} (the baseline at its best), with 2 it shares the cores with the readers.` : 'No pinning.'} The readers' CPU (from /proc), the load generator's (its CPU as a waited-for child) and the rest of the machine's busy time (/proc/stat) are reported.`,
    summary,
    details: { cores, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, results: rounds },
  });
}

runMain(main);
