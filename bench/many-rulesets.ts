/**
 * In-process reproduction of the scale suite's "many rulesets" throughput drop (bench/NOTES.md,
 * "Many rulesets"): 10,000 generated rulesets (bench/lib/scale-rulesets.ts: tests and input
 * schemas included) loaded from a rules dir as the server loads them, then `RuleService.execute`
 * (store lookup, input check, engine, metrics, sampled audit) on a random ruleset per operation,
 * with request-like allocation before each (the body parsed from JSON text, 60 small objects).
 *
 *   - `hot`: the random ruleset is one of the first 10 (the CPU caches hold them);
 *   - `spread`: one of all 10,000 (uniform, as the scale suite's throughput row).
 *
 * Alternating rounds in one process; ns per operation (median). Not part of BENCHMARKS.md: it is
 * the quick loop for engine and store work (the scale suite measures the real server).
 *
 *   node --import tsx bench/many-rulesets.ts      (after building dist/)
 *   BENCH_MANY_DIR=<dir>: use (or write once) the rules dir there; BENCH_MANY_PAIRS (default 7);
 *   BENCH_MANY_ONLY=hot|spread: time one contender only (to profile it);
 *   BENCH_MANY_OPS=<n> (with BENCH_MANY_ONLY): n operations of warm-up (BENCH_MANY_WARMUP), then n more, untimed, then
 *   exit; with BENCH_MANY_CALLGRIND=1 under `valgrind --tool=callgrind --instr-atstart=no
 *   --cache-sim=yes` only the second n are counted (bench/NOTES.md "Many rulesets", method).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { measureSync, type Timing } from './measure.js';
import { envInt, median, round, runMain } from './lib/report.js';
import { BODY, ruleset } from './lib/scale-rulesets.js';

const N = envInt('BENCH_MANY_RULESETS', 10_000);
const PAIRS = envInt('BENCH_MANY_PAIRS', 7);
const HOT = 10;
const MEASURE = { roundMs: 200, rounds: 3, warmupMs: 300 };

function ensureDir(): { dir: string; temp: boolean } {
  const given = process.env['BENCH_MANY_DIR'];
  const dir = given ?? mkdtempSync(join(tmpdir(), 'svc-bench-many-'));
  if (given === undefined || !existsSync(dir) || readdirSync(dir).length < N) {
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < N; i++) {
      const r = ruleset(i);
      writeFileSync(join(dir, `${(r['config'] as { name: string }).name}.json`), JSON.stringify(r, null, 2));
    }
  }
  return { dir, temp: given === undefined };
}

async function main(): Promise<void> {
  const { RuleService } = (await import(new URL('../dist/service/rule-service.js', import.meta.url).href)) as typeof import('../src/service/rule-service.js');
  const { createStore } = (await import(new URL('../dist/store/index.js', import.meta.url).href)) as typeof import('../src/store/index.js');
  const { AuditLog, Metrics, silentLogger } = (await import(
    new URL('../dist/observe/index.js', import.meta.url).href
  )) as typeof import('../src/observe/index.js');
  const { serializeExecution } = (await import(
    new URL('../dist/transport/http/serialize.js', import.meta.url).href
  )) as typeof import('../src/transport/http/serialize.js');
  const { dir, temp } = ensureDir();
  try {
    const store = createStore({ rulesDir: dir });
    // No audit lines: its buffer is flushed per event-loop turn, and this loop never yields.
    const audit = new AuditLog({ stdout: { write: () => true }, sampleRate: 0 });
    const metrics = new Metrics({ version: 'bench', rulesCount: () => store.count() });
    const service = new RuleService(
      {
        version: 'bench',
        role: 'standalone',
        writerAddr: null,
        executionTimeoutMs: 5000,
        maxSteps: 10_000,
        maxBatchSize: 100,
        signature: { enabled: false, require: false, trustedKeys: [], allowUnsignedLocal: true },
      },
      { store, metrics, audit, sampler: audit.sampler, logger: silentLogger(), clock: () => performance.now(), now: Date.now },
    );
    const t0 = performance.now();
    const report = await store.load(service.prepareFile);
    console.log(`loaded ${report.loaded} rulesets in ${round(performance.now() - t0)} ms (${report.skipped.length} skipped)`);
    const ctx = { tenant: 'default', sourceIp: '127.0.0.1', transport: 'internal' as const };
    const names = Array.from({ length: N }, (_, i) => `rs-${String(i).padStart(5, '0')}`);
    // Random picks, drawn up front (the same sequence for every round).
    const picks = new Uint32Array(1 << 16);
    let seed = 12345;
    for (let i = 0; i < picks.length; i++) picks[i] = (seed = (seed * 1103515245 + 12345) % 2 ** 31) % N;
    // Request-like allocation: a ring of small objects, so some live across executions as a
    // server's request state does.
    const ring: unknown[] = new Array(4096).fill(null);
    let k = 0;
    const op = (range: number) => (): number => {
      const pick = picks[k++ & 0xffff]! % range;
      for (let j = 0; j < 60; j++) ring[(k * 60 + j) & 4095] = { a: j, b: k, c: null };
      const body = JSON.parse(BODY) as { input: unknown };
      // The answer's text as the HTTP route writes it (its cached envelope per terminal).
      return serializeExecution(service.execute(ctx, names[pick]!, body.input, false)).length > 0 ? 1 : 0;
    };
    const only = process.env['BENCH_MANY_ONLY']; // one contender (for a profile)
    const ops = process.env['BENCH_MANY_OPS'];
    if (ops !== undefined && only !== undefined) {
      const fn = op(only === 'hot' ? HOT : N);
      let sum = 0;
      // Warm-up, not counted under callgrind. NOTE: in `hot` each schema is promoted to ajv after
      // 1,000 validations in a row (src/ruleset/input-schema.ts): warm up past 10,000 operations.
      for (let i = envInt('BENCH_MANY_WARMUP', Number(ops)); i > 0; i--) sum += fn();
      const instrument = (on: boolean) => {
        if (process.env['BENCH_MANY_CALLGRIND'] === '1') execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)]);
      };
      instrument(true);
      for (let i = Number(ops); i > 0; i--) sum += fn();
      instrument(false);
      console.log(`${only}: ${sum} operations`);
      return;
    }
    const contenders = Object.fromEntries(Object.entries({ hot: op(HOT), spread: op(N) }).filter(([name]) => only === undefined || name === only));
    const rounds: Record<string, Timing[]> = { hot: [], spread: [] };
    for (let i = 0; i < PAIRS; i++) for (const [name, fn] of Object.entries(contenders)) rounds[name]!.push(measureSync(fn, MEASURE));
    if (only !== undefined) {
      console.log(`${only}: ${round(median(rounds[only]!.map((t) => t.nsMedian)))} ns/op`);
      return;
    }
    const hot = median(rounds['hot']!.map((t) => t.nsMedian));
    const spread = median(rounds['spread']!.map((t) => t.nsMedian));
    console.log(
      `hot (${HOT} of ${N}): ${round(hot)} ns/op; spread (all ${N}): ${round(spread)} ns/op; difference ${round(spread - hot)} ns; ratio ${round(hot / spread, 3)}`,
    );
    console.log(`rounds hot: ${rounds['hot']!.map((t) => round(t.nsMedian)).join(' ')}`);
    console.log(`rounds spread: ${rounds['spread']!.map((t) => round(t.nsMedian)).join(' ')}`);
  } finally {
    if (temp) rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
