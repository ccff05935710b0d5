/**
 * `--log-format pretty`: a pino destination that turns each JSON log line into one readable
 * line (`12:00:01.250 WARN  skipped a rule file path=r.json reason="..."`), and the `ready`
 * record into the start-up banner (banner.ts). Multi-line field values (stacks) follow their
 * line, indented.
 *
 * Until `ready`, info, warn and debug lines are held back for at most `holdMs`: when the banner
 * comes, the lines it repeats (listening addresses, rules loaded, its warnings) are dropped and
 * the others are printed before it. An error line, the time limit, or `flush()` (at process
 * exit) prints everything held, so a server that fails or hangs while starting still says why.
 */
import { BANNER_REPEATS, isReadyRecord, renderBanner, type ReadyReport } from './banner.js';

/** Where the readable text goes. */
export interface TextSink {
  write(text: string): unknown;
}

/** Options of `PrettyLogStream`. */
export interface PrettyLogOptions {
  readonly out: TextSink;
  /** ANSI colours (only when writing to a terminal). Default false. */
  readonly color?: boolean;
  /** Longest time start-up lines are held waiting for the banner, in ms. Default 2000. */
  readonly holdMs?: number;
}

const LEVEL_COLOR: Record<string, string> = { error: '31', fatal: '31', warn: '33', info: '32', debug: '90', trace: '90' };
/** Fields every line has, shown in the line's head rather than as `key=value`. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg']);

/** A pino destination (it calls `write` with one JSON line at a time). */
export class PrettyLogStream {
  private held: Array<Record<string, unknown>> | null = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PrettyLogOptions) {}

  /** One log line from pino (JSON and a newline); anything not JSON is passed through. */
  write(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.options.out.write(line);
      return;
    }
    if (typeof record !== 'object' || record === null) {
      this.options.out.write(line);
      return;
    }
    if (isReadyRecord(record)) {
      this.showBanner(record as unknown as ReadyReport);
      return;
    }
    const level = String(record['level'] ?? 'info');
    if (this.held !== null && level !== 'error' && level !== 'fatal') {
      this.held.push(record);
      this.timer ??= setTimeout(() => this.flush(), this.options.holdMs ?? 2000).unref();
      return;
    }
    this.flush();
    this.options.out.write(formatRecord(record, this.options.color ?? false));
  }

  /** Prints every held line and stops holding. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    const held = this.held ?? [];
    this.held = null;
    for (const record of held) this.options.out.write(formatRecord(record, this.options.color ?? false));
  }

  private showBanner(report: ReadyReport): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    const warnings = new Set(report.warnings);
    const held = this.held ?? [];
    this.held = null;
    for (const record of held) {
      const msg = String(record['msg'] ?? '');
      if (BANNER_REPEATS.has(msg) || (record['level'] === 'warn' && warnings.has(msg))) continue;
      this.options.out.write(formatRecord(record, this.options.color ?? false));
    }
    this.options.out.write(renderBanner(report, this.options.color ?? false));
  }
}

/** One record as a readable line: time (UTC), level, message, then `key=value` fields. */
export function formatRecord(record: Record<string, unknown>, color = false): string {
  const level = String(record['level'] ?? 'info');
  const time = typeof record['time'] === 'string' ? record['time'].slice(11, 23) : '';
  const paint = (code: string | undefined, text: string) => (color && code ? `\u001b[${code}m${text}\u001b[0m` : text);
  const fields: string[] = [];
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (HEAD_FIELDS.has(key) || value === undefined) continue;
    if (typeof value === 'string' && value.includes('\n')) {
      blocks.push(...value.split('\n').map((l) => `    ${l}`));
      continue;
    }
    fields.push(`${paint('2', `${key}=`)}${fieldText(value)}`);
  }
  const head = [time, paint(LEVEL_COLOR[level], level.toUpperCase().padEnd(5)), String(record['msg'] ?? '')].filter((p) => p !== '').join(' ');
  return `${[head, ...fields].join(' ')}\n${blocks.map((b) => `${b}\n`).join('')}`;
}

/** A field value: plain when it is one word, else JSON (strings quoted, objects compact). */
function fieldText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
