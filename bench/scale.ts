/**
 * Scale suite: the real server started on a rules dir holding 10, 1,000 and 10,000
 * rulesets (generated into temp dirs by ./lib/scale-rulesets.ts: 5 decisions and 4 terminals
 * each, distinct thresholds, 4 tests and an input schema each). For each size: time from spawn
 * to "http listening" (rules loaded and compiled, listening) and the server's main-thread CPU
 * time until then (steadier than the wall clock on a busy machine), RSS when ready and after the load, then execute latency and throughput:
 *   - latency: sequential requests on one keep-alive connection to random stored rulesets
 *     (median and p99, measured by the client);
 *   - throughput: wrk, 50 connections, each request to a random stored ruleset; at the largest
 *     size also with the load on as few rulesets as the smallest size stores (storing many
 *     rulesets vs spreading the traffic over them);
 *   - the spread ratio (the target): the smallest and the largest size up together, measured
 *     back to back in alternating rounds, the median of the per-round ratios (one server after
 *     the other moved by up to 2x on a noisy machine).
 * Targets: ready in under 5 s and under 512 MB RSS with 10,000 rulesets; latency flat from 10
 * to 10,000 (10,000 within 1.25x of 10, median of the sequential requests).
 *
 *   node --import tsx bench/scale.ts   (after building dist/)   BENCH_SCALE_SIZES=10,1000,10000
 *   BENCH_SCALE_WRITE_DIR=<dir>: only write the largest size's rules dir there (to profile a start).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadTool, runLoad } from './lib/load.js';
import { BODY, ruleset } from './lib/scale-rulesets.js';
import { cpuPlan, rssBytes, startSvc } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, throughputRow, timeRow, writeReport, type SummaryRow, runMain } from './lib/report.js';

const SIZES = (process.env['BENCH_SCALE_SIZES'] ?? '10,1000,10000').split(',').map(Number);
const SEQUENTIAL = envInt('BENCH_SCALE_REQUESTS', 3000);
const LOAD_SECONDS = envInt('BENCH_SCALE_SECONDS', 4);
const TARGET_READY_MS = 5000;
const TARGET_RSS_MB = 512;
const TARGET_FLAT = 1.25;
/** Uniform random access over 10,000 stored rulesets: at least this share of the throughput with 10. */
const TARGET_SPREAD = 0.85;
/** Paired rounds of the spread ratio (both servers up, alternating): rounds and seconds each. */
const PAIRED_ROUNDS = envInt('BENCH_SCALE_PAIRED_ROUNDS', 7);
const PAIRED_SECONDS = envInt('BENCH_SCALE_PAIRED_SECONDS', 2);

function makeDir(n: number, into?: string): string {
  const dir = into ?? mkdtempSync(join(tmpdir(), `svc-bench-scale-${n}-`));
  for (let i = 0; i < n; i++) {
    const r = ruleset(i);
    writeFileSync(join(dir, `${(r['config'] as { name: string }).name}.json`), JSON.stringify(r, null, 2));
  }
  return dir;
}

/** Sequential POSTs on one keep-alive connection, each to a random ruleset; latencies in µs. */
async function sequential(url: string, n: number, count: number): Promise<number[]> {
  const u = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  const one = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve((performance.now() - t0) * 1000) : reject(new Error(`${path}: ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(BODY);
    });
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 300; i++) await one(`/api/v1/execute/rs-${String(next()).padStart(5, '0')}`);
  for (let i = 0; i < count; i++) out.push(await one(`/api/v1/execute/rs-${String(next()).padStart(5, '0')}`));
  agent.destroy();
  return out;
}

/** CPU time (user + system) of a process's main thread so far, in ms (from /proc; 0 where there is none). */
function mainThreadCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** USER_HZ of /proc times (100 on Linux). */
const CLOCK_TICKS = 100;

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

interface SizeResult {
  rulesets: number;
  ready_ms: number;
  /** CPU time of the server's main thread until ready (steadier than `ready_ms` on a busy machine). */
  cpu_ready_ms: number;
  rss_ready_mb: number;
  rss_after_mb: number;
  latency_us_p50: number;
  latency_us_p99: number;
  rps: number | null;
  rps_p99_ms: number | null;
  /** Throughput with the load on the first `hot_rulesets` rulesets only (largest size only). */
  rps_hot: number | null;
  hot_rulesets: number | null;
}

async function main(): Promise<void> {
  // Only write the largest size's rules dir (to profile a start by hand, bench/NOTES.md "Many rulesets").
  const writeDir = process.env['BENCH_SCALE_WRITE_DIR'];
  if (writeDir !== undefined) {
    mkdirSync(writeDir, { recursive: true });
    makeDir(Math.max(...SIZES), writeDir);
    console.log(`wrote ${Math.max(...SIZES)} rulesets to ${writeDir}`);
    return;
  }
  const machine = machineInfo();
  const plan = cpuPlan();
  const tool = loadTool();
  console.log(
    `scale bench: sizes ${SIZES.join(', ')}; ${SEQUENTIAL} sequential requests and ${LOAD_SECONDS} s of ${tool.tool ?? 'no load tool'} per size; load average ${machine.load_average_start.join(' ')}`,
  );
  const results: SizeResult[] = [];
  for (const n of SIZES) {
    const dir = makeDir(n);
    try {
      const svc = await startSvc(['--rules-dir', dir], plan?.server ?? null);
      try {
        const rssReady = rssBytes(svc.pid) / 2 ** 20;
        const cpuReady = mainThreadCpuMs(svc.pid);
        const lat = await sequential(svc.url, n, SEQUENTIAL);
        let rps: number | null = null;
        let rpsP99: number | null = null;
        let rpsHot: number | null = null;
        let hotCount: number | null = null;
        if (tool.tool !== null) {
          const paths = Array.from({ length: Math.min(n, 10_000) }, (_, i) => `/api/v1/execute/rs-${String(i).padStart(5, '0')}`);
          runLoad({ url: `${svc.url}${paths[0]}`, body: BODY, connections: 50, seconds: 1, cpus: plan?.load ?? null, paths });
          const r = runLoad({ url: `${svc.url}${paths[0]}`, body: BODY, connections: 50, seconds: LOAD_SECONDS, cpus: plan?.load ?? null, paths });
          if (r.errors > 0) throw new Error(`${r.errors} failed requests at ${n} rulesets`);
          rps = r.rps;
          rpsP99 = r.p99_ms;
          // The same load on as few rulesets as the smallest size stores: tells storing many
          // rulesets apart from spreading the traffic over them (bench/NOTES.md, "Many rulesets").
          if (tool.tool === 'wrk' && n === Math.max(...SIZES) && n > SIZES[0]!) {
            const hotPaths = paths.slice(0, SIZES[0]);
            const h = runLoad({
              url: `${svc.url}${hotPaths[0]}`,
              body: BODY,
              connections: 50,
              seconds: LOAD_SECONDS,
              cpus: plan?.load ?? null,
              paths: hotPaths,
            });
            if (h.errors > 0) throw new Error(`${h.errors} failed requests at ${n} rulesets (hot set)`);
            rpsHot = h.rps;
            hotCount = hotPaths.length;
          }
        }
        const res: SizeResult = {
          rulesets: n,
          ready_ms: Math.round(svc.readyMs),
          cpu_ready_ms: cpuReady,
          rss_ready_mb: round(rssReady, 1),
          rss_after_mb: round(rssBytes(svc.pid) / 2 ** 20, 1),
          latency_us_p50: round(median(lat), 1),
          latency_us_p99: round(percentile(lat, 99), 1),
          rps,
          rps_p99_ms: rpsP99,
          rps_hot: rpsHot,
          hot_rulesets: hotCount,
        };
        results.push(res);
        console.log(
          `  ${String(n).padStart(6)} rulesets: ready ${res.ready_ms} ms (main thread CPU ${res.cpu_ready_ms} ms), RSS ${res.rss_ready_mb} MB (after load ${res.rss_after_mb} MB), ` +
            `latency p50 ${res.latency_us_p50} us p99 ${res.latency_us_p99} us, ${rps ?? '-'} req/s (p99 ${rpsP99 ?? '-'} ms)` +
            (rpsHot !== null ? `, ${rpsHot} req/s with the load on ${hotCount} of them` : ''),
        );
      } finally {
        await svc.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const small = results[0]!;
  const big = results.at(-1)!;
  const paired = tool.tool === 'wrk' && big.rulesets > small.rulesets ? await pairedRounds(small.rulesets, big.rulesets, plan) : null;
  const summary: SummaryRow[] = [
    absoluteRow(
      `start: ready (rules loaded, listening) with ${big.rulesets} rulesets`,
      'ms',
      big.ready_ms,
      `< ${TARGET_READY_MS} ms`,
      big.ready_ms < TARGET_READY_MS,
      `main-thread CPU until ready ${big.cpu_ready_ms} ms; ${small.rulesets} rulesets: ${small.ready_ms} ms (CPU ${small.cpu_ready_ms} ms)`,
    ),
    absoluteRow(
      `memory: RSS after the load with ${big.rulesets} rulesets`,
      'MB',
      big.rss_after_mb,
      `< ${TARGET_RSS_MB} MB`,
      big.rss_after_mb < TARGET_RSS_MB,
      `when ready ${big.rss_ready_mb} MB; ${small.rulesets} rulesets: ${small.rss_after_mb} MB`,
    ),
    timeRow(
      `execute latency p50 (sequential, random ruleset) with ${big.rulesets} vs ${small.rulesets} rulesets`,
      'us',
      big.latency_us_p50,
      small.latency_us_p50,
      `${small.rulesets} rulesets`,
      TARGET_FLAT,
      `p99 ${big.latency_us_p99} us vs ${small.latency_us_p99} us`,
    ),
  ];
  if (paired !== null) {
    // NOTE (bench/NOTES.md "Seventh session"): judged on the median of per-round ratios, both
    // servers up and measured back to back in each round: one server after the other, each
    // right after its start, moved by up to 2x between runs on a noisy machine.
    summary.push({
      ...throughputRow(
        `execute throughput (50 connections, random ruleset) with ${big.rulesets} vs ${small.rulesets} rulesets (median of per-round ratios)`,
        'req/s',
        median(paired.spread),
        median(paired.small),
        `${small.rulesets} rulesets`,
        TARGET_SPREAD,
      ),
      ratio: round(paired.ratio, 3),
      pass: paired.ratio >= TARGET_SPREAD,
      note:
        `throughput: higher is better. Uniform random over every stored ruleset is the worst case for CPU caches (bench/NOTES.md, "Many rulesets"). ` +
        `${paired.spread.length} rounds of ${PAIRED_SECONDS} s, both servers up; per-round ratios ${paired.ratios.map((r) => round(r, 3)).join(' ')}; ` +
        `one-shot figures after each start: ${big.rps ?? '-'} vs ${small.rps ?? '-'} req/s`,
    });
  } else if (big.rps !== null && small.rps !== null) {
    summary.push({
      ...throughputRow(
        `execute throughput (50 connections, random ruleset) with ${big.rulesets} vs ${small.rulesets} rulesets`,
        'req/s',
        big.rps,
        small.rps,
        `${small.rulesets} rulesets`,
        TARGET_SPREAD,
      ),
      note: 'throughput: higher is better. Uniform random over every stored ruleset is the worst case for CPU caches (bench/NOTES.md, "Many rulesets")',
    });
  }
  if (big.rps_hot !== null && small.rps !== null) {
    summary.push({
      ...throughputRow(
        `execute throughput (50 connections) with ${big.rulesets} rulesets stored, the load on ${big.hot_rulesets} of them, vs ${small.rulesets} rulesets`,
        'req/s',
        big.rps_hot,
        small.rps,
        `${small.rulesets} rulesets`,
        null,
      ),
      note: 'throughput: higher is better; ratio near 1: the number stored does not slow execution down',
    });
  }
  printSummary(summary);
  writeReport({
    suite: 'scale',
    machine,
    method:
      `Rules dirs of ${SIZES.join(', ')} generated rulesets (5 decisions, 4 terminals, 4 tests and an input schema each, ~4.5 KB of JSON). Ready = spawn of node dist/bin/svc-server.js until its "http listening" log line; the CPU time of its main thread until then from /proc ` +
      `(all rulesets read, validated and compiled first). RSS from /proc. Latency: ${SEQUENTIAL} sequential requests on one keep-alive connection after 300 warm-up, each to a random stored ruleset, timed by the client. ` +
      `Throughput: ${tool.tool ?? 'n/a'} with 50 connections for ${LOAD_SECONDS} s, each request to a random stored ruleset. ` +
      `The spread ratio: a server of the smallest and one of the largest size up together (pinned to the same CPU), ${PAIRED_SECONDS} s of warm-up each, then ${PAIRED_ROUNDS} rounds of ${PAIRED_SECONDS} s each, ` +
      `the two servers back to back in an order that alternates; the median of the per-round ratios. ${plan ? `Server pinned to CPU ${plan.server}, load generator to CPU ${plan.load}.` : ''}`,
    summary,
    details: { sizes: results, paired },
  });
}

/**
 * The spread ratio measured in pairs: servers of `small` and `big` rulesets up together (same
 * CPU), warmed up, then rounds in which each serves PAIRED_SECONDS of 50 connections back to
 * back (the small one to random rulesets of its own, the big one to random rulesets of all it
 * stores), the order alternating. Returns each round's figures and the median of the ratios.
 */
async function pairedRounds(
  small: number,
  big: number,
  plan: ReturnType<typeof cpuPlan>,
): Promise<{ small: number[]; spread: number[]; ratios: number[]; ratio: number }> {
  const dirs = [makeDir(small), makeDir(big)];
  const servers: Awaited<ReturnType<typeof startSvc>>[] = [];
  try {
    for (const dir of dirs) servers.push(await startSvc(['--rules-dir', dir], plan?.server ?? null));
    const load = (i: number, seconds: number): number => {
      const n = i === 0 ? small : big;
      const paths = Array.from({ length: n }, (_, k) => `/api/v1/execute/rs-${String(k).padStart(5, '0')}`);
      const r = runLoad({ url: `${servers[i]!.url}${paths[0]}`, body: BODY, connections: 50, seconds, cpus: plan?.load ?? null, paths });
      if (r.errors > 0) throw new Error(`${r.errors} failed requests at ${n} rulesets (paired rounds)`);
      return r.rps;
    };
    load(0, PAIRED_SECONDS);
    load(1, PAIRED_SECONDS);
    const out = { small: [] as number[], spread: [] as number[], ratios: [] as number[], ratio: 0 };
    for (let round = 0; round < PAIRED_ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const got: number[] = [];
      for (const i of order) got[i] = load(i, PAIRED_SECONDS);
      out.small.push(got[0]!);
      out.spread.push(got[1]!);
      out.ratios.push(got[1]! / got[0]!);
    }
    out.ratio = median(out.ratios);
    console.log(
      `  paired rounds: ${small} rulesets ${out.small.join(' ')} req/s; ${big} rulesets (spread) ${out.spread.join(' ')} req/s; median ratio ${round(out.ratio, 3)}`,
    );
    return out;
  } finally {
    for (const s of servers) await s.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
