/**
 * Batch suite: 10,000 inputs of the engine scenario (all four paths) executed
 *
 *   1. in the engine alone, in-process, on one core (each contender in its own process):
 *      - `walker`: the hand-written closure walker over the 10,000 inputs (two clock reads per
 *        item, like svc's per-item duration_us): the floor;
 *      - `engine`: svc's `execute()` over the 10,000 inputs with the batch's clock (one
 *        performance.now() per item boundary, src/service/batch-clock.ts); `engine-2reads`: two;
 *      - `facade`: `RuleService.executeBatch` in-process, what the batch endpoint runs: the
 *        engine plus per-item metrics and audit sampling (10%, lines discarded);
 *        `facade-noaudit`: the same with sampling 0%;
 *   2. end to end over HTTP: one `POST /api/v1/execute/:name/batch` with the 10,000 inputs at a
 *      time, against a bare fastify route that parses the same body and answers the same JSON
 *      as a constant (same run, alternating). Executions per second = 10,000 / request time.
 *
 * Target: the engine alone above 5 million executions per second (the `engine` row; the façade
 * rows show what per-item metrics and audit cost on top). Run: `bash bench/run.sh batch`.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { measureSync } from './measure.js';
import { cpuPlan, cpuSeconds, postJson, startBareHttp, startSvc, timedPost, type Started } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, runMain, throughputRow, writeReport, type SummaryRow } from './lib/report.js';
import { APPROVAL_RULESET, SCENARIOS, jsPredicate } from './lib/scenarios.js';

const ITEMS = 10_000;
const HTTP_REQUESTS = envInt('BENCH_BATCH_REQUESTS', 15);
const TARGET_EPS = 5_000_000;
const MEASURE = { roundMs: 200, rounds: 11, warmupMs: 700 };

/** 10,000 distinct inputs covering the four paths of the approval scenario. */
function inputs(): Record<string, unknown>[] {
  const countries = ['US', 'CA', 'FR', 'DE', 'US', 'CA'];
  return Array.from({ length: ITEMS }, (_, i) => ({
    user: { age: 14 + (i % 60), vip: i % 3 === 0, country: countries[i % countries.length] },
    order: { amount: (i * 37) % 3000 },
  }));
}

// ---------------------------------------------------------------- in-process contenders

type Runner = () => number;

/**
 * Imports a module of the build (dist/: what ships; BENCH_DIST: another build, for the
 * before/after comparison of bench/before-after.ts); typed by its source at the call.
 */
function dist(path: string): Promise<unknown> {
  const base = process.env['BENCH_DIST'];
  return import(base ? pathToFileURL(join(base, path)).href : new URL(`../dist/${path}`, import.meta.url).href);
}

async function contender(name: string): Promise<{ run: Runner; note: string }> {
  const items = inputs();
  const scenario = SCENARIOS['approval']!;
  if (name === 'walker') {
    type Node = { test: ((i: any) => boolean) | undefined; then: Node | null; else: Node | null; code: string; message: string };
    const nodes = new Map<string, Node>();
    for (const [code, message] of Object.entries(scenario.terminals)) nodes.set(code, { test: undefined, then: null, else: null, code, message });
    for (const d of [...scenario.decisions].reverse()) {
      const b = d.branches[0]!;
      nodes.set(d.id, { test: jsPredicate(b.cond), then: nodes.get(b.next)!, else: nodes.get(d.otherwise)!, code: '', message: '' });
    }
    const entry = nodes.get(scenario.entry)!;
    const output = Object.freeze({});
    const results: unknown[] = new Array(ITEMS);
    return {
      note: 'hand-written closures, two performance.now() reads per item, results array',
      run: () => {
        for (let i = 0; i < items.length; i++) {
          const start = performance.now();
          let n = entry;
          while (n.test !== undefined) n = n.test(items[i]) ? n.then! : n.else!;
          results[i] = { code: n.code, message: n.message, output, duration_us: Math.round((performance.now() - start) * 1000) };
        }
        return results.length;
      },
    };
  }
  const { compileRuleset, execute } = (await dist('ruleset/index.js')) as typeof import('../src/ruleset/index.js');
  if (name === 'engine' || name === 'engine-2reads') {
    const compiled = compileRuleset(APPROVAL_RULESET);
    const { ReusableClock } = (await dist('service/batch-clock.js')) as typeof import('../src/service/batch-clock.js');
    const clock = new ReusableClock(() => performance.now());
    const reuse = name === 'engine';
    const options = Object.freeze({ trace: false, clock: clock.read, timeoutMs: 5000, maxSteps: 10_000 });
    const results: unknown[] = new Array(ITEMS);
    return {
      note: reuse
        ? "svc execute() per item (dist) with the batch's clock: one performance.now() per item boundary"
        : 'svc execute() per item (dist), two performance.now() reads per item',
      run: () => {
        clock.read();
        for (let i = 0; i < items.length; i++) {
          if (reuse) clock.reuseNext();
          results[i] = execute(compiled, items[i], options);
        }
        return results.length;
      },
    };
  }
  if (name === 'facade' || name === 'facade-noaudit') {
    const { RuleService } = (await dist('service/rule-service.js')) as typeof import('../src/service/rule-service.js');
    const { MemoryStore } = (await dist('store/memory-store.js')) as typeof import('../src/store/memory-store.js');
    const { AuditLog, Metrics, silentLogger } = (await dist('observe/index.js')) as typeof import('../src/observe/index.js');
    const store = new MemoryStore();
    const audit = new AuditLog({ stdout: { write: () => true }, sampleRate: name === 'facade' ? 10 : 0 });
    const metrics = new Metrics({ version: 'bench', rulesCount: () => store.count() });
    const service = new RuleService(
      {
        version: 'bench',
        role: 'standalone',
        writerAddr: null,
        executionTimeoutMs: 5000,
        maxSteps: 10_000,
        maxBatchSize: ITEMS,
        signature: { enabled: false, require: false, trustedKeys: [], allowUnsignedLocal: true },
      },
      { store, metrics, audit, sampler: audit.sampler, logger: silentLogger(), clock: () => performance.now(), now: Date.now },
    );
    const ctx = { tenant: 'default', sourceIp: '127.0.0.1', transport: 'internal' as const };
    await service.putRuleset(ctx, structuredClone(APPROVAL_RULESET));
    return {
      note: `RuleService.executeBatch in-process (dist): engine + metrics + audit sampling ${name === 'facade' ? '10% (the default)' : '0%'}`,
      run: () => service.executeBatch(ctx, APPROVAL_RULESET.config.name, items, false).summary.success,
    };
  }
  throw new Error(`unknown contender ${name}`);
}

async function child(name: string): Promise<void> {
  const c = await contender(name);
  const t = measureSync(c.run, MEASURE);
  process.stdout.write(`${JSON.stringify({ name, note: c.note, ns_per_exec: t.nsMedian / ITEMS, ns_min: t.nsMin / ITEMS, ns_max: t.nsMax / ITEMS })}\n`);
}

// ---------------------------------------------------------------- HTTP

async function httpPart(plan: { server: string; load: string } | null): Promise<{ rows: SummaryRow[]; details: unknown }> {
  const body = JSON.stringify({ inputs: inputs() });
  const svc = await startSvc([], plan?.server ?? null);
  let bare: (Started & { url: string }) | undefined;
  try {
    await postJson(`${svc.url}/api/v1/rulesets`, APPROVAL_RULESET);
    const path = `/api/v1/execute/${APPROVAL_RULESET.config.name}/batch`;
    const answer = await postJson(`${svc.url}${path}`, JSON.parse(body));
    if (answer.summary.success !== ITEMS) throw new Error(`batch answered ${JSON.stringify(answer.summary)}`);
    bare = await startBareHttp({ '/api/v1/execute/:name/batch': answer }, plan?.server ?? null);
    const targets = [
      ['bare', `${bare.url}${path}`, bare.pid],
      ['svc', `${svc.url}${path}`, svc.pid],
    ] as const;
    for (const [, url] of targets) for (let i = 0; i < 3; i++) await timedPost(url, body);
    const ms: Record<string, number[]> = { bare: [], svc: [] };
    const cpu: Record<string, number> = { bare: 0, svc: 0 };
    let bytes = 0;
    for (let i = 0; i < HTTP_REQUESTS; i++) {
      for (const [name, url, pid] of targets) {
        const c0 = cpuSeconds(pid);
        const r = await timedPost(url, body);
        cpu[name]! += cpuSeconds(pid) - c0;
        if (r.status !== 200) throw new Error(`${name} answered ${r.status}`);
        ms[name]!.push(r.ms);
        bytes = r.bytes;
      }
    }
    const eps = (m: number) => Math.round(ITEMS / (m / 1000));
    const rows = [
      throughputRow(
        'batch of 10,000 over HTTP: executions/s end to end',
        'exec/s',
        eps(median(ms['svc']!)),
        eps(median(ms['bare']!)),
        'bare fastify (parse + constant answer)',
        null,
        `median request ${round(median(ms['svc']!), 2)} ms vs ${round(median(ms['bare']!), 2)} ms; ${bytes} response bytes`,
      ),
    ];
    return { rows, details: { request_bytes: body.length, response_bytes: bytes, ms, server_cpu_seconds: cpu, requests: HTTP_REQUESTS } };
  } finally {
    await svc.stop();
    await bare?.stop();
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const machine = machineInfo();
  const plan = cpuPlan();
  console.log(
    `batch bench: ${ITEMS} inputs; in-process contenders in their own processes (${MEASURE.rounds} rounds), then HTTP (${HTTP_REQUESTS} requests each, alternating); load average ${machine.load_average_start.join(' ')}`,
  );
  const measured: Record<string, { note: string; ns_per_exec: number; ns_min: number; ns_max: number }> = {};
  for (const name of ['walker', 'engine', 'engine-2reads', 'facade', 'facade-noaudit']) {
    const [cmd, args] = plan
      ? ['taskset', ['-c', plan.server, process.execPath, ...process.execArgv, fileURLToPath(import.meta.url)]]
      : [process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)]];
    const r = spawnSync(cmd, args, { env: { ...process.env, BENCH_BATCH_CONTENDER: name }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`contender ${name} failed (exit ${r.status})`);
    measured[name] = JSON.parse(r.stdout.trim().split('\n').pop()!);
    console.log(`  ${name.padEnd(8)} ${measured[name]!.ns_per_exec.toFixed(1)} ns/exec  (${Math.round(1e9 / measured[name]!.ns_per_exec)} exec/s)`);
  }
  const eps = (n: string) => Math.round(1e9 / measured[n]!.ns_per_exec);
  const vsWalker = (n: string) => `walker ${eps('walker')}/s, ratio ${round(eps(n) / eps('walker'), 3)}`;
  const summary: SummaryRow[] = [
    absoluteRow(
      "batch, engine alone (execute() per item, the batch's one clock read per item): executions/s, one core",
      'exec/s',
      eps('engine'),
      `> ${TARGET_EPS}`,
      eps('engine') > TARGET_EPS,
      vsWalker('engine'),
    ),
    absoluteRow(
      'batch, engine alone with two clock reads per item: executions/s, one core',
      'exec/s',
      eps('engine-2reads'),
      null,
      null,
      vsWalker('engine-2reads'),
    ),
    absoluteRow(
      'batch, façade in-process (executeBatch: engine + metrics + audit sampling 10%): executions/s',
      'exec/s',
      eps('facade'),
      null,
      null,
      vsWalker('facade'),
    ),
    absoluteRow('batch, façade in-process with audit sampling 0%: executions/s', 'exec/s', eps('facade-noaudit'), null, null, vsWalker('facade-noaudit')),
  ];
  const http = await httpPart(plan);
  summary.push(...http.rows);
  printSummary(summary);
  writeReport({
    suite: 'batch',
    machine,
    method:
      `${ITEMS} distinct inputs of the engine scenario (all four paths). In-process: each contender in its own process${plan ? ` pinned to CPU ${plan.server}` : ''}, ` +
      `the whole batch timed ${MEASURE.rounds} times after warm-up (median). HTTP: one batch request at a time from one client, ${HTTP_REQUESTS} per server after 3 warm-up requests, ` +
      `alternating svc and a bare fastify route that parses the same body and answers the same JSON as a constant${plan ? `; servers pinned to CPU ${plan.server}` : ''}.`,
    summary,
    details: { items: ITEMS, in_process: measured, http: http.details },
  });
}

const which = process.env['BENCH_BATCH_CONTENDER'];
if (which) await child(which);
else runMain(main);
