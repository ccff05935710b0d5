/**
 * Behavioural diff speed (EXTENSIONS.md 4 "Behavioural diff", issue 20; target: under 50 ms).
 * Two versions of the filter suite's 50-step / 20-unknown-field credit ruleset (bench/filter.ts):
 * the new version changes one condition (`applicant.age < 18` becomes `applicant.age < 21`),
 * which moves inputs from every other outcome to DECLINE. Times `behaviouralDiff(old, new)` on
 * warm compiled versions (the service's case: both are compiled when stored), witnesses included,
 * and, in the same run as the baseline, the filter of the same ruleset (targets APPROVE and
 * REVIEW, sql, with the filter suite's known input). Also times a diff of two identical versions
 * (the equivalence proof). Each figure is the median of single calls timed
 * one by one after a warm-up (BENCH_ROUNDS, default 40).
 *
 * Run: `bash bench/run.sh diff` (or `node --import tsx bench/diff.ts`). Writes
 * bench/results/diff-<timestamp>.json. Exit status 1 when the target is missed.
 */
import { behaviouralDiff } from '../src/change/index.js';
import { generateFilter, parseFilterRequest } from '../src/filter/index.js';
import { compileRuleset, type RulesetDoc } from '../src/ruleset/index.js';
import { KNOWN_INPUT, buildRuleset } from './filter.js';
import { absoluteRow, machineInfo, printSummary, round, timeRow, writeReport } from './lib/report.js';
import { performance } from 'node:perf_hooks';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 40);
const WARMUP = 10;

/** Median, min and max of `op` in ms, each call timed on its own, after a warm-up (the op is ms-scale). */
function timeCalls(op: () => number): { median: number; min: number; max: number; rounds: number } {
  let sink = 0;
  for (let i = 0; i < WARMUP; i++) sink += op();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    sink += op();
    times.push(performance.now() - t0);
  }
  if (sink < 0) console.log(sink);
  times.sort((a, b) => a - b);
  return { median: round(times[times.length >> 1]!, 3), min: round(times[0]!, 3), max: round(times[times.length - 1]!, 3), rounds: ROUNDS };
}

const TARGET_MS = 50;

/** The new version: the age limit of stage 1 raised from 18 to 21. */
function changed(doc: RulesetDoc): RulesetDoc {
  const copy = structuredClone(doc) as RulesetDoc;
  const stage = copy.steps['stage_1'] as { branches: { condition: string }[] };
  if (stage.branches[0]!.condition !== 'applicant.age < 18') throw new Error('scenario changed: stage_1 branch 0');
  stage.branches[0]!.condition = 'applicant.age < 21';
  return copy;
}

function main(): void {
  const oldVersion = compileRuleset(buildRuleset());
  const newVersion = compileRuleset(changed(buildRuleset()));
  const same = compileRuleset(buildRuleset());
  const answer = behaviouralDiff(oldVersion, newVersion);
  if (answer.equivalent || answer.truncated || answer.regions.length === 0) throw new Error(`the change should give regions: ${JSON.stringify(answer)}`);
  const missing = answer.regions.filter((r) => r.witness === null).length;
  const identical = behaviouralDiff(oldVersion, same);
  if (!identical.equivalent) throw new Error(`identical versions should be equivalent: ${JSON.stringify(identical.regions[0])}`);

  const request = parseFilterRequest({ known_input: KNOWN_INPUT, target_results: ['APPROVE', 'REVIEW'], format: 'sql' });
  const tFilter = timeCalls(() => generateFilter(oldVersion, request).unknown_fields.length);
  const tDiff = timeCalls(() => behaviouralDiff(oldVersion, newVersion).regions.length);
  const tSame = timeCalls(() => behaviouralDiff(oldVersion, same).regions.length);
  const diffMs = tDiff.median;
  const sameMs = tSame.median;
  const filterMs = tFilter.median;

  const regions = answer.regions.map((r) => `${r.from_code}->${r.to_code}`).join(', ');
  console.log(
    `behavioural diff, 50-step ruleset, one condition changed: ${answer.regions.length} regions (${regions}), ${missing} without witness, exact ${answer.exact}`,
  );
  const summary = [
    timeRow(
      'behavioural diff of two versions of the 50-step / 20-unknown ruleset (one condition changed), median',
      'ms',
      diffMs,
      filterMs,
      'filter of the same ruleset (sql)',
      null,
      `${answer.regions.length} regions with witnesses; min ${tDiff.min} ms, max ${tDiff.max} ms`,
    ),
    absoluteRow('behavioural diff, one condition changed, median', 'ms', diffMs, `< ${TARGET_MS} ms`, diffMs < TARGET_MS),
    absoluteRow('behavioural diff of two identical versions (equivalent: true), median', 'ms', sameMs, `< ${TARGET_MS} ms`, sameMs < TARGET_MS),
  ];
  printSummary(summary);
  writeReport({
    suite: 'diff',
    machine: machineInfo(),
    method:
      "Two warm compiled versions of the filter suite's 50-step credit ruleset (20 unknown fields); the new one changes `applicant.age < 18` to `< 21`. " +
      `behaviouralDiff (regions, SQL and witnesses, each witness executed on both versions) timed in process with bench/measure.ts (each call timed on its own, ${ROUNDS} calls after ${WARMUP} warm-up calls, median); ` +
      'baseline in the same run: one filter call (sql, targets APPROVE and REVIEW) on the same ruleset. Also the diff of two identical versions.',
    summary,
    details: {
      regions: answer.regions.map((r) => ({ from: r.from_code, to: r.to_code, sql: r.sql, witness: r.witness })),
      diff: tDiff,
      identical: tSame,
      filter: tFilter,
    },
  });
  if (!(diffMs < TARGET_MS && sameMs < TARGET_MS)) process.exitCode = 1;
}

main();
