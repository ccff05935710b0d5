/**
 * What every suite writes: the machine it ran on, its method, and summary rows (each figure
 * next to its baseline from the same run, the ratio, the target and the verdict). The JSON goes
 * to bench/results/<suite>-<timestamp>.json; bench/report.ts turns the latest file of every
 * suite into BENCHMARKS.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';

/** Repository root and the results directory. */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const RESULTS_DIR = join(ROOT, 'bench', 'results');

/** The machine and build a result was measured on. */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memory_gib: number;
  readonly node: string;
  readonly svc_version: string;
  readonly git_commit: string | null;
  /** 1, 5 and 15 minute load averages when the suite started. */
  readonly load_average_start: number[];
  /** ... and when it ended. */
  load_average_end?: number[];
}

/**
 * One summary row. `ratio` is svc / baseline for throughputs (higher is better) and
 * baseline / svc for times (so above 1 always means "svc is worse by that factor" is NOT
 * implied: read `target`, which says which way it must go).
 */
export interface SummaryRow {
  /** What is measured, e.g. "POST /api/v1/execute/:name requests/s". */
  readonly metric: string;
  /** Who the figure is of, when not svc (a peer engine measured for comparison). */
  readonly subject?: string;
  readonly unit: string;
  /** The figure (of svc, or of `subject`). */
  readonly svc: number;
  /** The baseline measured in the same run (null: an absolute target without a baseline). */
  readonly baseline: number | null;
  readonly baseline_name: string | null;
  /** svc / baseline (null without a baseline). */
  readonly ratio: number | null;
  /** The target as text, e.g. ">= 0.85 x bare", "< 5 ms", "<= 2 x walker". */
  readonly target: string | null;
  /** Whether the target is met (null: no target, reported for information). */
  readonly pass: boolean | null;
  readonly note?: string;
}

/** A suite's result file. */
export interface SuiteReport {
  readonly suite: string;
  readonly timestamp: string;
  /** bench/before-after.ts only: the section title in BENCHMARKS.md (what "before" was). */
  readonly title?: string;
  readonly machine: MachineInfo;
  /** How it was measured (one paragraph; goes into BENCHMARKS.md). */
  readonly method: string;
  readonly summary: SummaryRow[];
  /** Anything else (raw rounds, settings). */
  readonly details: unknown;
  /** bench/before-after.ts only: each measure for the old and the new build. */
  readonly rows?: ReadonlyArray<BeforeAfterRow>;
}

/** One measure of bench/before-after.ts: the old and the new build, with the bare baseline of the same run. */
export interface BeforeAfterRow {
  metric: string;
  unit: string;
  before: number;
  after: number;
  baseline: number | null;
  baseline_name: string | null;
  higher_is_better: boolean;
}

/** The machine info at the start of a suite. */
export function machineInfo(): MachineInfo {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gib: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    svc_version: pkg.version,
    git_commit: gitCommit(),
    load_average_start: loadavg().map((l) => round(l, 2)),
  };
}

/**
 * Writes a suite's report, stamped with the time and the end load average, prints its path
 * and returns it.
 */
export function writeReport(fields: Omit<SuiteReport, 'timestamp'>): string {
  fields.machine.load_average_end = loadavg().map((l) => round(l, 2));
  const { suite, ...rest } = fields;
  const report: SuiteReport = { suite, timestamp: new Date().toISOString(), ...rest };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${report.suite}-${report.timestamp.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${file}`);
  return file;
}

/** A summary row for a throughput (higher is better) against a baseline with a minimum ratio. */
export function throughputRow(
  metric: string,
  unit: string,
  svc: number,
  baseline: number,
  baselineName: string,
  minRatio: number | null,
  note?: string,
): SummaryRow {
  return ratioRow(metric, unit, svc, baseline, baselineName, minRatio === null ? null : { bound: minRatio, op: '>=' }, note);
}

/** A summary row for a time (lower is better) against a baseline with a maximum ratio. */
export function timeRow(
  metric: string,
  unit: string,
  svc: number,
  baseline: number | null,
  baselineName: string | null,
  maxRatio: number | null,
  note?: string,
): SummaryRow {
  return ratioRow(metric, unit, svc, baseline, baselineName, maxRatio === null ? null : { bound: maxRatio, op: '<=' }, note);
}

/** The row of `throughputRow` and `timeRow`: svc / baseline, checked against `target` when given. */
function ratioRow(
  metric: string,
  unit: string,
  svc: number,
  baseline: number | null,
  baselineName: string | null,
  target: { bound: number; op: '>=' | '<=' } | null,
  note?: string,
): SummaryRow {
  const ratio = baseline !== null && baseline > 0 ? round(svc / baseline, 3) : null;
  return {
    metric,
    unit,
    svc,
    baseline,
    baseline_name: baselineName,
    ratio,
    target: target === null ? null : `${target.op} ${target.bound} x ${baselineName}`,
    pass: target === null || ratio === null ? null : target.op === '>=' ? ratio >= target.bound : ratio <= target.bound,
    ...(note ? { note } : {}),
  };
}

/** A summary row with an absolute target (no baseline), e.g. p99 < 5 ms. */
export function absoluteRow(metric: string, unit: string, svc: number, target: string | null, pass: boolean | null, note?: string): SummaryRow {
  return { metric, unit, svc, baseline: null, baseline_name: null, ratio: null, target, pass, ...(note ? { note } : {}) };
}

/** Median of numbers (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Rounds to `digits` decimals. */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Reads an integer setting from the environment, with a default. */
export function envInt(name: string, dflt: number): number {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : dflt;
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** Prints summary rows as a small table. */
export function printSummary(rows: readonly SummaryRow[]): void {
  for (const r of rows) {
    const verdict = r.pass === null ? '' : r.pass ? 'OK' : 'BELOW TARGET';
    console.log(
      `${r.metric.padEnd(64)} ${(r.subject ?? 'svc').padEnd(4)} ${String(r.svc).padStart(10)} ${r.unit.padEnd(9)} ${r.baseline !== null ? `${r.baseline_name} ${r.baseline}` : ''}` +
        `${r.ratio !== null ? `  ratio ${r.ratio}` : ''}  ${r.target ?? ''} ${verdict}`,
    );
  }
}

/** Runs a suite's `main` and exits: 0 when it resolved, 1 (after printing the error) when it failed. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
