/**
 * Checks for analysis warnings (EXTENSIONS.md 2 "Analysis"), shared by the golden cases and the
 * property tests.
 */
import assert from 'node:assert/strict';
import type { AnalysisWarning } from '../../src/analysis/index.js';
import { execute, ExecutionError, type CompiledRuleset } from '../../src/ruleset/index.js';

/** Executes a witness and checks that it shows its warning. */
export function assertWitness(compiled: CompiledRuleset, w: AnalysisWarning): void {
  assert.equal(w.code, 'NO_MATCH_POSSIBLE', `only NO_MATCH_POSSIBLE carries a witness (${w.code})`);
  const step = /^steps\.(.+)$/.exec(w.path)![1]!;
  try {
    const r = execute(compiled, w.witness, { clock: () => 0, timeoutMs: 0, maxSteps: 10_000 });
    assert.fail(`witness ${JSON.stringify(w.witness)} ended in ${r.code}, not NO_MATCHING_BRANCH`);
  } catch (err) {
    if (!(err instanceof ExecutionError)) throw err;
    assert.equal(err.code, 'NO_MATCHING_BRANCH', `witness ${JSON.stringify(w.witness)}: ${err.message}`);
    assert.equal(err.stepId, step);
  }
}
