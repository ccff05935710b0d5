/**
 * A ruleset's own tests in the service (EXTENSIONS.md 2 "Tests"): the gate of a create or
 * update (any failure is 422 TESTS_FAILED and nothing is stored), and the report of
 * `POST /api/v1/rulesets/:name/test`. The runner itself is pure: src/ruleset/testing.ts.
 */
import type { CompiledRuleset } from '../ruleset/compile.js';
import type { RulesetTestDoc } from '../ruleset/model.js';
import type { Problem } from '../ruleset/result.js';
import { checkTestsShape } from '../ruleset/test-shape.js';
import { runTests, type TestReport, type TestRunOptions } from '../ruleset/testing.js';
import { ServiceError } from './errors.js';
import { isPlainObject } from './json-object.js';

/**
 * Runs the document's tests against its new compiled content; throws 422 TESTS_FAILED with
 * `failures: [{name, expected, actual}]` when any fails. No tests: nothing runs.
 */
export function assertOwnTestsPass(compiled: CompiledRuleset, options: TestRunOptions): void {
  const tests = compiled.doc.tests;
  if (tests === undefined || tests.length === 0) return;
  const report = runTests(compiled, tests, options);
  if (report.failed === 0) return;
  const failures = report.results.filter((r) => !r.passed).map(({ name, expected, actual }) => ({ name, expected, actual }));
  const names = failures.map((f) => `'${f.name}'`).join(', ');
  throw new ServiceError('TESTS_FAILED', `${report.failed} of ${tests.length} tests failed: ${names}; nothing was stored`, { failures });
}

/**
 * The tests a `POST .../test` body asks for: its `tests` (shape checked, at most `maxTests`),
 * or the stored version's own tests when the body is empty or has no `tests`.
 */
export function requestedTests(compiled: CompiledRuleset, body: unknown, maxTests: number): readonly RulesetTestDoc[] {
  if (body === undefined || body === null) return compiled.doc.tests ?? [];
  if (!isPlainObject(body)) throw new ServiceError('BAD_REQUEST', 'request body must be a JSON object ({"tests": [...]}, or empty for the stored tests)');
  for (const key of Object.keys(body)) {
    if (key !== 'tests') throw new ServiceError('BAD_REQUEST', `unknown key '${key}' in the request body (only "tests" is accepted)`);
  }
  const tests = body['tests'];
  if (tests === undefined) return compiled.doc.tests ?? [];
  const problems: Problem[] = [];
  checkTestsShape(tests, (path, message) => problems.push({ path, message }));
  if (problems.length > 0) {
    throw new ServiceError('BAD_REQUEST', `invalid tests: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, { problems });
  }
  const list = tests as RulesetTestDoc[];
  if (list.length > maxTests) {
    throw new ServiceError('BAD_REQUEST', `tests has ${list.length} items; the limit is ${maxTests} (--max-batch-size)`);
  }
  return list;
}

/** Runs `tests` against the stored compiled ruleset and reports results and coverage. */
export function testReport(compiled: CompiledRuleset, tests: readonly RulesetTestDoc[], options: TestRunOptions): TestReport {
  return runTests(compiled, tests, options);
}
