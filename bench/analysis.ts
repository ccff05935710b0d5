/**
 * Analysis speed (EXTENSIONS.md 2 "Analysis"; target: a 200-step ruleset under 50 ms). Builds a
 * 200-step ruleset with realistic conditions (numeric bands, country and tier lists, string
 * tests, null checks, `&&` / `||`, some arithmetic the filter cannot write), a DAG where each
 * decision goes forward to later steps, some decisions without default (so the witness search
 * runs), action steps setting variables, and terminals. Each round compiles a fresh copy (the
 * analysis is cached per compiled version) and times `analyzeRuleset` alone; prints the median,
 * p90 and max in ms (wall clock) and the median CPU time (robust on a busy machine), and the
 * warnings found.
 *
 * Run: `node --import tsx bench/analysis.ts` (BENCH_ROUNDS=30 by default, BENCH_STEPS=200).
 * The analysis runs at create/update only, never on the execute path.
 */
import { performance } from 'node:perf_hooks';
import { analyzeRuleset } from '../src/analysis/index.js';
import { compileRuleset, type RulesetDoc } from '../src/ruleset/index.js';
import { absoluteRow, machineInfo, printSummary, round, writeReport } from './lib/report.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 30);
const STEPS = Number(process.env['BENCH_STEPS'] ?? 200);

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COUNTRIES = ['US', 'CA', 'GB', 'DE', 'FR', 'JP', 'BR', 'IN'];
const TIERS = ['bronze', 'silver', 'gold', 'platinum'];

function condition(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const n = (max: number): number => Math.floor(r() * max);
  const atoms = [
    () => `applicant.age ${pick(['>=', '<', '>'])} ${18 + n(50)}`,
    () => `order.amount ${pick(['>', '<=', '>='])} ${n(100) * 50}`,
    () => `applicant.country in ${JSON.stringify(COUNTRIES.filter(() => r() < 0.4))}`,
    () => `customer.tier == ${JSON.stringify(pick(TIERS))}`,
    () => `customer.tier != ${JSON.stringify(pick(TIERS))}`,
    () => `starts_with(order.sku, ${JSON.stringify(pick(['A-', 'B-', 'X-']))})`,
    () => `is_null(applicant.email)`,
    () => `customer.vip == true`,
    () => `risk.score ${pick(['>', '<'])} ${n(100)}`,
    () => `order.items * order.unit_price > ${n(1000)}`,
    () => `len(applicant.name) > ${n(5)}`,
  ];
  const atom = (): string => pick(atoms)();
  const k = r();
  if (k < 0.45) return atom();
  if (k < 0.75) return `${atom()} && ${atom()}`;
  if (k < 0.9) return `${atom()} || ${atom()}`;
  return `(${atom()} || ${atom()}) && !(${atom()})`;
}

function generate(seed: number, total: number): RulesetDoc {
  const r = rng(seed);
  const terminals = Math.max(4, Math.floor(total / 5));
  const inner = total - terminals;
  const steps: RulesetDoc['steps'] = {};
  const later = (i: number): string => {
    const j = i + 1 + Math.floor(r() * Math.min(12, inner - i));
    return j < inner ? `s${j}` : `t${Math.floor(r() * terminals)}`;
  };
  for (let i = 0; i < inner; i++) {
    if (r() < 0.1) {
      steps[`s${i}`] = { type: 'action', actions: [{ action: 'set_variable', name: `v${i}`, value: 'order.amount * 1.1' }], next_step: later(i) };
      continue;
    }
    const branches = Array.from({ length: 2 + Math.floor(r() * 3) }, () => ({ condition: condition(r), next_step: later(i) }));
    steps[`s${i}`] = r() < 0.85 ? { type: 'decision', branches, default_next: later(i) } : { type: 'decision', branches };
  }
  for (let t = 0; t < terminals; t++) steps[`t${t}`] = { type: 'terminal', result: { code: `CODE_${t % 7}`, message: `outcome ${t}` } };
  return { config: { name: 'bench', entry_step: 's0' }, steps };
}

const doc = generate(20260501, STEPS);
const times: number[] = [];
const cpu: number[] = [];
let warnings: readonly { code: string }[] = [];
for (let i = 0; i < ROUNDS + 3; i++) {
  const compiled = compileRuleset(doc);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  warnings = analyzeRuleset(compiled);
  const ms = performance.now() - t0;
  const c1 = process.cpuUsage(c0);
  if (i >= 3) {
    // 3 warm-up rounds
    times.push(ms);
    cpu.push((c1.user + c1.system) / 1000);
  }
}
times.sort((a, b) => a - b);
cpu.sort((a, b) => a - b);
const at = (q: number, xs = times): number => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const byCode: Record<string, number> = {};
for (const w of warnings) byCode[w.code] = (byCode[w.code] ?? 0) + 1;
const steps = Object.keys(doc.steps).length;
console.log(
  `analysis of a ${steps}-step ruleset: median ${at(0.5).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms, max ${times[times.length - 1]!.toFixed(2)} ms over ${ROUNDS} rounds (target < 50 ms); CPU median ${at(0.5, cpu).toFixed(2)} ms`,
);
console.log(`warnings: ${JSON.stringify(byCode)}`);
const summary = [
  absoluteRow(
    `analysis of a ${steps}-step ruleset, median wall clock`,
    'ms',
    round(at(0.5), 2),
    '< 50 ms',
    at(0.5) < 50,
    `p90 ${round(at(0.9), 2)} ms, max ${round(times[times.length - 1]!, 2)} ms; warnings ${JSON.stringify(byCode)}`,
  ),
  absoluteRow(`analysis of a ${steps}-step ruleset, median CPU time`, 'ms', round(at(0.5, cpu), 2), null, null),
];
printSummary(summary);
writeReport({
  suite: 'analysis',
  machine: machineInfo(),
  method: `A generated ${steps}-step ruleset (numeric bands, lists, string tests, null checks, && / ||, arithmetic the filter cannot write, decisions without default, set_variable actions). Each of ${ROUNDS} rounds (after 3 warm-up) compiles a fresh copy and times analyzeRuleset alone, in process. Analysis runs at create and update only, never on execute.`,
  summary,
  details: { rounds: ROUNDS, steps, times_ms: times, cpu_ms: cpu, warnings: byCode },
});
