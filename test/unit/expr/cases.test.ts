/**
 * Runs the golden expression cases of test/cases/expr/*.yaml. Each case is one expression with
 * an expected outcome:
 *
 *   - expr: 'user.age >= 18'      # or expr_parts: [['(', 64], ['x', 1], [')', 64]] (text, times)
 *     name: optional title
 *     input: {user: {age: 20}}     # default {}
 *     vars: {d: 1}                 # default none
 *     data: {high_risk: {countries: [KP]}}   # reference datasets `@name` reads; default none
 *     mode: lenient | strict | both   # default both
 *     result: true                 # expected value, or
 *     error: {code: TYPE_ERROR, message: '...'}            # runtime error, or
 *     syntax: {code: UNEXPECTED_TOKEN, position: 3, detail: "unexpected ')'"}   # parse error
 *     render: '(>= user.age 18)'   # optional: expected render(parse(expr))
 *
 * Each evaluation runs the compiled closure and the reference interpreter; both must match.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import type { JsonValue } from '../../../src/expr/ast.js';
import { compile, ExprSyntaxError, parse, render, setDataSnapshot } from '../../../src/expr/index.js';
import { outcomeOf, referenceEvaluate, type Outcome } from '../../helpers/expr-reference.js';

interface Case {
  expr?: string;
  expr_parts?: [string, number][];
  name?: string;
  input?: unknown;
  vars?: Record<string, JsonValue> | null;
  data?: Record<string, JsonValue>;
  mode?: 'lenient' | 'strict' | 'both';
  result?: JsonValue;
  error?: { code: string; message?: string };
  syntax?: { code: string; position: number; detail?: string };
  render?: string;
}

const DIR = join(dirname(fileURLToPath(import.meta.url)), '../../cases/expr');

function sourceOf(c: Case): string {
  if (c.expr !== undefined) return c.expr;
  if (c.expr_parts !== undefined) return c.expr_parts.map(([text, times]) => text.repeat(times)).join('');
  throw new Error('case has neither expr nor expr_parts');
}

/** JSON view of a value (-0 prints as 0, like the HTTP answer). */
function normal(o: Outcome): Outcome {
  return o.ok ? { ok: true, value: JSON.parse(JSON.stringify(o.value)) as JsonValue } : o;
}

function checkOutcome(c: Case, got: Outcome, label: string): void {
  if ('result' in c) {
    assert.deepEqual(got, { ok: true, value: c.result }, `${label}: expected a value`);
  } else if (c.error !== undefined) {
    assert.equal(got.ok, false, `${label}: expected ${c.error.code}, got ${JSON.stringify(got)}`);
    if (got.ok) return;
    assert.equal(got.code, c.error.code, label);
    if (c.error.message !== undefined) assert.equal(got.message, c.error.message, label);
  } else {
    throw new Error('case expects neither result, error nor syntax');
  }
}

function runCase(c: Case): void {
  const source = sourceOf(c);
  if (c.syntax !== undefined) {
    const want = c.syntax;
    assert.throws(
      () => parse(source),
      (e: unknown) => {
        assert.ok(e instanceof ExprSyntaxError, `expected ExprSyntaxError, got ${String(e)}`);
        assert.equal(e.code, want.code);
        assert.equal(e.position, want.position);
        if (want.detail !== undefined) assert.equal(e.detail, want.detail);
        assert.equal(e.message, `${e.detail} at ${e.position}`);
        return true;
      },
    );
    return;
  }
  const ast = parse(source);
  if (c.render !== undefined) assert.equal(render(ast), c.render);
  const modes = c.mode === undefined || c.mode === 'both' ? (['lenient', 'strict'] as const) : [c.mode];
  const input = c.input === undefined ? {} : c.input;
  const vars = c.vars ?? null;
  setDataSnapshot(c.data === undefined ? null : new Map(Object.entries(c.data)));
  for (const mode of modes) {
    const run = compile(ast, { fieldMissing: mode });
    const compiled = normal(outcomeOf(() => run(input, vars)));
    checkOutcome(c, compiled, `${mode} compiled`);
    const reference = normal(outcomeOf(() => referenceEvaluate(ast, input, vars, mode === 'strict')));
    assert.deepEqual(reference, compiled, `${mode}: reference interpreter disagrees`);
  }
}

for (const file of readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort()) {
  const cases = YAML.parse(readFileSync(join(DIR, file), 'utf8')) as Case[];
  describe(`expr cases: ${file}`, () => {
    for (const c of cases) {
      test(c.name ?? sourceOf(c).slice(0, 80), () => runCase(c));
    }
  });
}
