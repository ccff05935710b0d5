/** A tiny parser of the Prometheus text exposition format, for the metrics tests. */

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parsed exposition: metric families by name (type and help) and every sample. */
export interface Exposition {
  readonly types: Map<string, string>;
  readonly help: Map<string, string>;
  readonly samples: Sample[];
}

function unescape(text: string): string {
  return text.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  const value = Number(text);
  if (Number.isNaN(value) && text !== 'NaN') throw new Error(`bad sample value ${text}`);
  return value;
}

/** Parses exposition text; throws on a line it does not understand. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      types.set(m[1] as string, m[2] as string);
      continue;
    }
    m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      help.set(m[1] as string, m[2] as string);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let consumed = 0;
    for (let p = pair.exec(body); p !== null; p = pair.exec(body)) {
      labels[p[1] as string] = unescape(p[2] as string);
      consumed = pair.lastIndex;
    }
    if (consumed !== body.length) throw new Error(`bad labels in: ${line}`);
    samples.push({ name: m[1] as string, labels, value: parseValue(m[3] as string) });
  }
  return { types, help, samples };
}

/** The samples of `name` whose labels include `labels`. */
export function find(exp: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exp.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The value of the one sample of `name` with exactly these labels (throws if not exactly one). */
export function value(exp: Exposition, name: string, labels: Record<string, string> = {}): number {
  const keys = Object.keys(labels).sort().join(',');
  const found = find(exp, name, labels).filter((s) => Object.keys(s.labels).sort().join(',') === keys);
  if (found.length !== 1) throw new Error(`expected one sample ${name}${JSON.stringify(labels)}, found ${found.length}`);
  return (found[0] as Sample).value;
}
