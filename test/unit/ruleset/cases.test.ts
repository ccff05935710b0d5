/**
 * Runs the golden execution cases in test/cases/ruleset/*.yaml.
 *
 * File format:
 *   rulesets: { <key>: <ruleset document> }      # shared by the cases of the file
 *   cases:
 *     - name: <test name>
 *       ruleset: <key> | <ruleset document>
 *       input: <any JSON>
 *       trace: <bool>            # default false
 *       max_steps: <n>           # default 10000
 *       timeout_ms: <n>          # server default, default 5000
 *       data: {limits: {max: 5}} # the tenant's datasets `@name` reads; default none
 *       now: <canonical date>    # the request's "now" that now() reads; default the clock
 *       expect:                  # a successful result; every given key is checked
 *         code, message, output, duration_us   # compared exactly
 *         path: <trace.path>
 *         trace: <whole trace> | absent
 *         logs: [[level, message, fields], ...]
 *       error:                   # or an ExecutionError
 *         code: <ExecutionErrorCode>
 *         message: <fragment> | [<fragment>, ...]
 *       logs: [...]              # with error: the logs written before it
 *
 * The clock is fake: it advances 1 ms per read, so durations are exact.
 * Each ruleset is compiled once per file and reused by its cases (as the service does).
 * Every case also runs with the trace switch flipped (the traced walk is a separate loop) and
 * must give the same code, message and output, or the same error; and with a path-only trace,
 * which must also give the full trace's path.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { JsonValue } from '../../../src/expr/ast.js';
import { canonicalDateText, setRequestNow } from '../../../src/expr/dates.js';
import { setDataSnapshot } from '../../../src/expr/index.js';
import { compileRuleset, execute, ExecutionError, type CompiledRuleset, type ExecuteOptions } from '../../../src/ruleset/index.js';

const DIR = join(import.meta.dirname, '../../cases/ruleset');

interface Expect {
  code?: string;
  message?: string;
  output?: unknown;
  duration_us?: number;
  path?: string;
  trace?: unknown;
  logs?: unknown[];
}

interface Case {
  name: string;
  ruleset: string | Record<string, unknown>;
  input: unknown;
  trace?: boolean;
  max_steps?: number;
  timeout_ms?: number;
  data?: Record<string, JsonValue>;
  now?: string;
  expect?: Expect;
  error?: { code: string; message?: string | string[] };
  logs?: unknown[];
}

interface CaseFile {
  rulesets?: Record<string, unknown>;
  cases: Case[];
}

const CASE_KEYS = new Set(['name', 'ruleset', 'input', 'trace', 'max_steps', 'timeout_ms', 'data', 'now', 'expect', 'error', 'logs']);
const EXPECT_KEYS = new Set(['code', 'message', 'output', 'duration_us', 'path', 'trace', 'logs']);

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

test('golden case files exist', () => {
  assert.ok(files.length >= 5, `expected case files in ${DIR}`);
});

for (const file of files) {
  const data = parseYaml(readFileSync(join(DIR, file), 'utf8')) as CaseFile;
  const compiled = new Map<string, CompiledRuleset>();
  const rulesetOf = (c: Case): CompiledRuleset => {
    if (typeof c.ruleset !== 'string') return compileRuleset(c.ruleset);
    let r = compiled.get(c.ruleset);
    if (r === undefined) {
      const doc = data.rulesets?.[c.ruleset];
      assert.ok(doc !== undefined, `unknown ruleset '${c.ruleset}' in ${file}`);
      r = compileRuleset(doc);
      compiled.set(c.ruleset, r);
    }
    return r;
  };

  describe(file, () => {
    for (const c of data.cases) {
      test(c.name, (t) => {
        for (const key of Object.keys(c)) assert.ok(CASE_KEYS.has(key), `unknown case key '${key}'`);
        // As the service does: the tenant's datasets and the request's "now" (canonical).
        setDataSnapshot(c.data === undefined ? null : new Map(Object.entries(c.data)));
        if (c.now !== undefined) assert.equal(canonicalDateText(c.now), c.now, 'now must be canonical text');
        setRequestNow(c.now ?? null);
        t.after(() => {
          setDataSnapshot(null);
          setRequestNow(null);
        });
        for (const key of Object.keys(c.expect ?? {})) assert.ok(EXPECT_KEYS.has(key), `unknown expect key '${key}'`);
        assert.ok((c.expect === undefined) !== (c.error === undefined), 'a case has exactly one of expect and error');
        const ruleset = rulesetOf(c);
        const first = runCase(ruleset, c);
        const flipped = runCase(ruleset, { ...c, trace: !(c.trace ?? false) }, true);
        assert.deepEqual(flipped, first, 'same outcome with the trace switch flipped');
        // A path-only trace (decision records): the same outcome and the full trace's path.
        const full = tracedRun(ruleset, c, false);
        const pathOnly = tracedRun(ruleset, c, true);
        assert.deepEqual(pathOnly.outcome, first, 'same outcome with a path-only trace');
        assert.equal(pathOnly.path, full.path, "a path-only trace has the full trace's path");
        if (pathOnly.path !== undefined) assert.equal(pathOnly.steps, 0, 'a path-only trace has no steps');
      });
    }
  });
}

/** A traced run of a case (`pathOnly`: the path alone): its outcome as `runCase` gives it, the path and the number of trace steps. */
function tracedRun(ruleset: CompiledRuleset, c: Case, pathOnly: boolean): { outcome: unknown; path: string | undefined; steps: number } {
  let now = 0;
  const logs: unknown[] = [];
  const options: ExecuteOptions = {
    trace: true,
    pathOnly,
    clock: () => ++now,
    timeoutMs: c.timeout_ms ?? 5000,
    maxSteps: c.max_steps ?? 10000,
    log: (level, message, fields) => logs.push([level, message, fields]),
  };
  try {
    const r = execute(ruleset, c.input, options);
    return { outcome: { code: r.code, message: r.message, output: r.output, logs }, path: r.trace?.path, steps: r.trace?.steps.length ?? -1 };
  } catch (err) {
    return { outcome: { error: err instanceof ExecutionError ? [err.code, err.message] : String(err), logs }, path: undefined, steps: -1 };
  }
}

/** Runs a case and checks it (unless `outcomeOnly`); returns what must not depend on tracing. */
function runCase(ruleset: CompiledRuleset, c: Case, outcomeOnly = false): unknown {
  let now = 0;
  const logs: unknown[] = [];
  const options: ExecuteOptions = {
    trace: c.trace ?? false,
    clock: () => ++now,
    timeoutMs: c.timeout_ms ?? 5000,
    maxSteps: c.max_steps ?? 10000,
    log: (level, message, fields) => logs.push([level, message, fields]),
  };
  if (outcomeOnly) {
    try {
      const r = execute(ruleset, c.input, options);
      return { code: r.code, message: r.message, output: r.output, logs };
    } catch (err) {
      return { error: err instanceof ExecutionError ? [err.code, err.message] : String(err), logs };
    }
  }
  if (c.error !== undefined) {
    const want = c.error;
    let thrown: unknown;
    assert.throws(
      () => execute(ruleset, c.input, options),
      (err: unknown) => {
        assert.ok(err instanceof ExecutionError, `expected an ExecutionError, got ${String(err)}`);
        assert.equal(err.code, want.code, err.message);
        const fragments = want.message === undefined ? [] : Array.isArray(want.message) ? want.message : [want.message];
        for (const f of fragments) assert.ok(err.message.includes(f), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(f)}`);
        thrown = err;
        return true;
      },
    );
    if (c.logs !== undefined) assert.deepEqual(logs, c.logs);
    const err = thrown as ExecutionError;
    return { error: [err.code, err.message], logs };
  }
  const result = execute(ruleset, c.input, options);
  const want = c.expect!;
  if (want.code !== undefined) assert.equal(result.code, want.code);
  if (want.message !== undefined) assert.equal(result.message, want.message);
  if (want.output !== undefined) assert.deepEqual(result.output, want.output);
  if (want.duration_us !== undefined) assert.equal(result.duration_us, want.duration_us);
  assert.ok(Number.isInteger(result.duration_us) && result.duration_us >= 0, 'duration_us is a non-negative integer');
  if (want.path !== undefined) assert.equal(result.trace?.path, want.path);
  if (want.trace === 'absent') assert.ok(!('trace' in result), 'no trace without asking');
  else if (want.trace !== undefined) assert.deepEqual(result.trace, want.trace);
  if (c.trace === true) assert.ok(result.trace !== undefined, 'trace present when asked');
  if (want.logs !== undefined) assert.deepEqual(logs, want.logs);
  return { code: result.code, message: result.message, output: result.output, logs };
}
