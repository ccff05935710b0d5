/**
 * Runs the golden filter cases of test/cases/filter/*.yaml. A file holds `cases` (and optional
 * named `rulesets` the cases refer to). Each case builds a ruleset, a request, and checks the
 * answer for one or more formats:
 *
 *   - name: field == string
 *     condition: 'user.name == "x"'      # one decision: condition → MATCH, default → NO_MATCH
 *     # or conditions: [c1, c2]          # several branches, each → MATCH, default → NO_MATCH
 *     # or ruleset: <name in rulesets> | <inline ruleset document>
 *     callees: [risk]                    # rulesets (names in rulesets) its call steps resolve, by config.name
 *     # or chain: {length: 60, condition: 'n{i} == 1', exit_at: 2}
 *     #   decisions s1..sN in a row ({i} = step number), last → MATCH, default → NO_MATCH;
 *     #   exit_at adds a first branch 'leave == true' → terminal EXIT at that step
 *     known_input: {}                    # request fields; defaults: {}, [MATCH], none, none
 *     target_results: [MATCH]
 *     field_mapping: {}
 *     max_paths: 100
 *     # or body: <raw request body>      # validated with parseFilterRequest (format from the body)
 *     data: {limits: {max: 5}}           # the tenant's datasets `@name` reads (known values); default none
 *     sql: "user_name = 'x'"             # expected filter per format (null = never matches)
 *     json: {type: eq, field: user_name, value: x}
 *     mongo: {user_name: x}
 *     always_matches: false              # optional flags, checked for every format run
 *     never_matches: false
 *     truncated: false
 *     unknown_fields: [user.name]
 *     exact: true                        # default: true unless truncated
 *     run: [sql]                         # formats to run for the flag checks alone (no filter given)
 *     error: {code: BAD_REQUEST, message: 'substring', formats: [sql]}   # expected error, as the service answers it
 *
 * Without explicit flags, a case with a non-null, non-TRUE filter expects always_matches,
 * never_matches and truncated all false, and a null filter expects never_matches.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import type { JsonValue } from '../../../src/expr/ast.js';
import { setDataSnapshot } from '../../../src/expr/index.js';
import { FilterError, generateFilter, parseFilterRequest, type FilterFormat, type FilterResponse } from '../../../src/filter/index.js';
import { compileRuleset, type CompiledRuleset, type RulesetDoc } from '../../../src/ruleset/index.js';
import { ServiceError } from '../../../src/service/errors.js';
import { fromFilterError } from '../../../src/service/filter-errors.js';

interface Case {
  name: string;
  condition?: string;
  conditions?: string[];
  ruleset?: string | RulesetDoc;
  callees?: string[];
  chain?: { length: number; condition: string; exit_at?: number };
  known_input?: unknown;
  target_results?: unknown;
  field_mapping?: unknown;
  max_paths?: unknown;
  body?: unknown;
  data?: Record<string, unknown>;
  sql?: string | null;
  json?: unknown;
  mongo?: unknown;
  always_matches?: boolean;
  never_matches?: boolean;
  truncated?: boolean;
  unknown_fields?: string[];
  exact?: boolean;
  run?: FilterFormat[];
  error?: { code: string; message?: string; formats?: FilterFormat[] };
}

interface CaseFile {
  rulesets?: Record<string, RulesetDoc>;
  cases: Case[];
}

const DIR = join(dirname(fileURLToPath(import.meta.url)), '../../cases/filter');
const FORMATS: readonly FilterFormat[] = ['sql', 'json', 'mongo'];

function decisionRuleset(conditions: readonly string[]): RulesetDoc {
  return {
    config: { name: 'golden', entry_step: 'check' },
    steps: {
      check: { type: 'decision', branches: conditions.map((condition) => ({ condition, next_step: 'match' })), default_next: 'no_match' },
      match: { type: 'terminal', result: { code: 'MATCH' } },
      no_match: { type: 'terminal', result: { code: 'NO_MATCH' } },
    },
  };
}

function chainRuleset(length: number, condition: string, exitAt?: number): RulesetDoc {
  const steps: RulesetDoc['steps'] = {
    match: { type: 'terminal', result: { code: 'MATCH' } },
    no_match: { type: 'terminal', result: { code: 'NO_MATCH' } },
    exit: { type: 'terminal', result: { code: 'EXIT' } },
  };
  for (let i = 1; i <= length; i++) {
    const next = i === length ? 'match' : `s${i + 1}`;
    const branches = [{ condition: condition.replaceAll('{i}', String(i)), next_step: next }];
    if (i === exitAt) branches.unshift({ condition: 'leave == true', next_step: 'exit' });
    steps[`s${i}`] = { type: 'decision', branches, default_next: 'no_match' };
  }
  return { config: { name: 'chain', entry_step: 's1' }, steps };
}

function rulesetOf(c: Case, file: CaseFile): RulesetDoc {
  if (c.condition !== undefined) return decisionRuleset([c.condition]);
  if (c.conditions !== undefined) return decisionRuleset(c.conditions);
  if (c.chain !== undefined) return chainRuleset(c.chain.length, c.chain.condition, c.chain.exit_at);
  if (typeof c.ruleset === 'string') {
    const doc = file.rulesets?.[c.ruleset];
    if (doc === undefined) throw new Error(`unknown ruleset ${c.ruleset}`);
    return doc;
  }
  if (c.ruleset !== undefined) return c.ruleset;
  return decisionRuleset(['true']);
}

function bodyOf(c: Case, format: FilterFormat): unknown {
  if (c.body !== undefined) return c.body;
  const body: Record<string, unknown> = { known_input: c.known_input ?? {}, target_results: c.target_results ?? ['MATCH'], format };
  if (c.field_mapping !== undefined) body['field_mapping'] = c.field_mapping;
  if (c.max_paths !== undefined) body['max_paths'] = c.max_paths;
  return body;
}

/** The callee resolver of a case (call steps, EXTENSIONS.md 3): its `callees`, by config.name. */
function calleesOf(c: Case, file: CaseFile): ((name: string) => CompiledRuleset | undefined) | undefined {
  if (c.callees === undefined) return undefined;
  const byName = new Map<string, CompiledRuleset>();
  for (const key of c.callees) {
    const doc = file.rulesets?.[key];
    if (doc === undefined) throw new Error(`unknown callee ${key}`);
    byName.set(doc.config.name, compileRuleset(doc));
  }
  return (name) => byName.get(name);
}

function run(doc: RulesetDoc, body: unknown, calls?: (name: string) => CompiledRuleset | undefined): FilterResponse {
  return generateFilter(compileRuleset(doc), parseFilterRequest(body), calls);
}

function checkFlags(c: Case, r: FilterResponse, label: string): void {
  const keys = Object.keys(r).sort();
  assert.deepEqual(keys, ['always_matches', 'exact', 'filter', 'format', 'never_matches', 'truncated', 'unknown_fields'], `${label}: response fields`);
  const constant = r.filter === null || r.filter === 'TRUE' || JSON.stringify(r.filter) === '{}' || JSON.stringify(r.filter) === '{"type":"always"}';
  const expected = {
    always_matches: c.always_matches ?? (constant && r.filter !== null),
    never_matches: c.never_matches ?? r.filter === null,
    truncated: c.truncated ?? false,
    exact: c.exact ?? !(c.truncated ?? false),
  };
  assert.deepEqual({ always_matches: r.always_matches, never_matches: r.never_matches, truncated: r.truncated, exact: r.exact }, expected, `${label}: flags`);
  if (c.unknown_fields !== undefined) assert.deepEqual(r.unknown_fields, c.unknown_fields, `${label}: unknown_fields`);
}

function checkError(c: Case, doc: RulesetDoc, format: FilterFormat, calls?: (name: string) => CompiledRuleset | undefined): void {
  const want = c.error!;
  const label = `${c.name} [${format}]`;
  assert.throws(
    () => {
      // The code the service answers with: the filter's own error mapped into the catalog.
      try {
        run(doc, bodyOf(c, format), calls);
      } catch (err) {
        assert.ok(err instanceof FilterError, `${label}: expected a FilterError, got ${String(err)}`);
        throw fromFilterError(err);
      }
    },
    (err: unknown) => {
      assert.ok(err instanceof ServiceError, `${label}: expected a ServiceError, got ${String(err)}`);
      assert.equal(err.code, want.code, `${label}: code (message: ${err.message})`);
      if (want.message !== undefined)
        assert.ok(err.message.includes(want.message), `${label}: message ${JSON.stringify(err.message)} lacks ${JSON.stringify(want.message)}`);
      return true;
    },
  );
}

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

test('golden filter case files exist', () => {
  assert.ok(files.length > 0);
});

for (const name of files) {
  const file = YAML.parse(readFileSync(join(DIR, name), 'utf8')) as CaseFile;
  describe(`filter cases: ${name}`, () => {
    for (const c of file.cases) {
      test(c.name, (t) => {
        // Reference data: the service hands the filter the tenant's datasets (rule-service.ts).
        setDataSnapshot(c.data === undefined ? null : new Map(Object.entries(c.data as Record<string, JsonValue>)));
        t.after(() => setDataSnapshot(null));
        const doc = rulesetOf(c, file);
        const calls = calleesOf(c, file);
        if (c.error !== undefined) {
          const formats = c.error.formats ?? (c.body !== undefined ? ['sql' as const] : FORMATS);
          for (const f of formats) checkError(c, doc, f, calls);
        }
        let ran = 0;
        for (const format of FORMATS) {
          const given = format in c;
          if (!given && !(c.run ?? []).includes(format)) continue;
          ran++;
          const r = run(doc, bodyOf(c, format), calls);
          assert.equal(r.format, format);
          if (given) assert.deepEqual(r.filter, c[format], `${c.name} [${format}]: filter`);
          checkFlags(c, r, `${c.name} [${format}]`);
        }
        if (c.body !== undefined && c.error === undefined) {
          ran++;
          const r = run(doc, c.body, calls);
          checkFlags(c, r, c.name);
        }
        assert.ok(ran > 0 || c.error !== undefined, `${c.name}: case checks nothing`);
      });
    }
  });
}
