/**
 * HTTP suite: `POST /api/v1/execute/:name` and `POST /api/v1/eval` of the real server
 * (dist/, default flags: metrics on, audit sampling 10% to stdout) under load, against a bare
 * fastify server (same fastify, default JSON parser and serializer) whose routes answer the same
 * JSON as a constant, in the same run. Rounds alternate bare / svc; medians are reported.
 *
 * Load: wrk (or autocannon), 50 connections, loopback, bounded by time. NOTE: load generator
 * and servers share the machine; with 2+ cores and taskset, servers are pinned to CPU 0 and the
 * load generator to the other CPUs, so each server gets exactly one core and the generator never
 * steals it. Server CPU seconds per round are read from /proc, giving requests per CPU-second
 * too (less sensitive to other work on the machine).
 *
 *   node --import tsx bench/http.ts       (after building dist/; or `bash bench/run.sh http`)
 *   BENCH_HTTP_SECONDS=5 BENCH_HTTP_ROUNDS=5 BENCH_HTTP_CONNECTIONS=50
 *   BENCH_HTTP_PROFILE=<dir>: run svc under --cpu-prof, write the profile into <dir>
 */
import { cpus } from 'node:os';
import { runLoad, loadTool, type LoadRound } from './lib/load.js';
import { cpuPlan, cpuSeconds, postJson, startBareHttp, startSvc, type Started } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, throughputRow, writeReport, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const SECONDS = envInt('BENCH_HTTP_SECONDS', 5);
const ROUNDS = envInt('BENCH_HTTP_ROUNDS', 5);
const CONNECTIONS = envInt('BENCH_HTTP_CONNECTIONS', 50);
const WARMUP_SECONDS = 2;
const TARGET_RATIO = 0.85;
const TARGET_P99_MS = 5;

const EVAL_BODY = { expression: 'user.age >= 18 && user.country in ["US", "CA"]', context: APPROVAL_INPUT };

interface Endpoint {
  readonly name: string;
  /** Selects the endpoint in BENCH_HTTP_ONLY. */
  readonly key: string;
  /** The request path, the same on both servers. */
  readonly path: string;
  /** The bare server's route: the same URL pattern as svc's, so routing costs the same. */
  readonly bareRoute: string;
  readonly body: string;
}

const ALL_ENDPOINTS: readonly Endpoint[] = [
  {
    name: 'POST /api/v1/execute/:name',
    key: 'execute',
    path: `/api/v1/execute/${APPROVAL_RULESET.config.name}`,
    bareRoute: '/api/v1/execute/:name',
    body: JSON.stringify({ input: APPROVAL_INPUT }),
  },
  { name: 'POST /api/v1/eval', key: 'eval', path: '/api/v1/eval', bareRoute: '/api/v1/eval', body: JSON.stringify(EVAL_BODY) },
];

const ENDPOINTS = ALL_ENDPOINTS.filter((e) => !process.env['BENCH_HTTP_ONLY'] || e.key === process.env['BENCH_HTTP_ONLY']);

interface Measured extends LoadRound {
  readonly server_cpu_s: number;
  readonly rps_per_cpu_s: number | null;
}

async function main(): Promise<void> {
  const tool = loadTool();
  if (tool.tool === null) {
    console.log(`http bench skipped: ${tool.reason}`);
    return;
  }
  const machine = machineInfo();
  const plan = cpuPlan();
  const profileDir = process.env['BENCH_HTTP_PROFILE'];
  console.log(
    `http bench: ${tool.tool}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per server and endpoint (alternating), ` +
      `${plan ? `servers pinned to CPU ${plan.server}, load to CPU ${plan.load}` : 'no pinning'}, load average ${machine.load_average_start.join(' ')}`,
  );
  const profArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const svc = await startSvc([], plan?.server ?? null, { nodeArgs: profArgs });
  let bare: (Started & { url: string }) | undefined;
  const results: Record<string, { bare: Measured[]; svc: Measured[] }> = {};
  try {
    await postJson(`${svc.url}/api/v1/rulesets`, APPROVAL_RULESET);
    // The bare routes answer exactly what svc answers (duration_us aside).
    const constants: Record<string, unknown> = {};
    for (const e of ENDPOINTS) constants[e.bareRoute] = await postJson(`${svc.url}${e.path}`, JSON.parse(e.body));
    bare = await startBareHttp(constants, plan?.server ?? null, profArgs.length > 0 ? [...profArgs.slice(0, 2), `${profileDir}/bare`] : []);
    const run = (target: Started & { url: string }, e: Endpoint, seconds: number): Measured => {
      const cpu0 = cpuSeconds(target.pid);
      const r = runLoad({ url: `${target.url}${e.path}`, body: e.body, connections: CONNECTIONS, seconds, cpus: plan?.load ?? null });
      const cpu = cpuSeconds(target.pid) - cpu0;
      return { ...r, server_cpu_s: round(cpu, 2), rps_per_cpu_s: cpu > 0 ? Math.round(r.requests / cpu) : null };
    };
    for (const e of ENDPOINTS) {
      run(bare, e, WARMUP_SECONDS);
      run(svc, e, WARMUP_SECONDS);
      const rounds = { bare: [] as Measured[], svc: [] as Measured[] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const [name, target] of [
          ['bare', bare],
          ['svc', svc],
        ] as const) {
          const m = run(target, e, SECONDS);
          rounds[name].push(m);
          console.log(
            `  ${e.name.padEnd(28)} round ${r + 1} ${name.padEnd(4)} ${String(m.rps).padStart(7)} req/s  p50 ${m.p50_ms.toFixed(2)} ms  p99 ${m.p99_ms.toFixed(2)} ms  ` +
              `${String(m.rps_per_cpu_s ?? '-').padStart(7)} req/cpu-s  errors ${m.errors}`,
          );
        }
      }
      results[e.name] = rounds;
    }
  } finally {
    await svc.stop();
    await bare?.stop();
  }

  const summary: SummaryRow[] = [];
  for (const e of ENDPOINTS) {
    const r = results[e.name]!;
    const med = (xs: Measured[], f: (m: Measured) => number | null) => median(xs.map((m) => f(m) ?? Number.NaN));
    const errors = [...r.bare, ...r.svc].reduce((n, m) => n + m.errors, 0);
    summary.push(
      throughputRow(
        `${e.name} requests/s`,
        'req/s',
        med(r.svc, (m) => m.rps),
        med(r.bare, (m) => m.rps),
        'bare fastify',
        TARGET_RATIO,
        errors ? `${errors} errors` : undefined,
      ),
      absoluteRow(
        `${e.name} p99 latency at ${CONNECTIONS} connections`,
        'ms',
        round(
          med(r.svc, (m) => m.p99_ms),
          2,
        ),
        `< ${TARGET_P99_MS} ms`,
        med(r.svc, (m) => m.p99_ms) < TARGET_P99_MS,
        `bare: ${round(
          med(r.bare, (m) => m.p99_ms),
          2,
        )} ms`,
      ),
      throughputRow(
        `${e.name} requests per server CPU-second`,
        'req/cpu-s',
        med(r.svc, (m) => m.rps_per_cpu_s),
        med(r.bare, (m) => m.rps_per_cpu_s),
        'bare fastify',
        null,
      ),
    );
  }
  printSummary(summary);
  writeReport({
    suite: 'http',
    machine,
    method:
      `${tool.tool} with ${CONNECTIONS} connections over loopback; ${ROUNDS} rounds of ${SECONDS} s per server, alternating bare and svc, after ${WARMUP_SECONDS} s warm-up each; medians. ` +
      `${plan ? `Both servers pinned to CPU ${plan.server} (taskset), the load generator to CPU ${plan.load}: each server has one core.` : 'No CPU pinning (load generator and server share the cores).'} ` +
      "svc runs with its defaults (metrics on, audit sampling 10% to stdout → /dev/null); the bare fastify server has the same route patterns (same routing work) and answers the same JSON as a constant, with fastify's default JSON parser and serializer.",
    summary,
    details: { connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, cores: cpus().length, pinning: plan, endpoints: ENDPOINTS, results },
  });
}

runMain(main);
