/**
 * Runs the golden analysis cases in test/cases/analysis/*.yaml.
 *
 * File format:
 *   rulesets: { <key>: <ruleset document> }      # optional, shared by the cases of the file
 *   cases:
 *     - name: <test name>
 *       ruleset: <key> | <ruleset document>
 *       warnings:                                # exactly these, in this order
 *         - code: <warning code>
 *           path: <problem path>
 *           message: <fragment>                  # optional
 *           witness: true | <input>              # optional: one is present (or exactly this one)
 *           absent: true                         # optional: this code and path must NOT appear
 *
 * Every witness the analysis returns is executed: a NO_MATCH_POSSIBLE witness must end in
 * NO_MATCHING_BRANCH at the step its path names.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { WARNING_CODES, analyzeRuleset } from '../../../src/analysis/index.js';
import { compileRuleset } from '../../../src/ruleset/index.js';
import { assertWitness } from '../../helpers/analysis.js';

const DIR = join(import.meta.dirname, '../../cases/analysis');

interface Expected {
  code: string;
  path: string;
  message?: string;
  witness?: true | Record<string, unknown>;
  absent?: boolean;
}

interface Case {
  name: string;
  ruleset: string | Record<string, unknown>;
  warnings: Expected[];
}

interface CaseFile {
  rulesets?: Record<string, unknown>;
  cases: Case[];
}

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

test('golden analysis files exist and cover every warning code', () => {
  assert.ok(files.length >= 5, `expected case files in ${DIR}`);
  const seen = new Set<string>();
  for (const f of files)
    for (const c of (parseYaml(readFileSync(join(DIR, f), 'utf8')) as CaseFile).cases) for (const w of c.warnings) if (w.absent !== true) seen.add(w.code);
  assert.deepEqual(
    [...WARNING_CODES].filter((c) => !seen.has(c)),
    [],
  );
});

for (const file of files) {
  const data = parseYaml(readFileSync(join(DIR, file), 'utf8')) as CaseFile;
  describe(`analysis cases: ${file}`, () => {
    for (const c of data.cases) {
      test(c.name, () => {
        const doc = typeof c.ruleset === 'string' ? data.rulesets![c.ruleset] : c.ruleset;
        const compiled = compileRuleset(doc);
        const warnings = analyzeRuleset(compiled);
        assert.equal(analyzeRuleset(compiled), warnings, 'computed once per compiled version');
        const expected = c.warnings.filter((w) => w.absent !== true);
        assert.deepEqual(
          warnings.map((w) => `${w.code} ${w.path}`),
          expected.map((w) => `${w.code} ${w.path}`),
          JSON.stringify(warnings, null, 1),
        );
        for (const w of c.warnings.filter((x) => x.absent === true)) {
          assert.ok(!warnings.some((x) => x.code === w.code && x.path === w.path), `${w.code} ${w.path} must not appear`);
        }
        expected.forEach((e, i) => {
          const w = warnings[i]!;
          if (e.message !== undefined) assert.ok(w.message.includes(e.message), `message ${JSON.stringify(w.message)} includes ${JSON.stringify(e.message)}`);
          if (e.witness === true) assert.ok(w.witness !== undefined, `${w.code} ${w.path}: a witness`);
          else if (e.witness !== undefined) assert.deepEqual(w.witness, e.witness);
          if (w.witness !== undefined) assertWitness(compiled, w);
        });
      });
    }
  });
}
