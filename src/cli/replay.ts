/**
 * `svc replay DIR|FILE --server URL [--candidate FILE]` (EXTENSIONS.md 4 "Decision records",
 * docs/changing-rules.md): re-runs the inputs of recorded decisions on a server and reports the
 * outcomes that changed, as impact does: `{total, changed, errors, transitions, examples}`, for
 * all records and per ruleset (`rulesets`).
 *
 * - With `--candidate FILE`: the records of the candidate's ruleset are sent, in chunks of
 *   `--max-batch-size`, to `POST /api/v1/rulesets/:name/impact` with the document as candidate:
 *   the current version against the candidate, on recorded inputs (the server's impact report,
 *   chunks merged).
 * - Without: each ruleset's inputs run through `POST /api/v1/execute/:name/batch` and each
 *   outcome is compared with the recorded one: the recorded code (or `error:<catalog code>`)
 *   against the current version's.
 *
 * An outcome is the result code or `error:<CODE>`. A line that is not a decision record is
 * skipped and counted (`skipped_lines`): a file cut by a full disk still replays.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, EXIT_FAILED, EXIT_OK } from '../signing/cli-support.js';
import { refusal, remote, STDIO, type Output, type RemoteOptions } from './commands.js';
import { readRuleFile } from './rule-files.js';

/** Options of `svc replay`. */
export interface ReplayOptions extends RemoteOptions {
  candidate?: string;
  /** Inputs per request (default 1000; at most the server's --max-batch-size). */
  maxBatchSize?: string | number;
  /** Only the records of this ruleset. */
  ruleset?: string;
}

/** The fields of a decision record replay reads. */
export interface DecisionRecordLine {
  readonly decision_id: string;
  readonly tenant: string;
  readonly ruleset: string;
  readonly input: unknown;
  readonly code: string | null;
  readonly error?: { readonly code: string } | null;
}

/** The report of a replay (impact's, per ruleset and in total). */
export interface ReplayReport {
  total: number;
  changed: number;
  errors: number;
  transitions: Array<{ from: string; to: string; count: number }>;
  examples: Array<{ input: unknown; from: string; to: string; ruleset?: string; decision_id?: string }>;
}

/** Most examples a report keeps (as impact). */
const MAX_EXAMPLES = 20;

/** Default inputs per request. */
const DEFAULT_CHUNK = 1000;

/** The decision files of `path`: the file itself, or every `decisions-*.jsonl` of a directory, oldest day first. */
export function decisionFiles(path: string): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new CliError(`${path}: no such file or directory`);
  }
  if (!st.isDirectory()) return [path];
  return readdirSync(path)
    .filter((n) => n.startsWith('decisions-') && n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(path, n));
}

/** The decision records of `files`, and how many lines were not records. */
export function readDecisionRecords(files: readonly string[]): { records: DecisionRecordLine[]; skipped: number } {
  const records: DecisionRecordLine[] = [];
  let skipped = 0;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`${file}: cannot read: ${(err as Error).message}`);
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        skipped++;
        continue;
      }
      if (isRecord(v)) records.push(v);
      else skipped++;
    }
  }
  return { records, skipped };
}

function isRecord(v: unknown): v is DecisionRecordLine {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  const input = r['input'];
  return (
    typeof r['decision_id'] === 'string' &&
    typeof r['tenant'] === 'string' &&
    typeof r['ruleset'] === 'string' &&
    typeof input === 'object' &&
    input !== null &&
    !Array.isArray(input) &&
    (typeof r['code'] === 'string' || r['code'] === null)
  );
}

/** The recorded outcome of a record: its code, or `error:<code>`. */
export function recordedOutcome(r: DecisionRecordLine): string {
  if (r.code !== null) return r.code;
  return `error:${r.error?.code ?? 'UNKNOWN'}`;
}

/** An empty report. */
function emptyReport(): ReplayReport {
  return { total: 0, changed: 0, errors: 0, transitions: [], examples: [] };
}

/** Adds `part` (a report of the same or another ruleset) into `into`. */
export function mergeReport(into: ReplayReport, part: ReplayReport, ruleset?: string): void {
  into.total += part.total;
  into.changed += part.changed;
  into.errors += part.errors;
  for (const t of part.transitions) {
    const same = into.transitions.find((x) => x.from === t.from && x.to === t.to);
    if (same) same.count += t.count;
    else into.transitions.push({ from: t.from, to: t.to, count: t.count });
  }
  into.transitions.sort((a, b) => b.count - a.count || order(a.from, b.from) || order(a.to, b.to));
  for (const e of part.examples) {
    if (into.examples.length >= MAX_EXAMPLES) break;
    into.examples.push(ruleset === undefined || e.ruleset !== undefined ? e : { ...e, ruleset });
  }
}

function order(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `svc replay`: see the module comment. Exit 0: no outcome changed; 1: some changed (or the server refused). */
export async function replayCommand(path: string, opts: ReplayOptions, o: Output = STDIO): Promise<number> {
  const chunk = chunkSize(opts.maxBatchSize);
  const candidate = opts.candidate === undefined ? undefined : readRuleFile(opts.candidate).doc;
  const candidateName = candidate === undefined ? undefined : nameOf(candidate, opts.candidate as string);
  const { records, skipped } = readDecisionRecords(decisionFiles(path));
  // Records grouped by tenant and ruleset, in the order first seen.
  const groups = new Map<string, { tenant: string; ruleset: string; records: DecisionRecordLine[] }>();
  for (const r of records) {
    if (opts.tenant !== undefined && r.tenant !== opts.tenant) continue;
    if (opts.ruleset !== undefined && r.ruleset !== opts.ruleset) continue;
    if (candidateName !== undefined && r.ruleset !== candidateName) continue;
    const key = r.tenant === 'default' ? r.ruleset : `${r.tenant}/${r.ruleset}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { tenant: r.tenant, ruleset: r.ruleset, records: [] }));
    g.records.push(r);
  }
  const total = emptyReport();
  const rulesets: Record<string, ReplayReport> = {};
  for (const [key, g] of groups) {
    const remoteOpts: RemoteOptions = { ...opts, ...(g.tenant !== 'default' || opts.tenant !== undefined ? { tenant: g.tenant } : {}) };
    const report = emptyReport();
    for (let i = 0; i < g.records.length; i += chunk) {
      const part = g.records.slice(i, i + chunk);
      const r = candidate === undefined ? await againstCurrent(remoteOpts, g.ruleset, part) : await againstCandidate(remoteOpts, g.ruleset, candidate, part);
      if (typeof r === 'string') {
        o.err(`svc replay: ${key} refused: ${r}\n`);
        return EXIT_FAILED;
      }
      mergeReport(report, r);
    }
    rulesets[key] = report;
    mergeReport(total, report, key);
  }
  o.out(`${JSON.stringify({ ...total, rulesets, skipped_lines: skipped })}\n`);
  return total.changed === 0 ? EXIT_OK : EXIT_FAILED;
}

/** Recorded outcomes against the current version (batch execute); a refusal is its text. */
async function againstCurrent(opts: RemoteOptions, name: string, records: readonly DecisionRecordLine[]): Promise<ReplayReport | string> {
  const r = await remote(opts, 'POST', `api/v1/execute/${encodeURIComponent(name)}/batch`, { inputs: records.map((x) => x.input) });
  const results = (r.body as { results?: unknown[] } | undefined)?.results;
  if (r.status !== 200 || !Array.isArray(results) || results.length !== records.length) return refusal(r);
  const report = emptyReport();
  records.forEach((rec, i) => {
    const item = results[i] as { code?: unknown; error?: unknown };
    const now = typeof item.error === 'string' ? `error:${String(item.code)}` : String(item.code);
    const before = recordedOutcome(rec);
    report.total++;
    if (before.startsWith('error:') || now.startsWith('error:')) report.errors++;
    if (before === now) return;
    report.changed++;
    const t = report.transitions.find((x) => x.from === before && x.to === now);
    if (t) t.count++;
    else report.transitions.push({ from: before, to: now, count: 1 });
    if (report.examples.length < MAX_EXAMPLES) report.examples.push({ input: rec.input, from: before, to: now, decision_id: rec.decision_id });
  });
  report.transitions.sort((a, b) => b.count - a.count || order(a.from, b.from) || order(a.to, b.to));
  return report;
}

/** The current version against `candidate` on the recorded inputs (the impact route); a refusal is its text. */
async function againstCandidate(opts: RemoteOptions, name: string, candidate: unknown, records: readonly DecisionRecordLine[]): Promise<ReplayReport | string> {
  const r = await remote(opts, 'POST', `api/v1/rulesets/${encodeURIComponent(name)}/impact`, { candidate, inputs: records.map((x) => x.input) });
  if (r.status !== 200 || typeof r.body !== 'object' || r.body === null) return refusal(r);
  return r.body as ReplayReport;
}

function chunkSize(v: string | number | undefined): number {
  if (v === undefined) return DEFAULT_CHUNK;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`--max-batch-size must be a positive integer, got ${String(v)}`);
  return n;
}

function nameOf(doc: Record<string, unknown>, file: string): string {
  const config = doc['config'] as Record<string, unknown> | undefined;
  const name = config?.['name'];
  if (typeof name !== 'string') throw new CliError(`${file}: the candidate has no config.name`);
  return name;
}
