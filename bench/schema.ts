/**
 * Input schema suite (EXTENSIONS.md 2 "Input schema"): what validating the input costs one
 * execution of the engine scenario (bench/lib/scenarios.ts APPROVAL_RULESET on APPROVAL_INPUT),
 * through `RuleService.execute` in-process (dist/), where the check sits:
 *
 *   - `no-schema`: the scenario as it is (the check is one field test);
 *   - `check-only`: the compiled validator alone on the same input (the cost without the noise
 *     of two executions' difference);
 *   - `schema`: the same ruleset with a `config.input_schema` declaring the four fields it reads
 *     (types, `required`, `additionalProperties: false`, a `minimum`, an `enum`), so every
 *     execution validates the input with the compiled ajv validator first.
 *
 * Both run in the same process, in alternating rounds (A B A B ...), so drift of the machine
 * hits both alike. Target: the difference of the medians at most 2 us per execution.
 *
 * Run: `node_modules/.bin/tsc -p tsconfig.json && node --import tsx bench/schema.ts`
 * or `bash bench/run.sh schema` (any bench/<suite>.ts runs by name). BENCH_SCHEMA_PAIRS sets the
 * number of alternating pairs (default 7).
 */
import { performance } from 'node:perf_hooks';
import { measureSync, type Timing } from './measure.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, runMain, writeReport } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const PAIRS = envInt('BENCH_SCHEMA_PAIRS', 7);
const TARGET_NS = 2000;
const MEASURE = { roundMs: 150, rounds: 5, warmupMs: 300 };

const SCHEMA = {
  type: 'object',
  properties: {
    user: {
      type: 'object',
      properties: { age: { type: 'integer', minimum: 0 }, vip: { type: 'boolean' }, country: { type: 'string', enum: ['US', 'CA', 'FR', 'DE'] } },
      required: ['age', 'vip', 'country'],
      additionalProperties: false,
    },
    order: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  },
  required: ['user', 'order'],
};

async function main(): Promise<void> {
  const machine = machineInfo();
  const { RuleService } = (await import(new URL('../dist/service/rule-service.js', import.meta.url).href)) as typeof import('../src/service/rule-service.js');
  const { MemoryStore } = (await import(new URL('../dist/store/memory-store.js', import.meta.url).href)) as typeof import('../src/store/memory-store.js');
  const { AuditLog, Metrics, silentLogger } = (await import(
    new URL('../dist/observe/index.js', import.meta.url).href
  )) as typeof import('../src/observe/index.js');
  const store = new MemoryStore();
  const audit = new AuditLog({ stdout: { write: () => true }, sampleRate: 0 });
  const metrics = new Metrics({ version: 'bench', rulesCount: () => store.count() });
  const service = new RuleService(
    {
      version: 'bench',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 10_000,
      maxBatchSize: 100,
      signature: { enabled: false, require: false, trustedKeys: [], allowUnsignedLocal: true },
    },
    { store, metrics, audit, sampler: audit.sampler, logger: silentLogger(), clock: () => performance.now(), now: Date.now },
  );
  const ctx = { tenant: 'default', sourceIp: '127.0.0.1', transport: 'internal' as const };
  const plain = structuredClone(APPROVAL_RULESET);
  const typed = structuredClone(APPROVAL_RULESET) as { config: Record<string, unknown> };
  typed.config['name'] = 'bench-approval-schema';
  typed.config['input_schema'] = SCHEMA;
  await service.putRuleset(ctx, plain);
  await service.putRuleset(ctx, typed);
  const input = structuredClone(APPROVAL_INPUT);
  const run = (name: string) => (): number => (service.execute(ctx, name, input, false).code === 'APPROVE' ? 1 : 0);
  const validator = store.get('default', 'bench-approval-schema')!.compiled.inputSchema!;
  const contenders = {
    'no-schema': run(plain.config.name),
    schema: run('bench-approval-schema'),
    'check-only': (): number => validator.check(input).length + 1,
  };
  for (const [name, op] of Object.entries(contenders)) if (op() !== 1) throw new Error(`${name}: the scenario input did not APPROVE`);
  const bad = (() => {
    try {
      service.execute(ctx, 'bench-approval-schema', { user: { age: 'x' } }, false);
      return null;
    } catch (err) {
      return (err as { code?: string }).code ?? null;
    }
  })();
  if (bad !== 'INPUT_INVALID') throw new Error(`the schema is not enforced (got ${String(bad)})`);

  const rounds: Record<string, Timing[]> = { 'no-schema': [], schema: [], 'check-only': [] };
  for (let i = 0; i < PAIRS; i++) {
    for (const [name, op] of Object.entries(contenders)) rounds[name]!.push(measureSync(op, MEASURE));
  }
  const ns = (name: string): number => median(rounds[name]!.map((t) => t.nsMedian));
  const without = ns('no-schema');
  const withSchema = ns('schema');
  const cost = withSchema - without;
  const summary = [
    absoluteRow('execute, approval scenario, no input_schema (RuleService.execute)', 'ns', round(without), null, null),
    absoluteRow('execute, approval scenario, with input_schema', 'ns', round(withSchema), null, null),
    absoluteRow('input validation cost per execute (with - without)', 'ns', round(cost), `<= ${TARGET_NS} ns`, cost <= TARGET_NS),
    absoluteRow('the compiled validator alone on the scenario input', 'ns', round(ns('check-only')), `<= ${TARGET_NS} ns`, ns('check-only') <= TARGET_NS),
  ];
  printSummary(summary);
  writeReport({
    suite: 'schema',
    machine,
    method:
      'RuleService.execute in-process (dist/) on the approval scenario input, the ruleset without and with a config.input_schema, in alternating rounds in one process; median of the rounds, ns per execution.',
    summary,
    details: { pairs: PAIRS, measure: MEASURE, rounds },
  });
}

runMain(main);
