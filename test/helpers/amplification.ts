/**
 * The CPU and memory amplification cases of the work budget (EXTENSIONS.md 6 "Work budget"),
 * shared by test/integration/amplification.test.ts (with the default limits: bounds asserted)
 * and bench/amplification.ts (the same cases measured on two builds, before and after):
 *
 *   1. `/eval` of `[a,a,…×1000] == [b,b,…×1000]` with `a`, `b` arrays of 2,500,000 zeros (10 MB),
 *      and a 9.6 MB batch of 2,400 items against a ruleset with that condition (1,000 zeros each);
 *   2. `/eval` of `upper(s+s+…×200)` with a 1 MB `s`, from ten clients that never read their
 *      answers, then one that does;
 *   3. a ruleset with `config.timeout_ms: 100` and one heavy condition.
 *
 * While a case runs, `/healthz/live` is polled on another connection: the worst answer time is
 * the case's stall. The server's RSS is sampled (`/proc/<pid>/status` VmRSS) for its peak.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';

/** What one case measured. */
export interface CaseResult {
  readonly name: string;
  /** HTTP statuses of the answers that were read. */
  readonly statuses: number[];
  /** `code` of the answers read (error code, or the result code). */
  readonly codes: string[];
  /** Wall time of the case, ms. */
  readonly durationMs: number;
  /** Slowest `/healthz/live` answer while the case ran, ms. */
  readonly stallMs: number;
  /** Highest VmRSS sampled while the case ran, MB. */
  readonly peakRssMb: number;
}

/** A running server: its HTTP base URL and pid. */
export interface Target {
  readonly url: string;
  readonly pid: number;
}

const zeros = (n: number): string => `[${'0,'.repeat(n - 1)}0]`;
const repeatJoin = (item: string, n: number, sep: string): string => new Array<string>(n).fill(item).join(sep);

/** `[a,a,…×n] == [b,b,…×n]`. */
export function heavyCondition(n: number): string {
  return `[${repeatJoin('a', n, ',')}] == [${repeatJoin('b', n, ',')}]`;
}

/** Case 1, `/eval`: 10 MB body. */
export function evalEqualityBody(): string {
  return `{"expression":${JSON.stringify(heavyCondition(1000))},"context":{"a":${zeros(2_500_000)},"b":${zeros(2_500_000)}}}`;
}

/** A one-decision ruleset whose condition is `condition`. */
export function heavyRuleset(name: string, condition: string, timeoutMs?: number): unknown {
  return {
    config: { name, entry_step: 'check', ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }) },
    steps: {
      check: { type: 'decision', branches: [{ condition, next_step: 'same' }], default_next: 'different' },
      same: { type: 'terminal', result: { code: 'SAME', message: 'same' } },
      different: { type: 'terminal', result: { code: 'DIFFERENT', message: 'different' } },
    },
  };
}

/** Case 1, batch: 2,400 items of `a`, `b` with 1,000 zeros each (9.6 MB). */
export function batchBody(): string {
  const item = `{"a":${zeros(1000)},"b":${zeros(1000)}}`;
  return `{"inputs":[${repeatJoin(item, 2400, ',')}]}`;
}

/** Case 2: `upper(s+s+…×200)` with a 1 MB `s`. */
export function upperBody(): string {
  return `{"expression":"upper(${repeatJoin('s', 200, '+')})","context":{"s":"${'x'.repeat(1_000_000)}"}}`;
}

/** Case 3 input: `a`, `b` with 2,500,000 zeros each (10 MB), for a condition of 300 pairs. */
export function timeoutBody(): string {
  return `{"input":{"a":${zeros(2_500_000)},"b":${zeros(2_500_000)}}}`;
}

/** VmRSS of a process, MB (0 when it cannot be read). */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** An answer: status, `code` (or the distinct item codes of a batch, or the size of a big body), body when small JSON. */
export interface Answer {
  readonly status: number;
  readonly code: string;
  readonly body: unknown;
}

/** One HTTP request; reads the whole answer (its body parsed when it is at most 1 MiB of JSON). */
export function send(url: string, method: string, path: string, body?: string, agent?: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, agent: agent ?? false, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= 1 << 20) chunks.push(c);
        });
        res.on('end', () => {
          let code = '';
          let parsed: unknown = null;
          if (size <= 1 << 20) {
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              code = codeOf(parsed);
            } catch {
              code = '';
            }
          } else {
            code = `(${size} bytes)`;
          }
          resolve({ status: res.statusCode ?? 0, code, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `code` of an answer body, or the distinct codes of a batch answer's items joined with `,`. */
function codeOf(v: unknown): string {
  const o = v as { code?: unknown; results?: unknown };
  if (typeof o?.code === 'string') return o.code;
  if (Array.isArray(o?.results)) {
    const codes = new Set(o.results.map((r: { code?: unknown }) => String(r.code)));
    return [...codes].join(',');
  }
  return '';
}

/**
 * Sends a request on a raw socket and never reads the answer (the socket is paused): the
 * server has to buffer whatever it answers. Resolves once the request is written.
 */
export function sendUnread(url: string, path: string, body: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname, () => {
      sock.pause();
      sock.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
      sock.write(body, () => resolve(sock));
    });
    sock.on('error', reject);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `work` against `target` while polling `/healthz/live` on its own keep-alive connection
 * (one request at a time, every 50 ms) and sampling the server's RSS every 50 ms.
 */
export async function measureCase(target: Target, name: string, work: () => Promise<Answer[]>): Promise<CaseResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await send(target.url, 'GET', '/healthz/live', undefined, agent); // the poller's connection is open
  let running = true;
  let stallMs = 0;
  let peakRssMb = rssMb(target.pid);
  const poller = (async () => {
    while (running) {
      const t = performance.now();
      await send(target.url, 'GET', '/healthz/live', undefined, agent);
      stallMs = Math.max(stallMs, performance.now() - t);
      await sleep(50);
    }
  })();
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, rssMb(target.pid));
  }, 50);
  const started = performance.now();
  let answers: Answer[];
  try {
    answers = await work();
  } finally {
    running = false;
  }
  const durationMs = performance.now() - started;
  await poller;
  clearInterval(sampler);
  peakRssMb = Math.max(peakRssMb, rssMb(target.pid));
  agent.destroy();
  return {
    name,
    statuses: answers.map((a) => a.status),
    codes: answers.map((a) => a.code),
    durationMs: Math.round(durationMs),
    stallMs: Math.round(stallMs),
    peakRssMb: Math.round(peakRssMb),
  };
}

/**
 * The control: `/eval` of `1` with the 10 MB context of case 1, i.e. what reading and parsing
 * such a body costs by itself (transport work, outside the evaluation budget).
 */
export function controlCase(): { name: string; run: (t: Target) => Promise<Answer[]> } {
  return {
    name: '0. control: /eval of 1, same 10 MB context',
    run: async (t) => [await send(t.url, 'POST', '/api/v1/eval', `{"expression":"1","context":{"a":${zeros(2_500_000)},"b":${zeros(2_500_000)}}}`)],
  };
}

/** The cases, in order, each a name and its work against a server. */
export function amplificationCases(): Array<{ name: string; run: (t: Target) => Promise<Answer[]> }> {
  return [
    {
      name: '1. /eval deep equality, 10 MB',
      run: async (t) => [await send(t.url, 'POST', '/api/v1/eval', evalEqualityBody())],
    },
    {
      name: '1. batch of 2,400 deep equalities, 9.6 MB',
      run: async (t) => {
        await send(t.url, 'POST', '/api/v1/rulesets', JSON.stringify(heavyRuleset('amp_batch', heavyCondition(1000))));
        return [await send(t.url, 'POST', '/api/v1/execute/amp_batch/batch', batchBody())];
      },
    },
    {
      name: '2. upper(s+s+…×200), 10 unread clients + 1',
      run: async (t) => {
        const body = upperBody();
        const unread: Socket[] = [];
        for (let i = 0; i < 10; i++) unread.push(await sendUnread(t.url, '/api/v1/eval', body));
        const answer = await send(t.url, 'POST', '/api/v1/eval', body);
        await sleep(500);
        for (const s of unread) s.destroy();
        return [answer];
      },
    },
    {
      name: '3. timeout_ms 100, one heavy condition',
      run: async (t) => {
        await send(t.url, 'POST', '/api/v1/rulesets', JSON.stringify(heavyRuleset('amp_timeout', heavyCondition(300), 100)));
        return [await send(t.url, 'POST', '/api/v1/execute/amp_timeout', timeoutBody())];
      },
    },
  ];
}
