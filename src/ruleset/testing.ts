/**
 * A ruleset's own tests (EXTENSIONS.md 2 "Tests"): the runner the server (before a create or update is stored, and `POST .../test`) and the `svc
 * test` command call: `runTests(compiled, tests, options)` gives every result and the coverage
 * of steps, branches and terminals. Pure: the clock comes in with the execution options.
 *
 * Coverage comes from the traces of the test runs only: each test runs traced, the trace path
 * says which steps it visited, and the traced walk's branch log says which branch of each
 * decision it took (a decision's `default_next` counts as a branch). A test that fails with an
 * execution error has no trace and covers nothing. The shape of a `tests` array is checked by
 * ./test-shape.ts (validation runs it on every document).
 */
import type { JsonValue } from '../expr/ast.js';
import type { CompiledRuleset } from './compile.js';
import { execute, type ExecuteOptions } from './execute.js';
import { joinKey, jsonEqual } from './json.js';
import type { RulesetTestDoc, RulesetTestExpect } from './model.js';
import { ExecutionError } from './result.js';
import { branchLocation } from './table.js';

type JsonObject = Record<string, JsonValue>;

/** What one test got: the result, or the execution error it ended with. */
export type TestActual = { code: string; message: string; output: JsonObject; path: string } | { error: string; code: string };

/** The outcome of one test. */
export interface TestResult {
  name: string;
  passed: boolean;
  expected: RulesetTestExpect;
  actual: TestActual;
}

/** Coverage of one kind of element: how many were reached, of how many, and which were not. */
export interface CoverageCount {
  covered: number;
  total: number;
  /** Locations of the elements no test reached, in document order (`steps.age`, `steps.age.branches[0]`). */
  missing: string[];
}

/** Coverage of a test run. */
export interface Coverage {
  steps: CoverageCount;
  /** Every branch of every decision, and each decision's `default_next`. */
  branches: CoverageCount;
  terminals: CoverageCount;
}

/** The report of a test run (the answer of `POST /api/v1/rulesets/:name/test`). */
export interface TestReport {
  passed: number;
  failed: number;
  results: TestResult[];
  coverage: Coverage;
}

/** Execution settings of a test run: those of the server (or the CLI), tracing is always on. */
export type TestRunOptions = Omit<ExecuteOptions, 'trace' | 'stats' | 'branchLog' | 'log'>;

/**
 * Runs `tests` (shape already checked: see `checkTestsShape`) against `compiled`, in order, each
 * traced, and reports every result and the coverage. Never throws for a failing test: an
 * execution error is a failed test whose `actual` is `{error, code}` (the execution error code).
 */
export function runTests(compiled: CompiledRuleset, tests: readonly RulesetTestDoc[], options: TestRunOptions): TestReport {
  const tracker = new CoverageTracker(compiled);
  const results: TestResult[] = [];
  let passed = 0;
  for (const test of tests) {
    const branchLog: number[] = [];
    let actual: TestActual;
    try {
      const result = execute(compiled, test.input, { ...options, trace: true, branchLog });
      const path = result.trace?.path ?? '';
      actual = { code: result.code, message: result.message, output: result.output, path };
      tracker.record(path, branchLog);
    } catch (err) {
      if (!(err instanceof ExecutionError)) throw err;
      actual = { error: err.message, code: err.code };
    }
    const ok = matches(test.expect, actual);
    if (ok) passed++;
    results.push({ name: test.name, passed: ok, expected: test.expect, actual });
  }
  return { passed, failed: results.length - passed, results, coverage: tracker.coverage() };
}

/** True when `actual` is a result that meets every part of `expect`. */
function matches(expect: RulesetTestExpect, actual: TestActual): boolean {
  if ('error' in actual) return false;
  if (actual.code !== expect.code) return false;
  if (expect.message !== undefined && actual.message !== expect.message) return false;
  if (expect.path !== undefined && actual.path !== expect.path) return false;
  if (expect.output !== undefined) {
    for (const key of Object.keys(expect.output)) {
      if (!Object.hasOwn(actual.output, key) || !jsonEqual(actual.output[key]!, expect.output[key]!)) return false;
    }
  }
  return true;
}

/** Collects what the traces of a test run reached. */
class CoverageTracker {
  private readonly steps = new Set<string>();
  /** `stepId` → taken branch indexes (-1: `default_next`). */
  private readonly branches = new Map<string, Set<number>>();

  constructor(private readonly compiled: CompiledRuleset) {}

  /** One traced run: its path text and its branch log (one entry per decision, in order). */
  record(path: string, branchLog: readonly number[]): void {
    const ids = path === '' ? [] : path.split(' -> ');
    let b = 0;
    for (const id of ids) {
      this.steps.add(id);
      if (this.compiled.steps.get(id)?.type !== 'decision') continue;
      const taken = branchLog[b++];
      if (taken === undefined) continue;
      let set = this.branches.get(id);
      if (set === undefined) this.branches.set(id, (set = new Set()));
      set.add(taken);
    }
  }

  coverage(): Coverage {
    const steps = counter();
    const branches = counter();
    const terminals = counter();
    for (const [id, info] of this.compiled.steps) {
      const at = joinKey('steps', id);
      const reached = this.steps.has(id);
      count(steps, at, reached);
      if (info.type === 'terminal') count(terminals, at, reached);
      if (info.type !== 'decision') continue;
      const taken = this.branches.get(id);
      // A decision table's rows are its branches (`rows[i]`).
      info.branches.forEach((_, i) => count(branches, branchLocation(info, at, i), taken?.has(i) === true));
      if (info.defaultNext !== null) count(branches, `${at}.default_next`, taken?.has(-1) === true);
    }
    return { steps, branches, terminals };
  }
}

function counter(): CoverageCount {
  return { covered: 0, total: 0, missing: [] };
}

function count(c: CoverageCount, at: string, covered: boolean): void {
  c.total++;
  if (covered) c.covered++;
  else c.missing.push(at);
}
