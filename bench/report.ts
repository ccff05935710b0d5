/**
 * Writes BENCHMARKS.md at the repository root from the newest result file of every suite in
 * bench/results/ (run by bench/run.sh after the suites; also alone:
 * `node --import tsx bench/report.ts`). Each figure stands next to its baseline from the same
 * run, with the ratio, the target and the verdict; then the machine and method of each suite,
 * the before/after record of the performance work (bench/results/before-after-*.json) and the
 * hand-written notes (bench/NOTES.md).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, RESULTS_DIR, type BeforeAfterRow, type SummaryRow } from './lib/report.js';

const ORDER = [
  'engine',
  'tables',
  'calls',
  'schema',
  'batch',
  'http',
  'auth',
  'shadow',
  'declog',
  'grpc',
  'scale',
  'multicore',
  'fleet',
  'filter',
  'diff',
  'impact',
  'sync-propagation',
  'console',
];

/** Newest result file of each suite (names end in the ISO timestamp, so they sort by time). */
function newest(): Map<string, { file: string; data: any }> {
  const out = new Map<string, { file: string; data: any }>();
  if (!existsSync(RESULTS_DIR)) return out;
  for (const f of readdirSync(RESULTS_DIR)
    .filter((x) => x.endsWith('.json'))
    .sort()) {
    const m = /^(.*)-(\d{4}-\d{2}-\d{2}T[\d-]+Z)\.json$/.exec(f);
    if (!m) continue;
    out.set(m[1]!, { file: f, data: JSON.parse(readFileSync(join(RESULTS_DIR, f), 'utf8')) });
  }
  return out;
}

/** Rows of suites written before the shared format (filter, sync-propagation, old files). */
function legacyRows(suite: string, d: any): SummaryRow[] {
  if (suite === 'filter' && Array.isArray(d.results)) {
    return d.results.map((r: any) =>
      r.varied === true
        ? {
            metric: `filter generation, ${r.format}, warm, known input different on every call (50-step ruleset, 20 unknown fields)`,
            unit: 'us',
            svc: r.us_median,
            baseline: null,
            baseline_name: null,
            ratio: null,
            target: null,
            pass: null,
          }
        : {
            metric: `filter generation, ${r.format}, warm (50-step ruleset, 20 unknown fields)`,
            unit: 'us',
            svc: r.us_median,
            baseline: null,
            baseline_name: null,
            ratio: null,
            // The performance issue's target (the filter's first target was < 1000 us).
            target: '< 300 us',
            pass: r.us_median < 300,
          },
    );
  }
  if (suite === 'sync-propagation' && Array.isArray(d.results)) {
    return d.results.map((r: any) => ({
      metric: `rule change propagation, ${r.mode}: p50 / p99`,
      unit: 'ms',
      svc: r.p50_ms,
      baseline: null,
      baseline_name: null,
      ratio: null,
      target: null,
      pass: null,
      note: `p99 ${r.p99_ms} ms, max ${r.max_ms} ms over ${r.samples} updates`,
    }));
  }
  return [];
}

function fmt(n: number | null | undefined): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '-';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return String(Math.round(n * 100) / 100);
}

function verdict(r: SummaryRow): string {
  return r.pass === null ? '-' : r.pass ? '**pass**' : '**FAIL**';
}

function esc(s: string): string {
  return s.replace(/\|/g, '\\|');
}

function machineLine(d: any): string {
  const m = d.machine;
  if (m) {
    return `${d.timestamp} · commit ${m.git_commit ?? '?'} · ${m.cores} cores (${m.cpu}), ${m.memory_gib} GiB · node ${m.node} · load average ${m.load_average_start?.join(' ')} → ${m.load_average_end?.join(' ') ?? '?'}`;
  }
  return `${d.timestamp ?? d.at ?? '?'} · ${d.cores ?? '?'} cores (${d.cpu ?? '?'}) · node ${d.node ?? '?'} · load average ${d.load_average?.join(' ') ?? '?'}`;
}

function beforeAfter(): string {
  if (!existsSync(RESULTS_DIR)) return '';
  const files = readdirSync(RESULTS_DIR)
    .filter((f) => f.startsWith('before-after-') && f.endsWith('.json'))
    .sort();
  if (files.length === 0) return '';
  const d = JSON.parse(readFileSync(join(RESULTS_DIR, files.at(-1)!), 'utf8'));
  const lines = [
    `## ${typeof d.title === 'string' ? d.title : 'Before and after the performance work'}`,
    '',
    `Measured in one run (${files.at(-1)}): the build from before the changes ("before") and the current build ("after"), alternating round by round on the same machine, with the bare baselines beside them. ${d.method ?? ''}`,
    '',
    `Machine: ${machineLine(d)}`,
    '',
    '| Measure | Unit | Before | After | Change | Baseline (same run) |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const r of d.rows as BeforeAfterRow[]) {
    const change = r.before ? `${r.after >= r.before ? '+' : ''}${Math.round(((r.after - r.before) / r.before) * 1000) / 10}%` : '-';
    lines.push(
      `| ${esc(r.metric)} | ${r.unit} | ${fmt(r.before)} | ${fmt(r.after)} | ${change} ${r.higher_is_better ? '' : '(lower is better)'} | ${r.baseline !== null ? `${fmt(r.baseline)} (${r.baseline_name})` : '-'} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** One amplification case as bench/amplification.ts records it. */
interface AmpCase {
  name: string;
  statuses: number[];
  codes: string[];
  durationMs: number;
  stallMs: number;
  peakRssMb: number;
}

/** "Limits: amplification cases": worst /healthz/live stall and peak RSS per case, before and after the work budget. */
function amplification(file: string, d: any): string {
  const before: AmpCase[] = d.details?.before ?? [];
  const after: AmpCase[] = d.details?.after ?? [];
  const answer = (c: AmpCase | undefined) => (c ? `${c.statuses.join(',')} ${esc(c.codes.join(',')) || ''} in ${fmt(c.durationMs)} ms` : '-');
  const lines = [
    '## Limits: amplification cases',
    '',
    `The CPU and memory amplification cases of the work budget (EXTENSIONS.md 6; test/helpers/amplification.ts), measured by bench/amplification.ts (${file}) ` +
      `on the build before the work budget and on this build. ${d.method ?? ''} ` +
      'The stall of a 10 MB case includes reading and parsing its body, which the control case measures alone (transport work, outside the evaluation budget); the rest is evaluation.',
    '',
    `Machine: ${machineLine(d)}${d.details?.before_from ? ` · before figures from ${d.details.before_from}` : ''}`,
    '',
    '| Case | Stall before | Stall after | Peak RSS before | Peak RSS after | Answer before | Answer after |',
    '|---|---:|---:|---:|---:|---|---|',
  ];
  for (const a of after.length > 0 ? after : before) {
    const b = before.find((x) => x.name === a.name);
    const n = after.find((x) => x.name === a.name);
    lines.push(
      `| ${esc(a.name)} | ${b ? `${fmt(b.stallMs)} ms` : '-'} | ${n ? `${fmt(n.stallMs)} ms` : '-'} | ${b ? `${fmt(b.peakRssMb)} MB` : '-'} | ${n ? `${fmt(n.peakRssMb)} MB` : '-'} | ${answer(b)} | ${answer(n)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function main(): void {
  const results = newest();
  const suites = [
    ...ORDER.filter((s) => results.has(s)),
    ...[...results.keys()].filter((s) => !ORDER.includes(s) && s !== 'before-after' && s !== 'amplification'),
  ];
  const out: string[] = [
    '# Benchmarks',
    '',
    '<!-- Generated by bench/report.ts (run by `npm run bench` / `bash bench/run.sh`). Do not edit: edit bench/NOTES.md or the suites. -->',
    '',
    'Every figure below was measured by `npm run bench` with its baseline **in the same run** (same machine, same minute, alternating rounds where it matters). ' +
      'Ratios are svc / baseline. Raw numbers, settings and every round are in the JSON file named per suite under `bench/results/`. ' +
      'Machines here have 2 cores shared with other work: figures move by ±10-20% between runs, ratios much less (see the load average of each suite).',
    '',
    '## Summary',
    '',
    '| Suite | Measure | Who | Figure | Baseline (same run) | Ratio | Target | Result |',
    '|---|---|---|---:|---:|---:|---|---|',
  ];
  for (const suite of suites) {
    const d = results.get(suite)!.data;
    const rows: SummaryRow[] = Array.isArray(d.summary) ? d.summary : legacyRows(suite, d);
    for (const r of rows) {
      out.push(
        `| ${suite} | ${esc(r.metric)}${r.note ? ` <br><sub>${esc(r.note)}</sub>` : ''} | ${r.subject ?? 'svc'} | ${fmt(r.svc)} ${r.unit} | ` +
          `${r.baseline !== null ? `${fmt(r.baseline)} ${r.unit} (${r.baseline_name})` : '-'} | ${r.ratio ?? '-'} | ${r.target ? esc(r.target) : '-'} | ${verdict(r)} |`,
      );
    }
  }
  out.push('', '## Suites: machine and method', '');
  for (const suite of suites) {
    const { file, data: d } = results.get(suite)!;
    out.push(`### ${suite}`, '', `- Result file: \`bench/results/${file}\``, `- Machine: ${machineLine(d)}`);
    if (d.method) out.push(`- Method: ${d.method}`);
    out.push('');
  }
  const ba = beforeAfter();
  if (ba) out.push(ba);
  const amp = results.get('amplification');
  if (amp) out.push(amplification(amp.file, amp.data));
  const notes = join(ROOT, 'bench', 'NOTES.md');
  if (existsSync(notes)) out.push(readFileSync(notes, 'utf8').trim(), '');
  writeFileSync(join(ROOT, 'BENCHMARKS.md'), `${out.join('\n').trimEnd()}\n`);
  console.log(`wrote ${join(ROOT, 'BENCHMARKS.md')} from ${suites.length} suites`);
}

main();
