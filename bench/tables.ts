/**
 * Decision tables (EXTENSIONS.md 3): a 50-row table of 3 inputs against the same logic written
 * as one decision of 50 branches, in the same run. Both are compiled by svc and executed with
 * trace off and the real clock; each contender runs in its own process (a fresh isolate: neither
 * inherits call sites warmed by the other), twice, alternating, and the medians are compared.
 * Both are checked to give the same code on every input before timing. Target: the table within
 * 2x of the branches (exit status 1 otherwise). Writes bench/results/tables-<timestamp>.json.
 *
 * Run: `bash bench/run.sh tables` (or `node --import tsx bench/tables.ts` after building dist/).
 * SVC_BENCH_SRC=1 loads src/ via tsx instead of dist/.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEASURE, measureSync, type Timing } from './measure.js';
import { machineInfo, printSummary, round, timeRow, writeReport } from './lib/report.js';

type SvcModule = typeof import('../src/ruleset/index.js');

const ROWS = 50;
const CODES = ['A', 'B', 'C', 'D', 'E'];

/** Row i's cells over inputs a (number), b (string), c (number). */
function cells(i: number): [string, string, string] {
  return [`== ${i}`, i % 2 === 0 ? 'in ["US", "CA"]' : '"FR"', `> ${i * 10}`];
}

function terminals(): Record<string, unknown> {
  const out: Record<string, unknown> = { NONE: { type: 'terminal', result: { code: 'NONE' } } };
  for (const c of CODES) out[c] = { type: 'terminal', result: { code: c } };
  return out;
}

/** The table. */
function tableDoc(): unknown {
  const rows = Array.from({ length: ROWS }, (_, i) => ({ when: cells(i), next_step: CODES[i % CODES.length] }));
  return { config: { name: 'table50', entry_step: 't' }, steps: { t: { type: 'table', inputs: ['a', 'b', 'c'], rows, default_next: 'NONE' }, ...terminals() } };
}

/** The same logic as a person writes it with branches. */
function branchesDoc(): unknown {
  const branches = Array.from({ length: ROWS }, (_, i) => {
    const [a, b, c] = cells(i);
    return { condition: `a ${a} && b ${b.startsWith('"') ? `== ${b}` : b} && c ${c}`, next_step: CODES[i % CODES.length] };
  });
  return { config: { name: 'branches50', entry_step: 'd' }, steps: { d: { type: 'decision', branches, default_next: 'NONE' }, ...terminals() } };
}

/** Inputs spread over the rows (early, late, none matching), fixed by a seeded generator. */
function inputs(): Array<Record<string, unknown>> {
  let seed = 42;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const countries = ['US', 'CA', 'FR', 'DE'];
  return Array.from({ length: 64 }, () => ({ a: Math.floor(rnd() * 60), b: countries[Math.floor(rnd() * 4)], c: Math.floor(rnd() * 600) }));
}

async function loadSvc(): Promise<SvcModule> {
  const src = process.env['SVC_BENCH_SRC'] === '1';
  return (await import(src ? '../src/ruleset/index.js' : ('../dist/ruleset/index.js' as string))) as SvcModule;
}

/** Child: time one contender, print its Timing as JSON. */
async function child(which: 'table' | 'branches'): Promise<void> {
  const svc = await loadSvc();
  const compiled = svc.compileRuleset(which === 'table' ? tableDoc() : branchesDoc());
  const options = { clock: () => performance.now(), timeoutMs: 0, maxSteps: 10000 };
  const ins = inputs();
  let k = 0;
  const timing = measureSync(() => svc.execute(compiled, ins[k++ & 63], options).code.length, DEFAULT_MEASURE);
  process.stdout.write(JSON.stringify(timing));
}

/** Parent: check equivalence, then run the children alternating. */
async function main(): Promise<void> {
  const svc = await loadSvc();
  const table = svc.compileRuleset(tableDoc());
  const branches = svc.compileRuleset(branchesDoc());
  const options = { clock: () => performance.now(), timeoutMs: 0, maxSteps: 10000 };
  const seen = new Set<string>();
  for (const input of inputs()) {
    const x = svc.execute(table, input, options).code;
    const y = svc.execute(branches, input, options).code;
    if (x !== y) throw new Error(`table and branches disagree on ${JSON.stringify(input)}: ${x} vs ${y}`);
    seen.add(x);
  }
  if (seen.size < 4) throw new Error(`the inputs reach too few outcomes: ${[...seen].join(', ')}`);

  const self = fileURLToPath(import.meta.url);
  const runChild = (which: string): Timing => {
    const r = spawnSync(process.execPath, [...process.execArgv, self, '--child', which], { encoding: 'utf8', env: process.env });
    if (r.status !== 0) throw new Error(`child ${which} failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as Timing;
  };
  const runs: Record<string, Timing[]> = { table: [], branches: [] };
  for (let i = 0; i < 2; i++) {
    runs['branches']!.push(runChild('branches'));
    runs['table']!.push(runChild('table'));
  }
  const best = (ts: Timing[]): number => Math.min(...ts.map((t) => t.nsMedian));
  const t = best(runs['table']!);
  const b = best(runs['branches']!);
  const ratio = t / b;
  console.log(`tables: 50-row table of 3 inputs  ${t.toFixed(0)} ns/exec`);
  console.log(`tables: same logic as 50 branches ${b.toFixed(0)} ns/exec`);
  console.log(`tables: ratio table/branches ${ratio.toFixed(2)}x (target: within 2x)`);
  const summary = [timeRow('50-row decision table of 3 inputs, ns per execution', 'ns', round(t, 1), round(b, 1), 'the same logic as 50 branches', 2)];
  printSummary(summary);
  writeReport({
    suite: 'tables',
    machine: machineInfo(),
    method:
      'A 50-row routing table of 3 inputs against the same logic written as 50 decision branches, both through the engine (execute), each in its own child process, two processes each alternating; the best of the per-process medians. Both are first checked to give the same codes on the same inputs.',
    summary,
    details: { table_ns: t, branches_ns: b, ratio, runs },
  });
  if (ratio > 2) {
    console.error('tables: the table is more than 2x slower than the branches');
    process.exitCode = 1;
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as 'table' | 'branches');
else await main();
