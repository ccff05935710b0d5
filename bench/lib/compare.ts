/**
 * The judgement of `npm run bench:compare` (bench/compare.ts), as pure functions over result
 * files: the suite reports of a base build and of a head build (one or more runs of each suite
 * per build) are matched figure by figure (suite + metric + subject), and each figure of the
 * head is judged against the base's with a noise band.
 *
 * - The figure compared is the row's ratio to its same-run baseline when it has one (svc / bare
 *   fastify, svc / walker, ...: the baseline does not change between builds and cancels the
 *   machine's drift), else the figure itself.
 * - Which way is better comes from the row's target (`>=` higher, `<`/`<=` lower), else from its
 *   unit (per second and `x` higher; times and sizes lower); a row with neither is reported and
 *   not judged.
 * - The noise band of a figure is the larger of its suite's default band (`DEFAULT_BANDS`,
 *   documented in bench/NOTES.md) and the spread of the runs of either build, (max - min) /
 *   median, when a build ran the suite more than once.
 * - Regression: the head's median is worse than the base's by more than the band, and, when the
 *   row has an absolute target (`<= 2000 ns`, `< 5 ms`; no baseline), by more than the band times
 *   that bound too: a figure that is a small difference of two measured ones (`validation cost = with -
 *   without`) moves by large fractions of itself from run to run. A figure only one build has
 *   is reported (`new`, `gone`) and never fails the comparison.
 */
import type { SummaryRow, SuiteReport } from './report.js';

/** Default relative noise band per suite (bench/NOTES.md "bench:compare"); others: `FALLBACK_BAND`. */
export const DEFAULT_BANDS: Readonly<Record<string, number>> = {
  engine: 0.3,
  tables: 0.3,
  calls: 0.3,
  schema: 0.3,
  filter: 0.3,
  diff: 0.3,
  impact: 0.3,
  batch: 0.15,
  http: 0.1,
  auth: 0.08,
  shadow: 0.1,
  declog: 0.1,
  grpc: 0.15,
  scale: 0.15,
  multicore: 0.2,
  fleet: 0.2,
};
export const FALLBACK_BAND = 0.2;

export type Direction = 'higher' | 'lower';
export type Verdict = 'regression' | 'improvement' | 'within noise' | 'not judged' | 'new' | 'gone';

/** One figure of the comparison. */
export interface CompareRow {
  readonly suite: string;
  readonly metric: string;
  /** What was compared: `ratio to <baseline>` or the row's unit. */
  readonly measure: string;
  readonly direction: Direction | null;
  /** Medians over the runs of each build (null: that build has no such figure). */
  readonly base: number | null;
  readonly head: number | null;
  /** (head - base) / base (null when either is missing or base is 0). */
  readonly change: number | null;
  /** The relative band used. */
  readonly band: number;
  readonly verdict: Verdict;
}

/** Options of `compareReports`. */
export interface CompareOptions {
  /** Per-suite bands replacing the defaults. */
  readonly bands?: Readonly<Record<string, number>>;
}

/** Which way is better for a summary row, or null when the row does not say. */
export function directionOf(row: Pick<SummaryRow, 'target' | 'unit'>): Direction | null {
  const t = (row.target ?? '').trim();
  if (t.startsWith('>')) return 'higher';
  if (t.startsWith('<')) return 'lower';
  const u = row.unit.trim().toLowerCase();
  if (u === 'x' || u.endsWith('/s') || u.includes('/cpu-s') || u.includes('per s')) return 'higher';
  if (['ns', 'us', 'µs', 'ms', 's', 'b', 'bytes', 'kb', 'kib', 'mb', 'mib'].includes(u)) return 'lower';
  return null;
}

/** The value compared for a row: its ratio to the same-run baseline when it has one, else the figure. */
export function figureOf(row: SummaryRow): { value: number; measure: string } {
  if (row.baseline !== null && row.ratio !== null && row.baseline_name !== null) return { value: row.ratio, measure: `ratio to ${row.baseline_name}` };
  return { value: row.svc, measure: row.unit };
}

/** (max - min) / median of the values (0 for fewer than two). */
export function spread(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = medianOf(values);
  if (!(m !== 0 && Number.isFinite(m))) return 0;
  return (Math.max(...values) - Math.min(...values)) / Math.abs(m);
}

/** Median (mean of the middle two for an even count); NaN for none. */
export function medianOf(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The number of a target such as `<= 2000 ns` or `>= 0.85 x bare fastify` (null: none). */
export function targetBound(target: string | null | undefined): number | null {
  const m = /^[<>]=?\s*(\d+(?:\.\d+)?)/.exec((target ?? '').trim());
  return m ? Number(m[1]) : null;
}

interface Collected {
  readonly suite: string;
  readonly metric: string;
  readonly measure: string;
  readonly direction: Direction | null;
  /** The bound of the row's target, in the unit of the compared value; null: none. */
  readonly bound: number | null;
  readonly values: number[];
}

/** Figures of the reports keyed by suite + metric + subject, in first-seen order. */
function collect(reports: readonly SuiteReport[]): Map<string, Collected> {
  const out = new Map<string, Collected>();
  for (const r of reports) {
    for (const row of r.summary ?? []) {
      const key = `${r.suite}\u0000${row.metric}\u0000${row.subject ?? ''}`;
      const { value, measure } = figureOf(row);
      if (!Number.isFinite(value)) continue;
      let c = out.get(key);
      if (c === undefined) {
        c = {
          suite: r.suite,
          metric: row.subject ? `${row.metric} (${row.subject})` : row.metric,
          measure,
          direction: directionOf(row),
          // Only an absolute target's bound: a ratio is already relative to its baseline.
          bound: row.ratio === null || row.baseline === null ? targetBound(row.target) : null,
          values: [],
        };
        out.set(key, c);
      }
      c.values.push(value);
    }
  }
  return out;
}

/** Compares the head build's reports with the base build's, figure by figure. */
export function compareReports(base: readonly SuiteReport[], head: readonly SuiteReport[], options: CompareOptions = {}): CompareRow[] {
  const b = collect(base);
  const h = collect(head);
  const bandOf = (suite: string): number => options.bands?.[suite] ?? DEFAULT_BANDS[suite] ?? FALLBACK_BAND;
  const rows: CompareRow[] = [];
  for (const [key, hc] of h) {
    const bc = b.get(key);
    const suiteBand = bandOf(hc.suite);
    if (bc === undefined) {
      rows.push({
        suite: hc.suite,
        metric: hc.metric,
        measure: hc.measure,
        direction: hc.direction,
        base: null,
        head: medianOf(hc.values),
        change: null,
        band: suiteBand,
        verdict: 'new',
      });
      continue;
    }
    const bm = medianOf(bc.values);
    const hm = medianOf(hc.values);
    const band = Math.max(suiteBand, spread(bc.values), spread(hc.values));
    const change = bm !== 0 ? (hm - bm) / Math.abs(bm) : null;
    const direction = hc.measure === bc.measure ? hc.direction : null;
    let verdict: Verdict;
    if (direction === null || change === null) verdict = 'not judged';
    else {
      const better = direction === 'higher' ? change : -change;
      // Below the band times the target's bound, a change is noise however large relative to the figure.
      const bound = hc.bound ?? bc.bound;
      const large = bound === null || Math.abs(hm - bm) > band * bound;
      verdict = large && better < -band ? 'regression' : large && better > band ? 'improvement' : 'within noise';
    }
    rows.push({ suite: hc.suite, metric: hc.metric, measure: hc.measure, direction, base: bm, head: hm, change, band, verdict });
  }
  for (const [key, bc] of b) {
    if (h.has(key)) continue;
    rows.push({
      suite: bc.suite,
      metric: bc.metric,
      measure: bc.measure,
      direction: bc.direction,
      base: medianOf(bc.values),
      head: null,
      change: null,
      band: bandOf(bc.suite),
      verdict: 'gone',
    });
  }
  return rows;
}

/** True when any figure regressed beyond its band. */
export function hasRegression(rows: readonly CompareRow[]): boolean {
  return rows.some((r) => r.verdict === 'regression');
}

/** The comparison as a text table (one line per figure). */
export function formatTable(rows: readonly CompareRow[], baseName: string, headName: string): string {
  const num = (v: number | null): string => (v === null ? '-' : Math.abs(v) >= 100 ? String(Math.round(v)) : String(Math.round(v * 1000) / 1000));
  const pct = (v: number | null): string => (v === null ? '-' : `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)}%`);
  const header = ['suite', 'figure', 'measure', baseName, headName, 'change', 'band', 'verdict'];
  const lines = rows.map((r) => [
    r.suite,
    r.metric,
    `${r.measure}${r.direction ? ` (${r.direction} is better)` : ''}`,
    num(r.base),
    num(r.head),
    pct(r.change),
    `±${(r.band * 100).toFixed(0)}%`,
    r.verdict.toUpperCase(),
  ]);
  const widths = header.map((h, i) => Math.min(i === 1 ? 70 : 40, Math.max(h.length, ...lines.map((l) => (l[i] as string).length))));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (c.length > (widths[i] as number) ? `${c.slice(0, (widths[i] as number) - 1)}…` : c.padEnd(widths[i] as number))).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
