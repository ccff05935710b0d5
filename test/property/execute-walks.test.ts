/**
 * The untraced walk reads the plan's compact array (`ExecutionPlan.ops`, src/ruleset/plan.ts);
 * the traced walk reads the plan's node objects. Over random rulesets (test/helpers/filter/
 * gen-case.ts: decisions, actions with variables, tables, reference data, dates, terminals with
 * output expressions) and random inputs, both must give the same answer: code, message and
 * output, or the same error (code, message, step), with the same number of visited steps, also
 * under a step limit small enough to stop some walks.
 *
 * Environment: EXECUTE_PROPERTY_SEED (base seed; printed), EXECUTE_PROPERTY_CASES (default 300).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonValue } from '../../src/expr/ast.js';
import { setDataSnapshot } from '../../src/expr/data-ref.js';
import { setRequestNow } from '../../src/expr/dates.js';
import { parseFilterRequest } from '../../src/filter/index.js';
import { compileRuleset, execute, ExecutionError, type CompiledRuleset, type ExecutionStats } from '../../src/ruleset/index.js';
import { FIELDS, Rng, generateCase, generateRows, setPath } from '../helpers/filter/gen-case.js';

const BASE_SEED = Number(process.env['EXECUTE_PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env['EXECUTE_PROPERTY_CASES'] ?? 300);

type Outcome =
  | { ok: true; code: string; message: string; output: unknown; steps: number }
  | { ok: false; code: string; message: string; step: string | undefined; steps: number };

function run(compiled: CompiledRuleset, input: Record<string, JsonValue>, trace: boolean, maxSteps: number): Outcome {
  const stats: ExecutionStats = { steps: 0 };
  try {
    const r = execute(compiled, input, { clock: () => 0, timeoutMs: 0, maxSteps, trace, stats });
    return { ok: true, code: r.code, message: r.message, output: r.output, steps: stats.steps };
  } catch (err) {
    if (!(err instanceof ExecutionError)) throw err;
    return { ok: false, code: err.code, message: err.message, step: err.stepId, steps: stats.steps };
  }
}

test('the untraced walk (compact plan) answers exactly as the traced walk (plan nodes)', () => {
  console.log(`execute walks: base seed ${BASE_SEED} (EXECUTE_PROPERTY_SEED to replay)`);
  let executions = 0;
  let failures = 0;
  for (let k = 0; k < CASES; k++) {
    const seed = (BASE_SEED + k * 7919) >>> 0;
    const c = generateCase(seed);
    const compiled = compileRuleset(c.doc);
    const now = c.now === null ? null : (parseFilterRequest({ known_input: {}, target_results: ['x'], now: c.now }).now ?? null);
    const rng = new Rng(seed ^ 0x2545f491);
    const rows = generateRows(new Rng(seed ^ 0x5bd1e995), 20, rng.chance(0.5) ? 0 : 0.2);
    setDataSnapshot(c.data);
    setRequestNow(now);
    try {
      for (const row of rows) {
        const input: Record<string, JsonValue> = JSON.parse(JSON.stringify(c.knownInput)) as Record<string, JsonValue>;
        for (const f of FIELDS) if (rng.chance(0.9)) setPath(input, f.path, row.values.get(f.path)!);
        for (const maxSteps of [500, 1 + rng.int(4)]) {
          const plain = run(compiled, input, false, maxSteps);
          const traced = run(compiled, input, true, maxSteps);
          assert.deepEqual(plain, traced, `seed ${seed}, max steps ${maxSteps}, input ${JSON.stringify(input)}`);
          executions++;
          if (!plain.ok) failures++;
        }
      }
    } finally {
      setDataSnapshot(null);
      setRequestNow(null);
    }
  }
  console.log(`execute walks: ${CASES} rulesets, ${executions} executions (${failures} failed alike)`);
  assert.ok(failures > 0 && failures < executions, 'both outcomes occur');
});
