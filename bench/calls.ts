/**
 * Call steps (EXTENSIONS.md 3): a ruleset that calls another (a 3-step risk check) against the
 * same logic with the callee's steps inlined (its terminals become `set_variable` actions), in the
 * same run. Both compiled by svc and executed with trace off and the real clock; each contender
 * runs in its own process, twice, alternating; the best medians are compared. Both are checked
 * to give the same code and output on every input first. Target: the call adds at most 100 ns
 * per execution over the inlined steps (exit status 1 otherwise). Writes
 * bench/results/calls-<timestamp>.json.
 *
 * Run: `bash bench/run.sh calls` (or `node --import tsx bench/calls.ts` after building dist/).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEASURE, measureSync, type Timing } from './measure.js';
import { machineInfo, printSummary, round, timeRow, writeReport } from './lib/report.js';

type SvcModule = typeof import('../src/ruleset/index.js');

/** The callee: a risk level from the amount and the country. */
function riskDoc(): unknown {
  return {
    config: { name: 'risk', entry_step: 'size' },
    steps: {
      size: { type: 'decision', branches: [{ condition: 'amount > 1000', next_step: 'geo' }], default_next: 'low' },
      geo: { type: 'decision', branches: [{ condition: 'country in ["US", "CA"]', next_step: 'medium' }], default_next: 'high' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      medium: { type: 'terminal', result: { code: 'MEDIUM' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  };
}

const DECIDE = {
  type: 'decision',
  branches: [
    { condition: '$risk == "HIGH"', next_step: 'reject' },
    { condition: '$risk == "MEDIUM" && vip', next_step: 'approve' },
    { condition: '$risk == "MEDIUM"', next_step: 'review' },
  ],
  default_next: 'approve',
};
const ENDS = {
  reject: { type: 'terminal', result: { code: 'REJECT' } },
  review: { type: 'terminal', result: { code: 'REVIEW' } },
  approve: { type: 'terminal', result: { code: 'APPROVE' } },
};

/** The caller: one call step (the whole input), then a decision on the callee's code. */
function callerDoc(): unknown {
  const decide = JSON.parse(JSON.stringify(DECIDE).replaceAll('$risk ==', '$r.code ==')) as unknown;
  return {
    config: { name: 'caller', entry_step: 'ask' },
    steps: { ask: { type: 'call', ruleset: 'risk', result: 'r', next_step: 'decide' }, decide, ...ENDS },
  };
}

/** The same logic with the callee's steps inlined: its terminals set `$risk`. */
function inlinedDoc(): unknown {
  const set = (code: string) => ({ type: 'action', actions: [{ action: 'set_variable', name: 'risk', value: `"${code}"` }], next_step: 'decide' });
  return {
    config: { name: 'inlined', entry_step: 'size' },
    steps: {
      size: { type: 'decision', branches: [{ condition: 'amount > 1000', next_step: 'geo' }], default_next: 'low' },
      geo: { type: 'decision', branches: [{ condition: 'country in ["US", "CA"]', next_step: 'medium' }], default_next: 'high' },
      high: set('HIGH'),
      medium: set('MEDIUM'),
      low: set('LOW'),
      decide: DECIDE,
      ...ENDS,
    },
  };
}

function inputs(): Array<Record<string, unknown>> {
  let seed = 7;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const countries = ['US', 'CA', 'FR', 'DE'];
  return Array.from({ length: 64 }, () => ({ amount: Math.floor(rnd() * 3000), country: countries[Math.floor(rnd() * 4)], vip: rnd() < 0.5 }));
}

async function loadSvc(): Promise<SvcModule> {
  const src = process.env['SVC_BENCH_SRC'] === '1';
  return (await import(src ? '../src/ruleset/index.js' : ('../dist/ruleset/index.js' as string))) as SvcModule;
}

function setup(svc: SvcModule) {
  const risk = svc.compileRuleset(riskDoc());
  const options = { clock: () => performance.now(), timeoutMs: 0, maxSteps: 10000, calls: (name: string) => (name === 'risk' ? risk : undefined) };
  return { caller: svc.compileRuleset(callerDoc()), inlined: svc.compileRuleset(inlinedDoc()), options };
}

async function child(which: 'call' | 'inlined'): Promise<void> {
  const svc = await loadSvc();
  const s = setup(svc);
  const compiled = which === 'call' ? s.caller : s.inlined;
  const ins = inputs();
  let k = 0;
  const timing = measureSync(() => svc.execute(compiled, ins[k++ & 63], s.options).code.length, DEFAULT_MEASURE);
  process.stdout.write(JSON.stringify(timing));
}

async function main(): Promise<void> {
  const svc = await loadSvc();
  const s = setup(svc);
  const seen = new Set<string>();
  for (const input of inputs()) {
    const x = svc.execute(s.caller, input, s.options).code;
    const y = svc.execute(s.inlined, input, s.options).code;
    if (x !== y) throw new Error(`call and inlined disagree on ${JSON.stringify(input)}: ${x} vs ${y}`);
    seen.add(x);
  }
  if (seen.size < 3) throw new Error(`the inputs reach too few outcomes: ${[...seen].join(', ')}`);
  const self = fileURLToPath(import.meta.url);
  const runChild = (which: string): Timing => {
    const r = spawnSync(process.execPath, [...process.execArgv, self, '--child', which], { encoding: 'utf8', env: process.env });
    if (r.status !== 0) throw new Error(`child ${which} failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as Timing;
  };
  const runs: Record<string, Timing[]> = { call: [], inlined: [] };
  for (let i = 0; i < 2; i++) {
    runs['inlined']!.push(runChild('inlined'));
    runs['call']!.push(runChild('call'));
  }
  const best = (ts: Timing[]): number => Math.min(...ts.map((t) => t.nsMedian));
  const c = best(runs['call']!);
  const n = best(runs['inlined']!);
  const added = c - n;
  console.log(`calls: with a call step      ${c.toFixed(0)} ns/exec`);
  console.log(`calls: callee steps inlined  ${n.toFixed(0)} ns/exec`);
  console.log(`calls: added by the call     ${added.toFixed(0)} ns (target: at most 100 ns)`);
  const summary = [
    timeRow(
      'a call step into a 3-step ruleset, ns per execution',
      'ns',
      round(c, 1),
      round(n, 1),
      'the callee steps inlined',
      round((n + 100) / n, 3),
      `adds ${round(added, 1)} ns (target: at most 100 ns)`,
    ),
  ];
  printSummary(summary);
  writeReport({
    suite: 'calls',
    machine: machineInfo(),
    method:
      'A ruleset calling a 3-step risk ruleset (call step, then a decision on $r.code) against the same logic with the callee steps inlined (its terminals become set_variable actions), both through the engine (execute) with a callee resolver, each in its own child process, two processes each alternating; the best of the per-process medians. Both are first checked to give the same codes. Target: the call adds at most 100 ns (the ratio target is (inlined + 100 ns) / inlined).',
    summary,
    details: { call_ns: c, inlined_ns: n, added_ns: added, runs },
  });
  if (added > 100) {
    console.error('calls: the call step adds more than 100 ns');
    process.exitCode = 1;
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as 'call' | 'inlined');
else await main();
