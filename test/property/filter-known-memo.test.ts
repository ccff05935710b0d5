/**
 * The filter's memo of conditions by the known values they read (planner.ts, prepare.ts
 * `knownConditions`): one compiled ruleset answers many requests whose known input varies (other
 * values, a field left out, null, -0, another `now`, another dataset snapshot), more distinct
 * values than the memo keeps per condition; every answer (or error) must be the one a freshly
 * compiled copy of the ruleset gives to that request alone. Generated rulesets and callers with
 * call steps (test/helpers/filter/gen-case.ts, gen-calls.ts), all three formats.
 *
 * Environment: FILTER_PROPERTY_SEED (base seed; printed), FILTER_MEMO_CASES (default 300).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonValue } from '../../src/expr/ast.js';
import { setDataSnapshot } from '../../src/expr/data-ref.js';
import { generateFilter, parseFilterRequest, type FilterFormat } from '../../src/filter/index.js';
import { KNOWN_MAX } from '../../src/filter/prepare.js';
import { compileRuleset, type CompiledRuleset, type RulesetDoc } from '../../src/ruleset/index.js';
import { FIELDS, Rng, fieldValue, generateCase, setPath, type FilterCase } from '../helpers/filter/gen-case.js';
import { generateCallCase } from '../helpers/filter/gen-calls.js';

const BASE_SEED = Number(process.env['FILTER_PROPERTY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env['FILTER_MEMO_CASES'] ?? 300);
const FORMATS: readonly FilterFormat[] = ['sql', 'json', 'mongo'];
const NOWS = ['2024-02-29T10:00:00Z', '2031-12-31T23:59:59Z'];
const OTHER_DATA = new Map<string, JsonValue>([['ref', { min: 7, max: -1, country: 'zz', list: [], nums: [], flag: true, start: '1999-01-01', nested: null }]]);

type Case = FilterCase & { readonly callees?: readonly RulesetDoc[] };

function resolver(callees: readonly RulesetDoc[] | undefined): ((name: string) => CompiledRuleset | undefined) | undefined {
  if (callees === undefined) return undefined;
  const byName = new Map(callees.map((d) => [d.config.name, compileRuleset(d)]));
  return (name) => byName.get(name);
}

/** Known inputs over the case's known fields: its own, and variants (other values, a field left out, null, -0). */
function variants(c: Case, rng: Rng): Record<string, JsonValue>[] {
  const known = FIELDS.filter((f) => !c.unknown.includes(f));
  const out: Record<string, JsonValue>[] = [c.knownInput];
  for (let i = 0; i < KNOWN_MAX + 4; i++) {
    const k: Record<string, JsonValue> = {};
    for (const f of known) {
      if (rng.chance(0.1)) continue; // left out: the field becomes unknown (a column)
      const v = rng.chance(0.08) ? null : f.type === 'number' && rng.chance(0.1) ? -0 : fieldValue(rng, f, true);
      setPath(k, f.path, v);
    }
    out.push(k);
  }
  return out;
}

/** The answer as text, or the error's code and message. */
function answer(compiled: CompiledRuleset, req: unknown, calls: ((name: string) => CompiledRuleset | undefined) | undefined): string {
  try {
    return JSON.stringify(generateFilter(compiled, parseFilterRequest(req), calls));
  } catch (err) {
    return `error: ${(err as { code?: string }).code ?? ''} ${(err as Error).message}`;
  }
}

test('one compiled ruleset answers varying known input as a fresh compile does (memo by known values)', () => {
  console.log(`filter known-value memo: base seed ${BASE_SEED}, ${CASES} cases`);
  let requests = 0;
  let distinct = 0;
  for (let i = 0; i < CASES; i++) {
    const seed = (BASE_SEED + i) >>> 0;
    const c: Case = (i % 4 === 3 ? generateCallCase(seed) : null) ?? generateCase(seed);
    const rng = new Rng(seed ^ 0x6d2b79f5);
    const shared = compileRuleset(c.doc);
    const sharedCalls = resolver(c.callees);
    const inputs = variants(c, rng);
    // Each known input more than once, interleaved, so that memo entries are reused and evicted.
    const order = [...inputs.keys(), ...inputs.keys()].sort(() => rng.next() - 0.5);
    const answers = new Set<string>();
    for (const n of order) {
      const format = rng.pick(FORMATS);
      // Always a fixed now: without one each call reads the clock (two calls, two times).
      const now = rng.chance(0.5) ? (c.now ?? NOWS[0]!) : rng.pick(NOWS);
      const data = rng.chance(0.8) ? c.data : OTHER_DATA;
      const req = {
        known_input: inputs[n]!,
        target_results: c.targets,
        field_mapping: c.mapping,
        max_paths: c.maxPaths,
        format,
        now,
      };
      setDataSnapshot(data);
      const got = answer(shared, req, sharedCalls);
      const fresh = answer(compileRuleset(c.doc), req, resolver(c.callees));
      setDataSnapshot(null);
      requests++;
      answers.add(got);
      assert.equal(
        got,
        fresh,
        `seed ${seed} (replay with FILTER_PROPERTY_SEED=${seed} FILTER_MEMO_CASES=1), known input ${JSON.stringify(inputs[n])}, format ${format}`,
      );
    }
    distinct += answers.size;
  }
  console.log(`  ${requests} requests, ${distinct} distinct answers`);
  // The variants must change the answers (else the test would not exercise the memo).
  assert.ok(distinct > CASES * 3, `only ${distinct} distinct answers over ${CASES} cases`);
});
