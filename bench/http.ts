/**
 * HTTP suite: `POST /api/v1/execute/:name` and `POST /api/v1/eval` of the real server
 * (dist/, default flags: metrics on, audit sampling 10% to stdout) under load, against two
 * baselines in the same run whose routes answer the same JSON as a constant: the floor of this
 * stack, a bare `node:http` server that reads and parses the body (bench/lib/bare-node-http.mjs),
 * and a bare fastify server (same fastify, default JSON parser and serializer). Rounds run the
 * three servers back to back, the order rotating each round; the targets are judged on the
 * median of the per-round ratios (paired within a round, as the auth suite does), the medians
 * of each server are reported next to them.
 *
 * Load: wrk (or autocannon), 50 connections, loopback, bounded by time. NOTE: load generator
 * and servers share the machine; with 2+ cores and taskset, servers are pinned to CPU 0 and the
 * load generator to the other CPUs, so each server gets exactly one core and the generator never
 * steals it. Server CPU seconds per round are read from /proc, giving requests per CPU-second
 * too (less sensitive to other work on the machine).
 *
 *   node --import tsx bench/http.ts       (after building dist/; or `bash bench/run.sh http`)
 *   BENCH_HTTP_SECONDS=2 BENCH_HTTP_ROUNDS=15 BENCH_HTTP_CONNECTIONS=50 BENCH_HTTP_INSTANCES=3
 *   BENCH_HTTP_PROFILE=<dir>: run svc under --cpu-prof, write the profile into <dir>
 */
import { cpus } from 'node:os';
import { runLoad, loadTool, type LoadRound } from './lib/load.js';
import { BARE_NODE_HTTP, cpuPlan, cpuSeconds, postJson, startBareHttp, startSvc, type Started } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, writeReport, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const SECONDS = envInt('BENCH_HTTP_SECONDS', 2);
const ROUNDS = envInt('BENCH_HTTP_ROUNDS', 15);
/** Fresh sets of the three servers the rounds are spread over (each set warmed up first). */
const INSTANCES = envInt('BENCH_HTTP_INSTANCES', 3);
const CONNECTIONS = envInt('BENCH_HTTP_CONNECTIONS', 50);
const WARMUP_SECONDS = 2;
/** Target against bare fastify, and against the bare node:http floor. */
const TARGET_RATIO = 0.85;
const TARGET_FLOOR_RATIO = 0.95;
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

/** The servers of a round: the node:http floor, bare fastify, svc. */
type Server = 'node' | 'fastify' | 'svc';
const SERVERS: readonly Server[] = ['node', 'fastify', 'svc'];

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
    `http bench: ${tool.tool}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per server and endpoint over ${INSTANCES} fresh sets of servers (node:http / fastify / svc, order rotating), ` +
      `${plan ? `servers pinned to CPU ${plan.server}, load to CPU ${plan.load}` : 'no pinning'}, load average ${machine.load_average_start.join(' ')}`,
  );
  const profArgs = (sub: string) => (profileDir ? ['--cpu-prof', '--cpu-prof-dir', sub ? `${profileDir}/${sub}` : profileDir] : []);
  const results: Record<string, Record<Server, Measured[]>> = {};
  for (const e of ENDPOINTS) results[e.name] = { node: [], fastify: [], svc: [] };
  // NOTE (bench/NOTES.md "node:http floor"): fresh processes of the same build differ by up to
  // 15% in CPU per request (what V8 optimised when, code placement), more than the effects
  // measured here; the rounds are therefore spread over INSTANCES fresh sets of the servers.
  const perInstance = Math.max(1, Math.ceil(ROUNDS / INSTANCES));
  let nextRound = 0;
  for (let inst = 0; inst < INSTANCES && nextRound < ROUNDS; inst++) {
    const servers: Partial<Record<Server, Started & { url: string }>> = {};
    try {
      const svc = await startSvc([], plan?.server ?? null, { nodeArgs: profArgs(inst === 0 ? '' : `svc-${inst}`) });
      servers.svc = svc;
      await postJson(`${svc.url}/api/v1/rulesets`, APPROVAL_RULESET);
      // The bare routes answer exactly what svc answers (duration_us aside).
      const constants: Record<string, unknown> = {};
      for (const e of ENDPOINTS) constants[e.bareRoute] = await postJson(`${svc.url}${e.path}`, JSON.parse(e.body));
      servers.fastify = await startBareHttp(constants, plan?.server ?? null, profArgs('bare'));
      servers.node = await startBareHttp(constants, plan?.server ?? null, profArgs('node'), BARE_NODE_HTTP);
      const run = (s: Server, e: Endpoint, seconds: number): Measured => {
        const target = servers[s] as Started & { url: string };
        const cpu0 = cpuSeconds(target.pid);
        const r = runLoad({ url: `${target.url}${e.path}`, body: e.body, connections: CONNECTIONS, seconds, cpus: plan?.load ?? null });
        const cpu = cpuSeconds(target.pid) - cpu0;
        return { ...r, server_cpu_s: round(cpu, 2), rps_per_cpu_s: cpu > 0 ? Math.round(r.requests / cpu) : null };
      };
      const first = nextRound;
      for (const e of ENDPOINTS) {
        for (const s of SERVERS) run(s, e, WARMUP_SECONDS);
        const rounds = results[e.name]!;
        for (let r = first; r < Math.min(ROUNDS, first + perInstance); r++) {
          // NOTE: the order rotates each round so that no server always runs right after another.
          for (const s of [...SERVERS.slice(r % 3), ...SERVERS.slice(0, r % 3)]) {
            const m = run(s, e, SECONDS);
            rounds[s].push(m);
            console.log(
              `  ${e.name.padEnd(28)} round ${String(r + 1).padStart(2)} (servers ${inst + 1}) ${s.padEnd(7)} ${String(m.rps).padStart(7)} req/s  p50 ${m.p50_ms.toFixed(2)} ms  p99 ${m.p99_ms.toFixed(2)} ms  ` +
                `${String(m.rps_per_cpu_s ?? '-').padStart(7)} req/cpu-s  errors ${m.errors}`,
            );
          }
        }
      }
      nextRound = Math.min(ROUNDS, first + perInstance);
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
    }
  }

  const summary: SummaryRow[] = [];
  for (const e of ENDPOINTS) {
    const r = results[e.name]!;
    summary.push(...endpointRows(e.name, r));
  }
  printSummary(summary);
  writeReport({
    suite: 'http',
    machine,
    method:
      `${tool.tool} with ${CONNECTIONS} connections over loopback; ${ROUNDS} rounds of ${SECONDS} s per server over ${INSTANCES} fresh sets of server processes, each round running the bare node:http server, bare fastify and svc back to back in an order that rotates each round, after ${WARMUP_SECONDS} s warm-up of each process. ` +
      'Ratios are the median of the per-round ratios (paired within a round, which cancels most of the drift of a shared machine); the median figures of each server are in the note. ' +
      `${plan ? `All servers pinned to CPU ${plan.server} (one runs load at a time), the load generator to CPU ${plan.load}: each server has one core.` : 'No CPU pinning (load generator and server share the cores).'} ` +
      'svc runs with its defaults (metrics on, audit sampling 10% to stdout → /dev/null); both baselines have the same route patterns and answer the same JSON as a constant: ' +
      'node:http reads the body and parses it with JSON.parse (the floor of any JSON route on this stack), fastify uses its default JSON parser and serializer.',
    summary,
    details: {
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      instances: INSTANCES,
      cores: cpus().length,
      pinning: plan,
      endpoints: ENDPOINTS,
      results,
    },
  });
}

/** The summary rows of one endpoint: svc against each baseline (paired ratios), p99, CPU per request. */
function endpointRows(name: string, r: Record<Server, Measured[]>): SummaryRow[] {
  const med = (xs: Measured[], f: (m: Measured) => number | null) => median(xs.map((m) => f(m) ?? Number.NaN));
  const paired = (base: Server, f: (m: Measured) => number | null): number =>
    round(median(r.svc.map((x, i) => (f(x) ?? Number.NaN) / (f(r[base][i] as Measured) ?? Number.NaN))), 3);
  const errors = SERVERS.reduce((n, s) => n + r[s].reduce((k, m) => k + m.errors, 0), 0);
  const errNote = errors ? `; ${errors} errors` : '';
  const rps = (s: Server) => med(r[s], (m) => m.rps);
  const perCpu = (s: Server) => med(r[s], (m) => m.rps_per_cpu_s);
  const usPerReq = (s: Server) => round(1e6 / perCpu(s), 1);
  const rows: SummaryRow[] = [];
  for (const [base, label, target] of [
    ['node', 'bare node:http', TARGET_FLOOR_RATIO],
    ['fastify', 'bare fastify', TARGET_RATIO],
  ] as const) {
    const ratio = paired(base, (m) => m.rps);
    rows.push({
      metric: `${name} requests/s vs ${label} (median of per-round ratios)`,
      unit: 'req/s',
      svc: rps('svc'),
      baseline: rps(base),
      baseline_name: label,
      ratio,
      target: `>= ${target} x ${label}`,
      pass: ratio >= target,
      note: `medians ${rps('svc')} vs ${rps(base)} req/s; per server CPU-second ${paired(base, (m) => m.rps_per_cpu_s)}${errNote}`,
    });
  }
  rows.push(
    absoluteRow(
      `${name} p99 latency at ${CONNECTIONS} connections`,
      'ms',
      round(
        med(r.svc, (m) => m.p99_ms),
        2,
      ),
      `< ${TARGET_P99_MS} ms`,
      med(r.svc, (m) => m.p99_ms) < TARGET_P99_MS,
      `node:http: ${round(
        med(r.node, (m) => m.p99_ms),
        2,
      )} ms, fastify: ${round(
        med(r.fastify, (m) => m.p99_ms),
        2,
      )} ms`,
    ),
    absoluteRow(`${name} server CPU per request`, 'us', usPerReq('svc'), 'report', true, `node:http ${usPerReq('node')} us, fastify ${usPerReq('fastify')} us`),
  );
  return rows;
}

runMain(main);
