/**
 * In-process engine suite. Three scenarios (bench/lib/scenarios.ts):
 *   - `approval`: the engine issue's 3-decision scenario,
 *   - `chain20`: 20 steps on the path over 10 input fields,
 *   - `branches200`: one decision with 200 branches, the last one matching,
 * each executed by
 *   - `svc` (compileRuleset once, then execute with trace off and the real clock, from dist/),
 *   - `walker`: a hand-written closure walker (the practical floor; same result contract and
 *     clock reads as svc), and `walker-noclock` (the same without the two clock reads),
 *   - `cel-walker`: the conditions as CEL expressions (@marcbachmann/cel-js, parsed once) walked
 *     by the same small graph walker, with the same clock reads,
 *   - `zen-engine` (@gorules/zen-engine: an equivalent JDM graph; its evaluate API is async),
 *   - `json-rules-engine` (equivalent rules; async).
 * Every contender of every scenario runs in its own process (a fresh isolate: no contender
 * inherits call sites or inline caches warmed by another) and is checked on the scenario's
 * inputs before timing. Prints ns per execution (median of the rounds) and the ratio to the
 * walker. Target: svc within 2x of the walker. Writes bench/results/engine-<timestamp>.json.
 *
 * Run: `bash bench/run.sh engine` (or `node --import tsx bench/engine.ts` after building dist/).
 * BENCH_ONLY=svc,walker and BENCH_SCENARIOS=approval select; SVC_BENCH_SRC=1 loads src/ via tsx.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ZenEngine } from '@gorules/zen-engine';
import { parse as celParse } from '@marcbachmann/cel-js';
import { Engine } from 'json-rules-engine';
import { DEFAULT_MEASURE, measureAsync, measureSync, type Timing } from './measure.js';
import { cpuPlan } from './lib/procs.js';
import { machineInfo, printSummary, round, timeRow, writeReport, type SummaryRow } from './lib/report.js';
import { SCENARIOS, celExpr, jreCondition, jsPredicate, rulesetOf, zenExpr, type Cond, type Scenario } from './lib/scenarios.js';

type SvcModule = typeof import('../src/ruleset/index.js');

/** Result shape every sync contender returns (svc's contract). */
interface Result {
  code: string;
  message: string;
  output: Record<string, unknown>;
  duration_us: number;
}

interface Contender {
  readonly name: string;
  readonly note: string;
  readonly async: boolean;
  run(input: Record<string, unknown>): Result | Promise<{ code: string }>;
}

/** Keeps the last result reachable so no contender's result allocation can be optimized away. */
let lastResult: unknown = null;

// ------------------------------------------------------------------ graph walkers

/**
 * A node of the hand-written walkers: a branch test with `then` (its target) and `else` (the
 * next branch of the same step, or the default), or a terminal (test undefined).
 */
type Node = { test: ((i: any) => boolean) | undefined; then: Node | null; else: Node | null; code: string; message: string };

/** Builds the walker graph of a scenario with `test` made from each condition by `make`. */
function graph(s: Scenario, make: (c: Cond) => (i: any) => boolean): Node {
  const nodes = new Map<string, Node>();
  for (const [code, message] of Object.entries(s.terminals)) nodes.set(code, { test: undefined, then: null, else: null, code, message });
  // Heads first (targets may be any step), then wire branches.
  const heads = new Map<string, Node[]>();
  for (const d of s.decisions) {
    const chain = d.branches.map((b) => ({ test: make(b.cond), then: null, else: null, code: '', message: '' }) as Node);
    heads.set(d.id, chain);
    nodes.set(d.id, chain[0]!);
  }
  for (const d of s.decisions) {
    const chain = heads.get(d.id)!;
    d.branches.forEach((b, i) => {
      chain[i]!.then = nodes.get(b.next)!;
      chain[i]!.else = i + 1 < chain.length ? chain[i + 1]! : nodes.get(d.otherwise)!;
    });
  }
  return nodes.get(s.entry)!;
}

function walkerOf(s: Scenario, name: string, note: string, make: (c: Cond) => (i: any) => boolean, withClock: boolean): Contender {
  const entry = graph(s, make);
  const output = Object.freeze({});
  const clock = (): number => performance.now();
  return {
    name,
    note,
    async: false,
    run: withClock
      ? (input) => {
          const start = clock();
          let n: Node = entry;
          while (n.test !== undefined) n = n.test(input) ? n.then! : n.else!;
          return { code: n.code, message: n.message, output, duration_us: Math.round((clock() - start) * 1000) };
        }
      : (input) => {
          let n: Node = entry;
          while (n.test !== undefined) n = n.test(input) ? n.then! : n.else!;
          return { code: n.code, message: n.message, output, duration_us: 0 };
        },
  };
}

// ------------------------------------------------------------------ svc

async function svc(s: Scenario): Promise<Contender> {
  const fromSrc = process.env['SVC_BENCH_SRC'] === '1';
  const mod = (await import(fromSrc ? '../src/ruleset/index.js' : '../dist/ruleset/index.js')) as SvcModule;
  const compiled = mod.compileRuleset(rulesetOf(s));
  const options = Object.freeze({ trace: false, clock: () => performance.now(), timeoutMs: 5000, maxSteps: 10000 });
  return {
    name: 'svc',
    note: `compileRuleset once, execute(trace off, performance.now) from ${fromSrc ? 'src (tsx)' : 'dist'}`,
    async: false,
    run: (input) => mod.execute(compiled, input, options) as Result,
  };
}

// ------------------------------------------------------------------ @marcbachmann/cel-js

function celWalker(s: Scenario): Contender {
  const make = (c: Cond) => {
    const f = celParse(celExpr(c)) as unknown as (ctx: unknown) => unknown;
    return (i: unknown) => f(i) === true;
  };
  return walkerOf(s, 'cel-walker', 'conditions as CEL (@marcbachmann/cel-js, parse once) walked by the small graph walker; same clock reads', make, true);
}

// ------------------------------------------------------------------ @gorules/zen-engine

function zen(s: Scenario): Contender {
  const node = (id: string, type: string, content?: unknown) => ({ id, name: id, type, position: { x: 0, y: 0 }, ...(content ? { content } : {}) });
  const edges: unknown[] = [];
  const edge = (from: string, to: string, handle?: string) =>
    edges.push({ id: `${from}->${to}#${edges.length}`, type: 'edge', sourceId: from, targetId: to, ...(handle ? { sourceHandle: handle } : {}) });
  const nodes: unknown[] = [node('in', 'inputNode'), node('out', 'outputNode')];
  edge('in', s.entry);
  for (const d of s.decisions) {
    const statements = d.branches.map((b, i) => ({ id: `${d.id}-b${i}`, condition: zenExpr(b.cond) }));
    statements.push({ id: `${d.id}-else`, condition: '' });
    nodes.push(node(d.id, 'switchNode', { hitPolicy: 'first', statements }));
    d.branches.forEach((b, i) => edge(d.id, b.next, `${d.id}-b${i}`));
    edge(d.id, d.otherwise, `${d.id}-else`);
  }
  for (const [code, message] of Object.entries(s.terminals)) {
    nodes.push(
      node(code, 'expressionNode', {
        expressions: [
          { id: `${code}-c`, key: 'code', value: JSON.stringify(code) },
          { id: `${code}-m`, key: 'message', value: JSON.stringify(message) },
        ],
      }),
    );
    edge(code, 'out');
  }
  const decision = new ZenEngine().createDecision({ contentType: 'application/vnd.gorules.decision', nodes, edges });
  return {
    name: 'zen-engine',
    note: 'JDM graph: one switch node (hitPolicy first) per decision + expression nodes; decision.evaluate (async, native)',
    async: true,
    run: async (input) => (await decision.evaluate(input)).result as { code: string },
  };
}

// ------------------------------------------------------------------ json-rules-engine

function jsonRules(s: Scenario): Contender {
  const engine = new Engine([], { allowUndefinedFacts: true });
  const rule = (code: string, conditions: unknown, priority?: number) =>
    engine.addRule({ conditions, event: { type: code, params: { message: s.terminals[code] } }, ...(priority ? { priority } : {}) } as never);
  let note: string;
  if (s.name === 'approval') {
    // The engine issue's formulation: 4 mutually exclusive rules (one per outcome).
    const [d1, d2, d3] = s.decisions.map((d) => jreCondition(d.branches[0]!.cond));
    rule('REJECT_AGE', { all: [{ not: d1 }] });
    rule('REVIEW', { all: [d1, { not: d2 }] });
    rule('APPROVE', { all: [d1, d2, d3] });
    rule('REJECT_REGION', { all: [d1, d2, { not: d3 }] });
    note = '4 mutually exclusive rules (one per outcome); engine.run (async)';
  } else {
    // "First true wins" as json-rules-engine expresses it: one rule per exit in decreasing
    // priority (each priority is its own sequential group) and engine.stop() on the first hit.
    let p = 100_000;
    if (s.decisions.length === 1) {
      const d = s.decisions[0]!;
      for (const b of d.branches) rule(b.next, { all: [jreCondition(b.cond)] }, p--);
      rule(d.otherwise, { all: [] }, p--);
    } else {
      // A chain: step k exits to its default when its condition is false; the end approves.
      for (const d of s.decisions) rule(d.otherwise, { all: [{ not: jreCondition(d.branches[0]!.cond) }] }, p--);
      rule(s.decisions.at(-1)!.branches[0]!.next, { all: [] }, p--);
    }
    engine.on('success', () => engine.stop());
    note = 'one rule per exit in priority order, engine.stop() on the first success; engine.run (async)';
  }
  return {
    name: 'json-rules-engine',
    note,
    async: true,
    run: async (input) => {
      const { events } = await engine.run(input);
      return { code: events.length === 1 ? events[0]!.type : `events: ${events.map((e) => e.type).join(',')}` };
    },
  };
}

// ------------------------------------------------------------------ runner

const CONTENDERS: Record<string, (s: Scenario) => Contender | Promise<Contender>> = {
  walker: (s) => walkerOf(s, 'walker', 'hand-written closures over the step graph; same result contract and clock reads as svc', jsPredicate, true),
  'walker-noclock': (s) => walkerOf(s, 'walker-noclock', 'same walker without the two clock reads', jsPredicate, false),
  svc,
  'cel-walker': celWalker,
  'zen-engine': zen,
  'json-rules-engine': jsonRules,
};

async function verify(c: Contender, s: Scenario): Promise<void> {
  for (const [input, code] of s.checks) {
    const got = (await c.run(input)).code;
    if (got !== code) throw new Error(`${s.name}/${c.name}: expected ${code} for ${JSON.stringify(input)}, got ${got}`);
  }
}

async function time(c: Contender, s: Scenario): Promise<Timing> {
  const input = s.input;
  if (!c.async) {
    const run = c.run as (i: Record<string, unknown>) => Result;
    return measureSync(() => {
      const r = run(input);
      lastResult = r;
      return r.code.length;
    });
  }
  return measureAsync(async () => {
    const r = await c.run(input);
    lastResult = r;
    return r.code.length;
  });
}

/** Child mode: verify and time one contender on one scenario, print its timing as JSON. */
async function child(name: string, scenario: string): Promise<void> {
  const s = SCENARIOS[scenario];
  const make = CONTENDERS[name];
  if (!s || !make) throw new Error(`unknown contender '${name}' or scenario '${scenario}'`);
  const c = await make(s);
  await verify(c, s);
  const t = await time(c, s);
  if (lastResult === null) throw new Error('unreachable');
  process.stdout.write(`${JSON.stringify({ name: c.name, note: c.note, timing: t })}\n`);
}

/** Parent mode: every contender of every scenario in its own process, then the report. */
function parent(): void {
  const machine = machineInfo();
  const plan = cpuPlan();
  const only = process.env['BENCH_ONLY']?.split(',');
  const names = Object.keys(CONTENDERS).filter((n) => !only || only.includes(n));
  const scenarioNames = (process.env['BENCH_SCENARIOS']?.split(',') ?? Object.keys(SCENARIOS)).filter((n) => SCENARIOS[n]);
  console.log(
    `engine bench: ${scenarioNames.length} scenarios x ${names.length} contenders, each in its own process${plan ? ` pinned to CPU ${plan.server}` : ''}, ` +
      `verified, then ${DEFAULT_MEASURE.rounds} rounds of ~${DEFAULT_MEASURE.roundMs} ms; load average ${machine.load_average_start.join(' ')}`,
  );
  const summary: SummaryRow[] = [];
  const details: Record<string, unknown> = {};
  for (const scenario of scenarioNames) {
    const s = SCENARIOS[scenario]!;
    const measured = names.map((name) => {
      const args = [...process.execArgv, fileURLToPath(import.meta.url)];
      const [cmd, full] = plan ? ['taskset', ['-c', plan.server, process.execPath, ...args]] : [process.execPath, args];
      const r = spawnSync(cmd, full, {
        env: { ...process.env, BENCH_CONTENDER: name, BENCH_SCENARIO: scenario },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (r.status !== 0) throw new Error(`${scenario}/${name} failed (exit ${r.status})`);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as { name: string; note: string; timing: Timing };
    });
    const floor = measured.find((m) => m.name === 'walker')?.timing.nsMedian ?? null;
    console.log(`${scenario}: ${s.description}`);
    console.log(`  ${'contender'.padEnd(20)}${'median ns'.padStart(12)}${'min'.padStart(10)}${'max'.padStart(10)}${'x walker'.padStart(10)}`);
    const rows = measured.map(({ name, note, timing: t }) => {
      const row = {
        name,
        note,
        ns_median: round(t.nsMedian),
        ns_min: round(t.nsMin),
        ns_max: round(t.nsMax),
        rounds: t.rounds,
        batch: t.batch,
        ratio_vs_walker: floor ? round(t.nsMedian / floor, 2) : null,
      };
      console.log(
        `  ${name.padEnd(20)}${String(row.ns_median).padStart(12)}${String(row.ns_min).padStart(10)}${String(row.ns_max).padStart(10)}${String(row.ratio_vs_walker ?? '-').padStart(10)}`,
      );
      return row;
    });
    details[scenario] = { description: s.description, input: s.input, expected: s.expected, ruleset: rulesetOf(s), results: rows };
    const svcRow = rows.find((r) => r.name === 'svc');
    if (svcRow && floor) {
      summary.push(timeRow(`${scenario}: ns per execution (${s.description})`, 'ns', svcRow.ns_median, round(floor), 'walker', 2));
      for (const peer of rows.filter((r) => r.name !== 'svc' && r.name !== 'walker')) {
        summary.push({
          ...timeRow(`${scenario}: ${peer.name} ns per execution`, 'ns', peer.ns_median, round(floor), 'walker', null, peer.note),
          subject: peer.name,
        });
      }
    }
  }
  printSummary(summary);
  writeReport({
    suite: 'engine',
    machine,
    method:
      `In-process, one execution at a time on the scenario's input. Each contender of each scenario in its own process${plan ? ` pinned to CPU ${plan.server}` : ''} ` +
      `(fresh isolate), verified on every path of the scenario first; ${DEFAULT_MEASURE.warmupMs} ms warm-up that calibrates a batch size, then ${DEFAULT_MEASURE.rounds} rounds of ~${DEFAULT_MEASURE.roundMs} ms; ` +
      'median ns per execution. Sync contenders (svc, walkers) return the full result object with duration_us from two performance.now() reads; zen-engine and json-rules-engine are awaited one at a time (their API is async).',
    summary,
    details: { measure: DEFAULT_MEASURE, scenarios: details },
  });
}

const contender = process.env['BENCH_CONTENDER'];
if (contender) await child(contender, process.env['BENCH_SCENARIO'] ?? 'approval');
else parent();
