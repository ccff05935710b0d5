/**
 * Decision log suite (EXTENSIONS.md 4 "Decision records"): `POST /api/v1/execute/:name` of the
 * real server (dist/) with `--decision-log DIR` recording every execution
 * (`--decision-log-sample-rate 100`, the default) against the same server without it, in the
 * same run. Target: with the log on, at least 0.85 of the requests per second with it off.
 *
 * Pairs of svc processes (off, on) pinned to the same server CPU, rounds alternating between
 * them (the idle one uses no CPU), the load generator on the other CPUs (as bench/http.ts). The
 * rounds are spread over BENCH_DECLOG_INSTANCES fresh pairs (default 3): fresh processes of one
 * build differ by up to 15% in CPU per request (bench/NOTES.md), more than the effect measured;
 * the target is judged on the median of the per-round ratios (paired within a round). The
 * records go to a temporary directory on the machine's disk; at the end the suite reads
 * `svc_decision_records_written_total` and `..._dropped_total` from the "on" server, so a
 * result bought by dropping records shows.
 *
 *   node --import tsx bench/declog.ts      (after building dist/; or `bash bench/run.sh declog`)
 *   BENCH_DECLOG_SECONDS=3 BENCH_DECLOG_ROUNDS=6 BENCH_DECLOG_INSTANCES=3 BENCH_DECLOG_CONNECTIONS=50
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, loadTool, type LoadRound } from './lib/load.js';
import { cpuPlan, cpuSeconds, postJson, startSvc, type SvcServer } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, throughputRow, writeReport, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const SECONDS = envInt('BENCH_DECLOG_SECONDS', 3);
const ROUNDS = envInt('BENCH_DECLOG_ROUNDS', 6);
const INSTANCES = envInt('BENCH_DECLOG_INSTANCES', 3);
const CONNECTIONS = envInt('BENCH_DECLOG_CONNECTIONS', 50);
const WARMUP_SECONDS = 2;
const TARGET_RATIO = 0.85;

interface Measured extends LoadRound {
  readonly server_cpu_s: number;
  readonly rps_per_cpu_s: number | null;
}

/** One counter of the server's /metrics (sum over its series). */
async function counter(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function main(): Promise<void> {
  const tool = loadTool();
  if (tool.tool === null) {
    console.log(`declog bench skipped: ${tool.reason}`);
    return;
  }
  const machine = machineInfo();
  const plan = cpuPlan();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-declog-'));
  console.log(
    `declog bench: ${tool.tool}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per server (alternating), ` +
      `${plan ? `servers pinned to CPU ${plan.server}, load to CPU ${plan.load}` : 'no pinning'}, records to ${dir}, load average ${machine.load_average_start.join(' ')}`,
  );
  const path = `/api/v1/execute/${APPROVAL_RULESET.config.name}`;
  const body = JSON.stringify({ input: APPROVAL_INPUT });
  const rounds = { off: [] as Measured[], on: [] as Measured[] };
  let written = 0;
  let dropped = 0;
  const run = (target: SvcServer, seconds: number): Measured => {
    const cpu0 = cpuSeconds(target.pid);
    const r = runLoad({ url: `${target.url}${path}`, body, connections: CONNECTIONS, seconds, cpus: plan?.load ?? null });
    const cpu = cpuSeconds(target.pid) - cpu0;
    return { ...r, server_cpu_s: round(cpu, 2), rps_per_cpu_s: cpu > 0 ? Math.round(r.requests / cpu) : null };
  };
  const perInstance = Math.max(1, Math.ceil(ROUNDS / INSTANCES));
  for (let inst = 0, next = 0; inst < INSTANCES && next < ROUNDS; inst++) {
    let off: SvcServer | undefined;
    let on: SvcServer | undefined;
    try {
      off = await startSvc([], plan?.server ?? null);
      on = await startSvc(['--decision-log', join(dir, String(inst))], plan?.server ?? null);
      for (const s of [off, on]) await postJson(`${s.url}/api/v1/rulesets`, APPROVAL_RULESET);
      run(off, WARMUP_SECONDS);
      run(on, WARMUP_SECONDS);
      for (const end = Math.min(ROUNDS, next + perInstance); next < end; next++) {
        // NOTE: the order alternates each round so that neither always runs right after the other.
        const order = next % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
        for (const name of order) {
          const m = run(name === 'off' ? off : on, SECONDS);
          rounds[name].push(m);
          console.log(
            `  execute round ${next + 1} (pair ${inst + 1}) log ${name.padEnd(3)} ${String(m.rps).padStart(7)} req/s  p50 ${m.p50_ms.toFixed(2)} ms  p99 ${m.p99_ms.toFixed(2)} ms  ` +
              `${String(m.rps_per_cpu_s ?? '-').padStart(7)} req/cpu-s  errors ${m.errors}`,
          );
        }
      }
      // Let the writer catch up with the last round before reading its counters.
      await new Promise((r) => setTimeout(r, 1000));
      written += await counter(on.url, 'svc_decision_records_written_total');
      dropped += await counter(on.url, 'svc_decision_records_dropped_total');
    } finally {
      await off?.stop();
      await on?.stop();
    }
  }
  rmSync(dir, { recursive: true, force: true });

  const med = (xs: Measured[], f: (m: Measured) => number | null) => median(xs.map((m) => f(m) ?? Number.NaN));
  const errors = [...rounds.off, ...rounds.on].reduce((n, m) => n + m.errors, 0);
  // Paired within a round: the same pair of processes, back to back.
  const pairedRatio = median(rounds.on.map((m, i) => m.rps / (rounds.off[i] as Measured).rps));
  const requestsOn = rounds.on.reduce((n, m) => n + m.requests, 0);
  const summary: SummaryRow[] = [
    {
      ...throughputRow(
        'POST /api/v1/execute/:name requests/s, decision log on (100%) / off (median of per-round ratios)',
        'req/s',
        med(rounds.on, (m) => m.rps),
        med(rounds.off, (m) => m.rps),
        'decision log off',
        TARGET_RATIO,
      ),
      ratio: round(pairedRatio, 3),
      pass: pairedRatio >= TARGET_RATIO,
      note: `medians ${med(rounds.on, (m) => m.rps)} vs ${med(rounds.off, (m) => m.rps)} req/s${errors ? `; ${errors} errors` : ''}`,
    },
    throughputRow(
      'POST /api/v1/execute/:name requests per server CPU-second, decision log on',
      'req/cpu-s',
      med(rounds.on, (m) => m.rps_per_cpu_s),
      med(rounds.off, (m) => m.rps_per_cpu_s),
      'decision log off',
      null,
    ),
    absoluteRow(
      'decision records dropped with the log on',
      'records',
      dropped,
      '0',
      dropped === 0,
      `${written} written for about ${requestsOn} timed requests (warm-up included in written)`,
    ),
  ];
  printSummary(summary);
  writeReport({
    suite: 'declog',
    machine,
    method:
      `${tool.tool} with ${CONNECTIONS} connections over loopback; ${ROUNDS} rounds of ${SECONDS} s per server over ${INSTANCES} fresh pairs of servers, alternating the server without and with --decision-log (100% sampled) in an order that alternates each round, after ${WARMUP_SECONDS} s warm-up of each process; ` +
      'the target is judged on the median of the per-round ratios (paired within a round), the medians of each mode are in the note. ' +
      `${plan ? `Both servers pinned to CPU ${plan.server} (taskset), the load generator to CPU ${plan.load}.` : 'No CPU pinning.'} ` +
      'Records written to a temporary directory on local disk; written and dropped counts read from /metrics at the end.',
    summary,
    details: {
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      instances: INSTANCES,
      cores: cpus().length,
      pinning: plan,
      written,
      dropped,
      results: rounds,
    },
  });
}

runMain(main);
