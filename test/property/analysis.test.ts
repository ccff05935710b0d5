/**
 * Analysis soundness over random rulesets (EXTENSIONS.md 2 "Analysis"): chains of decision steps
 * over numbers, strings, booleans, nulls, nested and missing fields (comparisons, `in`, `not in`,
 * string tests, `is_null`, `&&`, `||`, `!`, mismatched types, opaque arithmetic and functions),
 * lenient and strict. Each branch ends in its own terminal, so the code tells which branch was
 * taken; a default goes to the next step (or a terminal of its own).
 *
 * For every ruleset, random inputs (and the literals of its conditions, nudged) are executed:
 * - a branch reported DEAD_BRANCH is never taken;
 * - a default reported SHADOWED_DEFAULT is never taken;
 * - every NO_MATCH_POSSIBLE witness ends in NO_MATCHING_BRANCH at its step;
 * - an input that ends in NO_MATCHING_BRANCH at a step means that step has NO_MATCH_POSSIBLE
 *   or is not analysed exactly (an opaque condition);
 * and the run must have found dead branches, shadowed defaults and witnesses (not vacuous).
 *
 * Environment: ANALYSIS_PROPERTY_SEED (base seed; printed), ANALYSIS_PROPERTY_CASES (default 400).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonValue } from '../../src/expr/ast.js';
import { analyzeRuleset } from '../../src/analysis/index.js';
import { compileRuleset, execute, ExecutionError, type RulesetDoc } from '../../src/ruleset/index.js';
import { assertWitness } from '../helpers/analysis.js';
import { Rng } from '../helpers/filter/gen-case.js';

const BASE_SEED = Number(process.env['ANALYSIS_PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env['ANALYSIS_PROPERTY_CASES'] ?? 400);
const INPUTS = 150;

const NUM_FIELDS = ['n', 'm', 'o.x'];

function atom(rng: Rng): string {
  const f = rng.pick(NUM_FIELDS);
  const k = rng.int(6);
  switch (rng.int(16)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return `${f} ${rng.pick(['==', '!=', '<', '<=', '>', '>='])} ${k}`;
    case 4:
      return `s == ${JSON.stringify(rng.pick(['a', 'b', 'ab']))}`;
    case 5:
      return `s ${rng.pick(['in', 'not in'])} ${JSON.stringify(['a', 'b', 'c'].filter(() => rng.chance(0.6)))}`;
    case 6:
      return `${rng.pick(['starts_with', 'ends_with', 'contains'])}(s, ${JSON.stringify(rng.pick(['a', 'b']))})`;
    case 7:
      return rng.pick(['b == true', 'b', '!b', 'b != false']);
    case 8:
      return rng.pick([`is_null(${f})`, `${f} == null`, `${f} != null`, `!is_null(s)`]);
    case 9:
      return `${f} in [${k}, ${k + 1}, ${k + 3}]`;
    case 10:
      return rng.pick([`${f} == "1"`, `s > 3`, `s < "b"`, `s >= "ab"`]);
    case 11:
      return rng.pick([`${f} * 2 > ${k}`, `len(s) > 1`, `${f} + m > ${k}`]);
    default:
      return `${f} ${rng.pick(['<', '>=', '=='])} ${k}`;
  }
}

function condition(rng: Rng, depth = 0): string {
  if (depth >= 2 || rng.chance(0.45)) return atom(rng);
  switch (rng.int(3)) {
    case 0:
      return `(${condition(rng, depth + 1)}) && (${condition(rng, depth + 1)})`;
    case 1:
      return `(${condition(rng, depth + 1)}) || (${condition(rng, depth + 1)})`;
    default:
      return `!(${condition(rng, depth + 1)})`;
  }
}

function generate(seed: number): RulesetDoc {
  const rng = new Rng(seed);
  const count = 1 + rng.int(3);
  const steps: RulesetDoc['steps'] = {};
  for (let k = 0; k < count; k++) {
    const branches = Array.from({ length: 1 + rng.int(4) }, (_, i) => {
      const code = `S${k}B${i}`;
      steps[code] = { type: 'terminal', result: { code } };
      // Often a branch repeats a narrowing or widening of an earlier one (dead branches happen).
      return { condition: condition(rng), next_step: code };
    });
    if (branches.length > 1 && rng.chance(0.3)) branches[branches.length - 1]!.condition = `!(${branches[0]!.condition})`;
    const last = k === count - 1;
    const step: RulesetDoc['steps'][string] = { type: 'decision', branches };
    if (!last) step.default_next = `d${k + 1}`;
    else if (rng.chance(0.5)) {
      step.default_next = `S${k}D`;
      steps[`S${k}D`] = { type: 'terminal', result: { code: `S${k}D` } };
    }
    steps[`d${k}`] = step;
  }
  return { config: { name: `p${seed}`, entry_step: 'd0', field_missing: rng.chance(0.25) ? 'strict' : 'lenient' }, steps };
}

const NUMBERS: readonly JsonValue[] = [null, 0, 1, 2, 2.5, 3, 4, 5, 6, -1, '1', true];
const STRINGS: readonly JsonValue[] = [null, '', 'a', 'b', 'c', 'ab', 'ba', 'abc', 3];
const BOOLS: readonly JsonValue[] = [true, false, null, 1];

function randomInput(rng: Rng): Record<string, JsonValue> {
  const input: Record<string, JsonValue> = {};
  const maybe = (key: string, pool: readonly JsonValue[]): void => {
    if (!rng.chance(0.1)) input[key] = rng.pick(pool);
  };
  maybe('n', NUMBERS);
  maybe('m', NUMBERS);
  maybe('s', STRINGS);
  maybe('b', BOOLS);
  if (!rng.chance(0.1)) input['o'] = rng.chance(0.1) ? null : { x: rng.pick(NUMBERS) };
  return input;
}

test('analysis warnings hold on executed inputs over random rulesets', () => {
  const stats = { rulesets: 0, dead: 0, shadowed: 0, witnesses: 0, noMatchSeen: 0 };
  const failures: string[] = [];
  for (let c = 0; c < CASES && failures.length < 3; c++) {
    const seed = (BASE_SEED + c) >>> 0;
    const doc = generate(seed);
    const compiled = compileRuleset(doc);
    const warnings = analyzeRuleset(compiled);
    stats.rulesets++;
    const dead = new Set(warnings.filter((w) => w.code === 'DEAD_BRANCH').map((w) => w.path));
    const shadowed = new Set(warnings.filter((w) => w.code === 'SHADOWED_DEFAULT').map((w) => w.path));
    const noMatch = new Set(warnings.filter((w) => w.code === 'NO_MATCH_POSSIBLE').map((w) => w.path));
    stats.dead += dead.size;
    stats.shadowed += shadowed.size;
    const fail = (what: string): void => {
      failures.push(`seed ${seed}: ${what}\n${JSON.stringify(doc)}\nwarnings: ${JSON.stringify(warnings)}`);
    };
    for (const w of warnings) {
      if (w.witness === undefined) continue;
      stats.witnesses++;
      try {
        assertWitness(compiled, w);
      } catch (err) {
        fail(`witness: ${(err as Error).message}`);
      }
    }
    const rng = new Rng(seed ^ 0x2545f491);
    for (let i = 0; i < INPUTS; i++) {
      const input = randomInput(rng);
      try {
        const r = execute(compiled, input, { clock: () => 0, timeoutMs: 0, maxSteps: 100, trace: true });
        const m = /^S(\d+)B(\d+)$/.exec(r.code);
        if (m !== null && dead.has(`steps.d${m[1]}.branches[${m[2]}]`)) fail(`input ${JSON.stringify(input)} took dead branch ${r.code}`);
        // A default taken: step dK followed by d(K+1) on the path, or the terminal SKD.
        const path = r.trace!.path.split(' -> ');
        for (let k = 0; k < path.length; k++) {
          const step = path[k]!;
          if (!step.startsWith('d')) continue;
          const next = path[k + 1];
          const tookDefault = next !== undefined && (next.startsWith('d') || next.endsWith('D'));
          if (tookDefault && shadowed.has(`steps.${step}.default_next`)) fail(`input ${JSON.stringify(input)} took shadowed default of ${step}`);
        }
      } catch (err) {
        if (!(err instanceof ExecutionError)) throw err;
        if (err.code === 'NO_MATCHING_BRANCH') {
          stats.noMatchSeen++;
          const step = compiled.steps.get(err.stepId!)!;
          const opaque = step.type === 'decision' && step.branches.some((b) => /\*|\+|len\(/.test(b.condition));
          if (!noMatch.has(`steps.${err.stepId}`) && !opaque) fail(`input ${JSON.stringify(input)} ended in NO_MATCHING_BRANCH at ${err.stepId}, not reported`);
        }
      }
    }
  }
  const line = `base seed ${BASE_SEED}: ${stats.rulesets} rulesets x ${INPUTS} inputs; ${stats.dead} dead branches, ${stats.shadowed} shadowed defaults, ${stats.witnesses} witnesses, ${stats.noMatchSeen} no-match executions`;
  console.log(line);
  assert.equal(failures.length, 0, `${line}\nreplay with ANALYSIS_PROPERTY_SEED=<seed> ANALYSIS_PROPERTY_CASES=1\n\n${failures.join('\n\n')}`);
  assert.ok(stats.dead > 0 && stats.shadowed > 0 && stats.witnesses > 0, 'the run found dead branches, shadowed defaults and witnesses');
});
