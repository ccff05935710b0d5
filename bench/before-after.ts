/**
 * Before/after record of performance work: the build from before a change and the current build
 * measured in ONE run, alternating round by round, with the bare baselines beside them. Not part
 * of the default run (it needs the old build): build the old commit into a directory whose
 * node_modules resolve (e.g. a copy of dist/ next to a symlink to node_modules and the
 * package.json), then
 *
 *   BENCH_BEFORE=/path/to/old/dist node --import tsx bench/before-after.ts
 *
 * Measures: HTTP execute and eval (wrk, 50 connections; requests/s, p99, server CPU per
 * request), the 10,000-input batch over HTTP, and the batch façade in-process. Writes
 * bench/results/before-after-<timestamp>.json, which bench/report.ts puts into BENCHMARKS.md.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoad } from './lib/load.js';
import { cpuPlan, cpuSeconds, postJson, startBareHttp, startSvc, timedPost, type Started } from './lib/procs.js';
import { envInt, machineInfo, median, round, writeReport, runMain, type BeforeAfterRow } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const BEFORE = process.env['BENCH_BEFORE'];
const SECONDS = envInt('BENCH_BA_SECONDS', 4);
const ROUNDS = envInt('BENCH_BA_ROUNDS', 5);

/** The time (ms) of one POST that must answer 200. */
async function post(url: string, body: string): Promise<number> {
  const r = await timedPost(url, body);
  if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
  return r.ms;
}

async function main(): Promise<void> {
  if (!BEFORE) throw new Error('set BENCH_BEFORE to the dist/ directory of the old build');
  const machine = machineInfo();
  const plan = cpuPlan();
  const rows: BeforeAfterRow[] = [];
  const cpuList = plan?.server ?? null;
  const before = await startSvc([], cpuList, { bin: join(BEFORE, 'bin', 'svc-server.js') });
  const after = await startSvc([], cpuList);
  let bare: (Started & { url: string }) | undefined;
  const execPath = `/api/v1/execute/${APPROVAL_RULESET.config.name}`;
  const endpoints = [
    { name: 'POST /api/v1/execute/:name', path: execPath, bare: '/api/v1/execute/:name', body: JSON.stringify({ input: APPROVAL_INPUT }) },
    {
      name: 'POST /api/v1/eval',
      path: '/api/v1/eval',
      bare: '/api/v1/eval',
      body: JSON.stringify({ expression: 'user.age >= 18 && user.country in ["US", "CA"]', context: APPROVAL_INPUT }),
    },
  ];
  const batchBody = JSON.stringify({
    inputs: Array.from({ length: 10_000 }, (_, i) => ({
      user: { age: 14 + (i % 60), vip: i % 3 === 0, country: ['US', 'CA', 'FR'][i % 3] },
      order: { amount: (i * 37) % 3000 },
    })),
  });
  try {
    for (const s of [before, after]) await postJson(`${s.url}/api/v1/rulesets`, APPROVAL_RULESET);
    const constants: Record<string, unknown> = {};
    for (const e of endpoints) constants[e.bare] = await postJson(`${after.url}${e.path}`, JSON.parse(e.body));
    constants['/api/v1/execute/:name/batch'] = await postJson(`${after.url}${execPath}/batch`, JSON.parse(batchBody));
    bare = await startBareHttp(constants, cpuList);
    const targets = [
      ['bare', bare],
      ['before', before],
      ['after', after],
    ] as const;
    for (const e of endpoints) {
      const m: Record<string, { rps: number[]; p99: number[]; us: number[] }> = {
        bare: { rps: [], p99: [], us: [] },
        before: { rps: [], p99: [], us: [] },
        after: { rps: [], p99: [], us: [] },
      };
      for (const [, t] of targets) runLoad({ url: `${t.url}${e.path}`, body: e.body, connections: 50, seconds: 2, cpus: plan?.load ?? null });
      for (let r = 0; r < ROUNDS; r++) {
        for (const [name, t] of targets) {
          const c0 = cpuSeconds(t.pid);
          const x = runLoad({ url: `${t.url}${e.path}`, body: e.body, connections: 50, seconds: SECONDS, cpus: plan?.load ?? null });
          const cpu = cpuSeconds(t.pid) - c0;
          m[name]!.rps.push(x.rps);
          m[name]!.p99.push(x.p99_ms);
          m[name]!.us.push((cpu / x.requests) * 1e6);
          console.log(`  ${e.name} round ${r + 1} ${name.padEnd(6)} ${x.rps} req/s p99 ${x.p99_ms} ms ${round((cpu / x.requests) * 1e6, 1)} us CPU/request`);
        }
      }
      const med = (n: string, k: 'rps' | 'p99' | 'us') => round(median(m[n]![k]), 2);
      rows.push(
        {
          metric: `${e.name} requests/s`,
          unit: 'req/s',
          before: med('before', 'rps'),
          after: med('after', 'rps'),
          baseline: med('bare', 'rps'),
          baseline_name: 'bare fastify',
          higher_is_better: true,
        },
        {
          metric: `${e.name} p99 latency (50 connections)`,
          unit: 'ms',
          before: med('before', 'p99'),
          after: med('after', 'p99'),
          baseline: med('bare', 'p99'),
          baseline_name: 'bare fastify',
          higher_is_better: false,
        },
        {
          metric: `${e.name} server CPU per request`,
          unit: 'us',
          before: med('before', 'us'),
          after: med('after', 'us'),
          baseline: med('bare', 'us'),
          baseline_name: 'bare fastify',
          higher_is_better: false,
        },
      );
    }
    const ms: Record<string, number[]> = { bare: [], before: [], after: [] };
    for (const [, t] of targets) for (let i = 0; i < 3; i++) await post(`${t.url}${execPath}/batch`, batchBody);
    for (let i = 0; i < 15; i++) for (const [name, t] of targets) ms[name]!.push(await post(`${t.url}${execPath}/batch`, batchBody));
    const eps = (n: string) => Math.round(10_000 / (median(ms[n]!) / 1000));
    rows.push({
      metric: 'batch of 10,000 over HTTP: executions/s end to end',
      unit: 'exec/s',
      before: eps('before'),
      after: eps('after'),
      baseline: eps('bare'),
      baseline_name: 'bare fastify',
      higher_is_better: true,
    });
  } finally {
    await before.stop();
    await after.stop();
    await bare?.stop();
  }
  // In-process batch façade: bench/batch.ts's `facade` contender on each build, alternating.
  const ns: Record<string, number[]> = { before: [], after: [] };
  for (let r = 0; r < 3; r++) {
    for (const [name, dist] of [
      ['before', BEFORE],
      ['after', null],
    ] as const) {
      const args = [...process.execArgv, fileURLToPath(new URL('./batch.ts', import.meta.url))];
      const [cmd, full] = plan ? ['taskset', ['-c', plan.server, process.execPath, ...args]] : [process.execPath, args];
      const res = spawnSync(cmd, full, {
        env: { ...process.env, BENCH_BATCH_CONTENDER: 'facade', ...(dist ? { BENCH_DIST: dist } : {}) },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (res.status !== 0) throw new Error(`facade on ${name} failed`);
      ns[name]!.push(JSON.parse(res.stdout.trim().split('\n').pop()!).ns_per_exec);
    }
  }
  rows.push({
    metric: 'batch façade in-process (executeBatch, audit sampling 10%): executions/s',
    unit: 'exec/s',
    before: Math.round(1e9 / median(ns['before']!)),
    after: Math.round(1e9 / median(ns['after']!)),
    baseline: null,
    baseline_name: null,
    higher_is_better: true,
  });
  for (const r of rows) console.log(`${r.metric.padEnd(70)} before ${r.before} after ${r.after} ${r.unit} (baseline ${r.baseline ?? '-'})`);
  writeReport({
    suite: 'before-after',
    // The section title in BENCHMARKS.md: what "before" was (BENCH_BA_TITLE).
    title: process.env['BENCH_BA_TITLE'] ?? 'Before and after the performance work',
    machine,
    method: `wrk 50 connections, ${ROUNDS} rounds of ${SECONDS} s per server alternating bare / before / after${plan ? `, servers pinned to CPU ${plan.server} and wrk to CPU ${plan.load}` : ''}; batch: 15 requests of 10,000 inputs each, alternating; façade: bench/batch.ts facade contender 3 times per build, alternating. Medians.`,
    summary: [],
    details: { before_dist: BEFORE },
    rows,
  });
}

runMain(main);
