/**
 * Engine benchmark: one three-decision ruleset executed in-process by
 *   - svc (compileRuleset once, then execute with trace off and the real clock),
 *   - a hand-written closure walker (the practical floor; same result contract, same clock),
 *   - the same walker without clock reads (for reference),
 *   - @gorules/zen-engine (an equivalent JDM decision graph; its evaluate API is async),
 *   - json-rules-engine (equivalent rules; async).
 * Each contender runs in its own process and is checked on all four paths before timing. Prints ns per execution (median)
 * and ratios against the walker, and writes bench/results/engine-<timestamp>.json.
 *
 * Run: `npm run bench` (or `node --import tsx bench/engine.ts` after building dist/).
 * svc is loaded from dist/ (what ships); SVC_BENCH_SRC=1 loads src/ through tsx instead.
 */
import { execSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ZenEngine } from '@gorules/zen-engine';
import { Engine } from 'json-rules-engine';
import { DEFAULT_MEASURE, measureAsync, measureSync, type Timing } from './measure.js';

type SvcModule = typeof import('../src/ruleset/index.js');

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');

/** The benchmark input (APPROVE path). */
const INPUT = { user: { age: 30, vip: true, country: 'US' }, order: { amount: 1500 } };

/** Inputs for the correctness check, one per path. */
const CHECKS: ReadonlyArray<[input: typeof INPUT, code: string]> = [
  [INPUT, 'APPROVE'],
  [{ user: { age: 17, vip: true, country: 'US' }, order: { amount: 1500 } }, 'REJECT_AGE'],
  [{ user: { age: 30, vip: false, country: 'US' }, order: { amount: 10 } }, 'REVIEW'],
  [{ user: { age: 30, vip: false, country: 'FR' }, order: { amount: 5000 } }, 'REJECT_REGION'],
];

const TERMINALS = {
  APPROVE: 'approved',
  REVIEW: 'manual review',
  REJECT_AGE: 'too young',
  REJECT_REGION: 'region not served',
} as const;

/** The svc ruleset of the scenario. */
const RULESET = {
  config: { name: 'bench-approval', version: '1.0.0', entry_step: 'd1' },
  steps: {
    d1: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'd2' }], default_next: 'REJECT_AGE' },
    d2: { type: 'decision', branches: [{ condition: 'user.vip || order.amount > 1000', next_step: 'd3' }], default_next: 'REVIEW' },
    d3: { type: 'decision', branches: [{ condition: 'user.country in ["US", "CA"]', next_step: 'APPROVE' }], default_next: 'REJECT_REGION' },
    ...Object.fromEntries(Object.entries(TERMINALS).map(([code, message]) => [code, { type: 'terminal', result: { code, message } }])),
  },
};

/** Result shape every sync contender returns. */
interface Result {
  code: string;
  message: string;
  output: Record<string, unknown>;
  duration_us: number;
}

/** Keeps the last result reachable so no contender's result allocation can be optimized away. */
let lastResult: unknown = null;

interface Contender {
  readonly name: string;
  readonly note: string;
  run(input: typeof INPUT): Result | Promise<{ code: string }>;
  readonly async: boolean;
}

// ------------------------------------------------------------------ hand-written walker

type Node = { test: (i: any) => boolean; then: Node; else: Node } | { test: undefined; code: string; message: string };

function walker(withClock: boolean): Contender {
  const t = (code: keyof typeof TERMINALS): Node => ({ test: undefined, code, message: TERMINALS[code] });
  const d3: Node = { test: (i) => i.user.country === 'US' || i.user.country === 'CA', then: t('APPROVE'), else: t('REJECT_REGION') };
  const d2: Node = { test: (i) => i.user.vip === true || i.order.amount > 1000, then: d3, else: t('REVIEW') };
  const d1: Node = { test: (i) => i.user.age >= 18, then: d2, else: t('REJECT_AGE') };
  const output = Object.freeze({});
  const clock = (): number => performance.now();
  return {
    name: withClock ? 'walker' : 'walker-noclock',
    note: withClock ? 'hand-written closures over a step graph; same result contract and clock reads as svc' : 'same walker without the two clock reads',
    async: false,
    run: withClock
      ? (input) => {
          const start = clock();
          let n: Node = d1;
          while (n.test !== undefined) n = n.test(input) ? n.then : n.else;
          return { code: n.code, message: n.message, output, duration_us: Math.round((clock() - start) * 1000) };
        }
      : (input) => {
          let n: Node = d1;
          while (n.test !== undefined) n = n.test(input) ? n.then : n.else;
          return { code: n.code, message: n.message, output, duration_us: 0 };
        },
  };
}

// ------------------------------------------------------------------ svc

async function svc(): Promise<Contender> {
  const fromSrc = process.env['SVC_BENCH_SRC'] === '1';
  const mod = (await import(fromSrc ? '../src/ruleset/index.js' : '../dist/ruleset/index.js')) as SvcModule;
  const compiled = mod.compileRuleset(RULESET);
  const options = Object.freeze({ trace: false, clock: () => performance.now(), timeoutMs: 5000, maxSteps: 10000 });
  return {
    name: 'svc',
    note: `compileRuleset once, execute(trace off, performance.now) from ${fromSrc ? 'src (tsx)' : 'dist'}`,
    async: false,
    run: (input) => mod.execute(compiled, input, options) as Result,
  };
}

// ------------------------------------------------------------------ @gorules/zen-engine

function zen(): Contender {
  const node = (id: string, type: string, content?: unknown) => ({ id, name: id, type, position: { x: 0, y: 0 }, ...(content ? { content } : {}) });
  const sw = (id: string, condition: string) =>
    node(id, 'switchNode', { hitPolicy: 'first', statements: [{ id: `${id}-yes`, condition }, { id: `${id}-else`, condition: '' }] });
  const term = (code: string, message: string) =>
    node(code, 'expressionNode', { expressions: [{ id: `${code}-c`, key: 'code', value: JSON.stringify(code) }, { id: `${code}-m`, key: 'message', value: JSON.stringify(message) }] });
  const edge = (from: string, to: string, handle?: string) => ({ id: `${from}->${to}`, type: 'edge', sourceId: from, targetId: to, ...(handle ? { sourceHandle: handle } : {}) });
  const graph = {
    contentType: 'application/vnd.gorules.decision',
    nodes: [
      node('in', 'inputNode'),
      sw('d1', 'user.age >= 18'),
      sw('d2', 'user.vip or order.amount > 1000'),
      sw('d3', "user.country in ['US', 'CA']"),
      ...Object.entries(TERMINALS).map(([c, m]) => term(c, m)),
      node('out', 'outputNode'),
    ],
    edges: [
      edge('in', 'd1'),
      edge('d1', 'd2', 'd1-yes'),
      edge('d1', 'REJECT_AGE', 'd1-else'),
      edge('d2', 'd3', 'd2-yes'),
      edge('d2', 'REVIEW', 'd2-else'),
      edge('d3', 'APPROVE', 'd3-yes'),
      edge('d3', 'REJECT_REGION', 'd3-else'),
      ...Object.keys(TERMINALS).map((c) => edge(c, 'out')),
    ],
  };
  const decision = new ZenEngine().createDecision(graph);
  return {
    name: 'zen-engine',
    note: 'JDM graph: 3 switch nodes (hitPolicy first) + expression nodes; decision.evaluate (async, native)',
    async: true,
    run: async (input) => (await decision.evaluate(input)).result as { code: string },
  };
}

// ------------------------------------------------------------------ json-rules-engine

function jsonRules(): Contender {
  const engine = new Engine([], { allowUndefinedFacts: true });
  const adult = { fact: 'user', path: '$.age', operator: 'greaterThanInclusive', value: 18 };
  const minor = { fact: 'user', path: '$.age', operator: 'lessThan', value: 18 };
  const vipOrBig = { any: [{ fact: 'user', path: '$.vip', operator: 'equal', value: true }, { fact: 'order', path: '$.amount', operator: 'greaterThan', value: 1000 }] };
  const region = { fact: 'user', path: '$.country', operator: 'in', value: ['US', 'CA'] };
  const rule = (code: keyof typeof TERMINALS, conditions: unknown) => ({ conditions, event: { type: code, params: { message: TERMINALS[code] } } });
  engine.addRule(rule('REJECT_AGE', { all: [minor] }) as never);
  engine.addRule(rule('REVIEW', { all: [adult, { not: vipOrBig }] }) as never);
  engine.addRule(rule('APPROVE', { all: [adult, vipOrBig, region] }) as never);
  engine.addRule(rule('REJECT_REGION', { all: [adult, vipOrBig, { not: region }] }) as never);
  return {
    name: 'json-rules-engine',
    note: '4 mutually exclusive rules (one per outcome); engine.run (async)',
    async: true,
    run: async (input) => {
      const { events } = await engine.run(input);
      return { code: events.length === 1 ? events[0]!.type : `events: ${events.map((e) => e.type).join(',')}` };
    },
  };
}

// ------------------------------------------------------------------ runner

async function verify(c: Contender): Promise<void> {
  for (const [input, code] of CHECKS) {
    const got = (await c.run(input)).code;
    if (got !== code) throw new Error(`${c.name}: expected ${code} for ${JSON.stringify(input)}, got ${got}`);
  }
}

async function time(c: Contender): Promise<Timing> {
  if (!c.async) {
    const run = c.run as (i: typeof INPUT) => Result;
    return measureSync(() => {
      const r = run(INPUT);
      lastResult = r;
      return r.code.length;
    });
  }
  return measureAsync(async () => {
    const r = await c.run(INPUT);
    lastResult = r;
    return r.code.length;
  });
}

function gitCommit(): string | null {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return null;
  }
}

/** The contenders by name, built lazily (each child process builds only its own). */
const CONTENDERS: Record<string, () => Contender | Promise<Contender>> = {
  walker: () => walker(true),
  'walker-noclock': () => walker(false),
  svc,
  'zen-engine': zen,
  'json-rules-engine': jsonRules,
};

/** Child mode: verify and time one contender, print its timing as JSON. */
async function child(name: string): Promise<void> {
  const make = CONTENDERS[name];
  if (!make) throw new Error(`unknown contender '${name}'`);
  const c = await make();
  await verify(c);
  const t = await time(c);
  if (lastResult === null) throw new Error('unreachable');
  process.stdout.write(`${JSON.stringify({ name: c.name, note: c.note, timing: t })}\n`);
}

/**
 * Parent mode: runs every contender in its own process (NOTE: a fresh isolate each, so no
 * contender inherits call sites or inline caches warmed by another), then reports.
 */
function parent(): void {
  const only = process.env['BENCH_ONLY']?.split(',');
  const names = Object.keys(CONTENDERS).filter((n) => !only || only.includes(n));
  console.log(`engine bench: ${names.length} contenders, each verified on ${CHECKS.length} paths, then ${DEFAULT_MEASURE.rounds} rounds of ~${DEFAULT_MEASURE.roundMs} ms`);
  const measured = names.map((name) => {
    const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, BENCH_CONTENDER: name },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (r.status !== 0) throw new Error(`contender ${name} failed (exit ${r.status})`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as { name: string; note: string; timing: Timing };
  });
  const floor = measured.find((m) => m.name === 'walker')?.timing.nsMedian;
  const rows = measured.map(({ name, note, timing: t }) => ({
    name,
    note,
    ns_median: round(t.nsMedian),
    ns_min: round(t.nsMin),
    ns_max: round(t.nsMax),
    rounds: t.rounds,
    batch: t.batch,
    ratio_vs_walker: floor ? round(t.nsMedian / floor, 2) : null,
  }));
  console.log(`${'contender'.padEnd(20)}${'median ns'.padStart(12)}${'min'.padStart(10)}${'max'.padStart(10)}${'x walker'.padStart(10)}`);
  for (const r of rows) {
    console.log(`${r.name.padEnd(20)}${String(r.ns_median).padStart(12)}${String(r.ns_min).padStart(10)}${String(r.ns_max).padStart(10)}${String(r.ratio_vs_walker ?? '-').padStart(10)}`);
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const stamp = new Date().toISOString();
  const report = {
    suite: 'engine',
    timestamp: stamp,
    svc_version: pkg.version,
    git_commit: gitCommit(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    load_average: loadavg().map((l) => round(l, 2)),
    scenario: { input: INPUT, ruleset: RULESET, expected_code: 'APPROVE' },
    measure: DEFAULT_MEASURE,
    results: rows,
  };
  const dir = join(HERE, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `engine-${stamp.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

const contender = process.env['BENCH_CONTENDER'];
if (contender) await child(contender);
else parent();
