/**
 * Shadow suite (EXTENSIONS.md 4 "Shadow runs", issue 21): `POST /api/v1/execute/:name` of three
 * svc servers in the same run: no shadow, a shadow at 10% and a shadow at 100% of the ruleset's
 * executions. The candidate runs after the live answer is written (a setImmediate drain of a
 * bounded queue, src/service/shadow-registry.ts), so it costs the server CPU but should not
 * reach the caller's latency. Rounds alternate none / 10% / 100%, the order rotating from round
 * to round; the targets are judged on the medians of per-round ratios (paired within a round).
 * Targets: p99 at 10% unchanged within noise (ratio at most 1.10); throughput at 100% at least
 * 0.6 of no shadow.
 *
 * In process, the same run also measures the façade's execute of the same ruleset with no shadow,
 * 10% and 100% (the candidate drains included), which the loaded HTTP measurement cannot resolve.
 *
 *   node --import tsx bench/shadow.ts       (after building dist/; or `bash bench/run.sh shadow`)
 *   BENCH_SHADOW_SECONDS=1 BENCH_SHADOW_ROUNDS=30 BENCH_SHADOW_CONNECTIONS=50
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { NO_METRICS } from '../src/service/ports.js';
import { RuleService } from '../src/service/rule-service.js';
import type { CallContext } from '../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../src/signing/index.js';
import { MemoryStore } from '../src/store/index.js';
import { runLoad, loadTool, type LoadRound } from './lib/load.js';
import { cpuPlan, cpuSeconds, startSvc, type SvcServer } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, writeReport, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const SECONDS = envInt('BENCH_SHADOW_SECONDS', 1);
const ROUNDS = envInt('BENCH_SHADOW_ROUNDS', 30);
const CONNECTIONS = envInt('BENCH_SHADOW_CONNECTIONS', 50);
const WARMUP_SECONDS = 2;
const TARGETS = { p99At10: 1.1, rpsAt100: 0.6 } as const;

interface Measured extends LoadRound {
  readonly server_cpu_s: number;
}

type Mode = 'none' | 'p10' | 'p100';
const RATE: Record<Mode, number | null> = { none: null, p10: 10, p100: 100 };

async function main(): Promise<void> {
  const tool = loadTool();
  if (tool.tool === null) {
    console.log(`shadow bench skipped: ${tool.reason}`);
    return;
  }
  const machine = machineInfo();
  const plan = cpuPlan();
  const servers: Partial<Record<Mode, SvcServer>> = {};
  const results: Record<Mode, Measured[]> = { none: [], p10: [], p100: [] };
  const modes: Mode[] = ['none', 'p10', 'p100'];
  const name = APPROVAL_RULESET.config.name;
  // The candidate: the same steps under another version label, so it does the same work as the live version.
  const candidate = { ...APPROVAL_RULESET, config: { ...APPROVAL_RULESET.config, version: 'candidate' } };
  const shadowed: Partial<Record<Mode, number>> = {};
  try {
    console.log(
      `shadow bench: ${tool.tool}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per mode (alternating), ` +
        `${plan ? `servers pinned to CPU ${plan.server}, load to CPU ${plan.load}` : 'no pinning'}, load average ${machine.load_average_start.join(' ')}`,
    );
    for (const m of [...modes].reverse()) {
      const s = await startSvc([], plan?.server ?? null);
      servers[m] = s;
      const put = await fetch(`${s.url}/api/v1/rulesets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(APPROVAL_RULESET),
      });
      if (put.status !== 200 && put.status !== 201) throw new Error(`${m}: POST ruleset answered ${put.status}: ${await put.text()}`);
      const rate = RATE[m];
      if (rate !== null) {
        const res = await fetch(`${s.url}/api/v1/rulesets/${name}/shadow`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ candidate, sample_rate: rate }),
        });
        if (res.status !== 200) throw new Error(`${m}: PUT shadow answered ${res.status}: ${await res.text()}`);
      }
    }
    const path = `/api/v1/execute/${name}`;
    const body = JSON.stringify({ input: APPROVAL_INPUT });
    const run = (m: Mode, seconds: number): Measured => {
      const target = servers[m] as SvcServer;
      const cpu0 = cpuSeconds(target.pid);
      const r = runLoad({ url: `${target.url}${path}`, body, connections: CONNECTIONS, seconds, cpus: plan?.load ?? null });
      return { ...r, server_cpu_s: round(cpuSeconds(target.pid) - cpu0, 2) };
    };
    for (const m of modes) run(m, WARMUP_SECONDS);
    for (let r = 0; r < ROUNDS; r++) {
      for (const m of [...modes.slice(r % 3), ...modes.slice(0, r % 3)]) {
        const x = run(m, SECONDS);
        results[m].push(x);
        console.log(
          `  execute round ${r + 1} shadow ${m.padEnd(4)} ${String(x.rps).padStart(7)} req/s  p50 ${x.p50_ms.toFixed(2)} ms  p99 ${x.p99_ms.toFixed(2)} ms  errors ${x.errors}`,
        );
      }
    }
    // What the shadows counted: the candidate really ran on the sampled share.
    for (const m of ['p10', 'p100'] as const) {
      // Tried twice: the pooled connection of the PUT may have been closed by the server's keep-alive timeout.
      const url = `${(servers[m] as SvcServer).url}/api/v1/rulesets/${name}/shadow`;
      const res = await fetch(url).catch(() => fetch(url));
      const s = (await res.json()) as { executed: number; dropped: number };
      shadowed[m] = s.executed;
      console.log(`  shadow ${m}: ${s.executed} candidate runs, ${s.dropped} dropped`);
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }

  const med = (xs: Measured[], f: (m: Measured) => number) => median(xs.map(f));
  const paired = (m: Mode, f: (x: Measured) => number): number => median(results[m].map((x, i) => f(x) / f(results.none[i] as Measured)));
  const total = (m: Mode) => results[m].reduce((n, x) => n + x.requests, 0);
  const errors = (m: Mode) => results[m].reduce((n, x) => n + x.errors, 0);
  // Noise: how much no-shadow's own p99 moves between consecutive rounds (median of |ratio - 1|).
  const noneP99 = results.none.map((x) => x.p99_ms);
  const noise = round(median(noneP99.slice(1).map((v, i) => Math.abs(v / (noneP99[i] as number) - 1))), 3);
  const summary: SummaryRow[] = [];
  const p99At10 = round(
    paired('p10', (x) => x.p99_ms),
    3,
  );
  summary.push(
    absoluteRow(
      'execute p99 with a shadow at 10% / no shadow (median of per-round ratios)',
      'x',
      p99At10,
      `<= ${TARGETS.p99At10}`,
      p99At10 <= TARGETS.p99At10,
      `medians: ${round(
        med(results.p10, (x) => x.p99_ms),
        2,
      )} vs ${round(
        med(results.none, (x) => x.p99_ms),
        2,
      )} ms; round-to-round noise of no shadow's p99: ${round(noise * 100, 1)}%`,
    ),
  );
  const p99At100 = round(
    paired('p100', (x) => x.p99_ms),
    3,
  );
  summary.push(
    absoluteRow(
      'execute p99 with a shadow at 100% / no shadow (median of per-round ratios)',
      'x',
      p99At100,
      'report',
      true,
      `medians: ${round(
        med(results.p100, (x) => x.p99_ms),
        2,
      )} vs ${round(
        med(results.none, (x) => x.p99_ms),
        2,
      )} ms`,
    ),
  );
  for (const m of ['p10', 'p100'] as const) {
    const ratio = round(
      paired(m, (x) => x.rps),
      3,
    );
    const judged = m === 'p100';
    summary.push(
      absoluteRow(
        `execute throughput with a shadow at ${RATE[m]}% / no shadow (median of per-round ratios)`,
        'x',
        ratio,
        judged ? `>= ${TARGETS.rpsAt100}` : 'report',
        judged ? ratio >= TARGETS.rpsAt100 : true,
        `medians: ${med(results[m], (x) => x.rps)} vs ${med(results.none, (x) => x.rps)} req/s; candidate runs ${shadowed[m] ?? '?'} of ${total(m)} requests measured (and warm-up)` +
          (errors(m) ? `; ${errors(m)} errors` : ''),
      ),
    );
  }
  const micro = await inProcessUs();
  summary.push(
    absoluteRow(
      'in process: execute + its share of candidate runs, shadow at 10% minus no shadow',
      'us',
      round(micro.p10 - micro.none, 3),
      'report',
      true,
      `per execution: no shadow ${micro.none} us, 10% ${micro.p10} us, 100% ${micro.p100} us (best of 7 rounds of 20,000, drained every 100)`,
    ),
  );
  summary.push(absoluteRow('in process: execute with a shadow at 100% / no shadow', 'x', round(micro.p100 / micro.none, 3), 'report', true));
  printSummary(summary);
  writeReport({
    suite: 'shadow',
    machine,
    method:
      `${tool.tool} with ${CONNECTIONS} connections over loopback on POST /api/v1/execute/${name} (the approval scenario); ${ROUNDS} rounds of ${SECONDS} s per mode, alternating no shadow / shadow at 10% / shadow at 100% in an order that rotates each round, after ${WARMUP_SECONDS} s warm-up each; the targets are judged on the median of the per-round ratios (paired within a round). ` +
      `${plan ? `All three servers pinned to CPU ${plan.server} (one runs load at a time), the load generator to CPU ${plan.load}.` : 'No CPU pinning.'} ` +
      'The candidate is the live ruleset under another version label (the same work per run); each server runs with its defaults.',
    summary,
    details: { connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, cores: cpus().length, pinning: plan, shadowed, results },
  });
}

/**
 * Microseconds per `RuleService.execute` of the approval ruleset with no shadow, a shadow at 10%
 * and at 100%, the candidate's deferred runs included (a setImmediate turn every 100 executions
 * lets the drain run, as between requests). Best of 7 rounds of 20,000 each; each mode on a
 * fresh façade.
 */
async function inProcessUs(): Promise<{ none: number; p10: number; p100: number }> {
  const ctx: CallContext = { tenant: 'default', sourceIp: '127.0.0.1', transport: 'internal' } as CallContext;
  const name = APPROVAL_RULESET.config.name;
  const quiet = { error() {}, warn() {}, info() {}, debug() {}, child: () => quiet };
  const measure = async (rate: number | null): Promise<number> => {
    const service = new RuleService(
      {
        version: 'bench',
        role: 'standalone',
        writerAddr: null,
        executionTimeoutMs: 5000,
        maxSteps: 10_000,
        maxBatchSize: 100,
        signature: { ...DISABLED_SIGNATURE_POLICY },
      },
      {
        store: new MemoryStore(),
        metrics: NO_METRICS,
        audit: { write() {} },
        sampler: { rate: 0, shouldSample: () => false },
        logger: quiet as never,
        clock: () => performance.now(),
        now: Date.now,
      },
    );
    await service.putRuleset(ctx, APPROVAL_RULESET);
    if (rate !== null) {
      await service.putShadow(ctx, name, {
        candidate: { ...APPROVAL_RULESET, config: { ...APPROVAL_RULESET.config, version: 'candidate' } },
        sample_rate: rate,
      });
    }
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < 7; r++) {
      const t0 = performance.now();
      for (let b = 0; b < 200; b++) {
        for (let i = 0; i < 100; i++) service.execute(ctx, name, APPROVAL_INPUT, false);
        await new Promise((resolve) => setImmediate(resolve));
      }
      best = Math.min(best, ((performance.now() - t0) * 1000) / 20_000);
    }
    return round(best, 3);
  };
  // NOTE: no shadow is measured first and last (the first pass also warms the engine up): the better of the two counts.
  const first = await measure(null);
  const p10 = await measure(10);
  const p100 = await measure(100);
  const none = Math.min(first, await measure(null));
  return { none, p10, p100 };
}

runMain(main);
