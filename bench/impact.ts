/**
 * Impact over inputs (EXTENSIONS.md 4): `impact(current, candidate, inputs)` over 10,000
 * inputs of two versions of a realistic credit ruleset (a decision table, variables, several
 * decisions, outputs; the candidate moves two thresholds and adds a branch), in process, against
 * the same run's plain execution of the 2 x 10,000 inputs (the engine's `execute` on each
 * version, nothing counted). Both compiled once; trace off, the real clock. Before timing, the
 * plain loop's codes are checked to give the same transitions as impact. Target: under 100 ms
 * per impact run (exit status 1 otherwise). Writes bench/results/impact-<timestamp>.json.
 *
 * Run: `bash bench/run.sh impact` (or `node --import tsx bench/impact.ts` after building dist/).
 * SVC_BENCH_SRC=1 loads src/ via tsx instead of dist/.
 */
import { absoluteRow, envInt, machineInfo, median, printSummary, round, timeRow, writeReport } from './lib/report.js';

type Ruleset = typeof import('../src/ruleset/index.js');
type Change = typeof import('../src/change/index.js');

const INPUTS = envInt('SVC_BENCH_IMPACT_INPUTS', 10_000);
const RUNS = envInt('SVC_BENCH_IMPACT_RUNS', 25);
const TARGET_MS = 100;

/** A credit decision: eligibility, a score band table that sets a risk variable, limits and outputs. */
function creditDoc(version: 'current' | 'candidate'): unknown {
  const c = version === 'candidate';
  return {
    config: { name: 'credit', version: c ? '2.0.0' : '1.0.0', entry_step: 'eligible' },
    steps: {
      eligible: {
        type: 'decision',
        branches: [
          { condition: 'applicant.age < 18', next_step: 'decline' },
          { condition: 'applicant.country not in ["US", "CA", "GB", "DE", "FR"]', next_step: 'decline' },
          ...(c ? [{ condition: 'applicant.bankruptcies > 0 && applicant.years_since_bankruptcy < 3', next_step: 'decline' }] : []),
        ],
        default_next: 'band',
      },
      band: {
        type: 'table',
        inputs: ['applicant.score', 'applicant.income'],
        hit_policy: 'first',
        rows: [
          { when: [c ? '>= 740' : '>= 760', '>= 50000'], set: { risk: '1' } },
          { when: ['>= 680', '>= 40000'], set: { risk: '2' } },
          { when: ['>= 620', '-'], set: { risk: '3' } },
          { when: ['-', '-'], set: { risk: '4' } },
        ],
        next_step: 'limits',
      },
      limits: {
        type: 'action',
        actions: [
          { action: 'set_variable', name: 'dti', value: 'applicant.debt / max(applicant.income, 1)' },
          { action: 'set_variable', name: 'limit', value: 'applicant.income * (0.5 - $risk * 0.1)' },
        ],
        next_step: 'decide',
      },
      decide: {
        type: 'decision',
        branches: [
          { condition: `$dti > ${c ? '0.45' : '0.5'}`, next_step: 'decline' },
          { condition: 'request.amount <= $limit && $risk <= 2', next_step: 'approve' },
          { condition: 'request.amount <= $limit * 1.5 && $risk <= 3', next_step: 'review' },
        ],
        default_next: 'decline',
      },
      approve: { type: 'terminal', result: { code: 'APPROVE', message: 'approved' }, output: { limit: '$limit', risk: '$risk' } },
      review: { type: 'terminal', result: { code: 'REVIEW', message: 'manual review' }, output: { risk: '$risk' } },
      decline: { type: 'terminal', result: { code: 'DECLINE', message: 'declined' } },
    },
  };
}

/** Applicants spread over every outcome, fixed by a seeded generator. */
function inputs(n: number): Array<Record<string, unknown>> {
  let seed = 7;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const countries = ['US', 'CA', 'GB', 'DE', 'FR', 'BR', 'US', 'GB'];
  return Array.from({ length: n }, () => {
    const income = 20000 + Math.floor(rnd() * 100000);
    const bankruptcies = rnd() < 0.1 ? 1 : 0;
    return {
      applicant: {
        age: 16 + Math.floor(rnd() * 60),
        country: countries[Math.floor(rnd() * countries.length)],
        score: 550 + Math.floor(rnd() * 300),
        income,
        debt: Math.floor(rnd() * income * 0.7),
        bankruptcies,
        years_since_bankruptcy: bankruptcies ? Math.floor(rnd() * 6) : 0,
      },
      request: { amount: 1000 + Math.floor(rnd() * 40000) },
    };
  });
}

async function load(): Promise<{ ruleset: Ruleset; change: Change }> {
  const src = process.env['SVC_BENCH_SRC'] === '1';
  const ruleset = (await import(src ? '../src/ruleset/index.js' : ('../dist/ruleset/index.js' as string))) as Ruleset;
  const change = (await import(src ? '../src/change/index.js' : ('../dist/change/index.js' as string))) as Change;
  return { ruleset, change };
}

async function main(): Promise<void> {
  const { ruleset, change } = await load();
  const current = ruleset.compileRuleset(creditDoc('current'));
  const candidate = ruleset.compileRuleset(creditDoc('candidate'));
  const ins = inputs(INPUTS);
  const options = { clock: () => performance.now(), timeoutMs: 0, maxSteps: 10_000 };

  /** The baseline: both versions executed on every input, the codes kept alive. */
  const plain = (): number => {
    let sink = 0;
    for (let i = 0; i < ins.length; i++) {
      sink += ruleset.execute(current, ins[i], options).code.length;
      sink += ruleset.execute(candidate, ins[i], options).code.length;
    }
    return sink;
  };

  // Check: the plain loop's changed codes are what impact counts.
  const report = change.impact(current, candidate, ins, options);
  let changed = 0;
  for (const input of ins) if (ruleset.execute(current, input, options).code !== ruleset.execute(candidate, input, options).code) changed++;
  if (changed !== report.changed || report.errors !== 0) throw new Error(`impact disagrees with plain execution: ${report.changed} vs ${changed} changed`);
  if (report.transitions.length < 3) throw new Error(`too few transitions to be realistic: ${JSON.stringify(report.transitions)}`);

  // Warm up both, then alternate the timed runs.
  for (let i = 0; i < 5; i++) {
    plain();
    change.impact(current, candidate, ins, options);
  }
  const impactMs: number[] = [];
  const plainMs: number[] = [];
  let sink = 0;
  for (let r = 0; r < RUNS; r++) {
    let t0 = performance.now();
    sink += change.impact(current, candidate, ins, options).changed;
    impactMs.push(performance.now() - t0);
    t0 = performance.now();
    sink += plain();
    plainMs.push(performance.now() - t0);
  }
  const t = median(impactMs);
  const b = median(plainMs);
  console.log(
    `impact: ${INPUTS} inputs, ${report.changed} changed over ${report.transitions.length} transitions (${sink > 0 ? 'ok' : 'no work'}); impact ${t.toFixed(1)} ms, plain ${b.toFixed(1)} ms (median of ${RUNS})`,
  );
  const summary = [
    absoluteRow(`impact over ${INPUTS.toLocaleString('en')} inputs, two versions, in process`, 'ms', round(t, 2), `< ${TARGET_MS} ms`, t < TARGET_MS),
    timeRow(
      `impact over ${INPUTS.toLocaleString('en')} inputs against plain execution of both versions`,
      'ms',
      round(t, 2),
      round(b, 2),
      'plain execute x 2',
      1.5,
    ),
  ];
  printSummary(summary);
  writeReport({
    suite: 'impact',
    machine: machineInfo(),
    method: `impact() of src/change over ${INPUTS} seeded inputs of a credit ruleset (decision, a set-table, variables, outputs; the candidate moves two thresholds and adds a branch), both versions compiled once, untraced, the real clock; against the plain loop executing both versions on every input in the same process. Both checked to agree on the number of changed inputs first; 5 warm-up runs each, then ${RUNS} alternating timed runs, medians.`,
    summary,
    details: {
      inputs: INPUTS,
      runs: RUNS,
      impact_ms: impactMs.map((x) => round(x, 2)),
      plain_ms: plainMs.map((x) => round(x, 2)),
      changed: report.changed,
      transitions: report.transitions,
    },
  });
  if (t >= TARGET_MS) {
    console.error(`impact: ${t.toFixed(1)} ms is over the ${TARGET_MS} ms target`);
    process.exitCode = 1;
  }
}

await main();
