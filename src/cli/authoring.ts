/**
 * `svc test` and `svc lint` (EXTENSIONS.md 2 "`svc` command"): the server's own validation,
 * analysis and test runner on rule files, no server needed.
 *
 * - test: runs the `tests` of every rule file (exactly as `POST /api/v1/rulesets/:name/test`
 *   does), prints a report with coverage, writes JUnit XML with `--junit`, and exits 1 when a
 *   test fails, a file is invalid, or branch coverage is under `--min-coverage`.
 * - lint: validation problems (exit 1) and analysis warnings (exit 1 with `--strict`, or when
 *   the file says `config.strict: true`, as the server would refuse it).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { analyzeRuleset, type AnalysisWarning } from '../analysis/index.js';
import { setDataSnapshot } from '../expr/index.js';
import { compileRuleset, RulesetValidationError, type CompiledRuleset, type Problem } from '../ruleset/index.js';
import { runTests, type CoverageCount, type TestReport } from '../ruleset/testing.js';
import { CliError, EXIT_FAILED, EXIT_OK } from '../signing/cli-support.js';
import { STDIO, type Output } from './commands.js';
import { CLI_EXECUTION } from './local-service.js';
import { findRuleFiles, readRuleFile } from './rule-files.js';
import { callsOf, workspaceOf } from './workspace.js';

/** A rule file compiled, or its validation problems. */
type Compiled = { ok: true; compiled: CompiledRuleset } | { ok: false; problems: readonly Problem[] };

function compileFile(path: string): Compiled {
  const { doc } = readRuleFile(path);
  try {
    return { ok: true, compiled: compileRuleset(doc) };
  } catch (err) {
    if (err instanceof RulesetValidationError) return { ok: false, problems: err.problems };
    throw err;
  }
}

/** Files named by `paths`, or a CliError when there are none. */
function ruleFiles(paths: readonly string[]): string[] {
  const files = findRuleFiles(paths);
  if (files.length === 0) throw new CliError(`no rule files (.json, .yaml, .yml, .svc) in ${paths.join(', ')}`, EXIT_FAILED);
  return files;
}

const percent = (c: CoverageCount): number => (c.total === 0 ? 100 : (100 * c.covered) / c.total);
const fraction = (c: CoverageCount): string => `${c.covered}/${c.total}`;

/** The outcome of one file in `svc test`. */
interface FileOutcome {
  readonly path: string;
  readonly name: string;
  readonly problems?: readonly Problem[];
  readonly report?: TestReport;
  readonly ms: number;
}

/** `svc test PATH... [--junit FILE] [--min-coverage N]`. */
export function testCommand(paths: readonly string[], opts: { junit?: string; minCoverage?: string }, o: Output = STDIO): number {
  const min = opts.minCoverage === undefined ? null : Number(opts.minCoverage);
  if (min !== null && !(Number.isFinite(min) && min >= 0 && min <= 100))
    throw new CliError(`--min-coverage must be a number from 0 to 100, got "${opts.minCoverage}"`);
  const outcomes: FileOutcome[] = [];
  let failed = false;
  for (const path of ruleFiles(paths)) {
    const started = performance.now();
    const c = compileFile(path);
    if (!c.ok) {
      outcomes.push({ path, name: path, problems: c.problems, ms: performance.now() - started });
      o.out(`FAIL ${path}: invalid ruleset\n${c.problems.map((p) => `  ${p.path}: ${p.message}\n`).join('')}`);
      failed = true;
      continue;
    }
    const tests = c.compiled.doc.tests ?? [];
    // Calls and `@name` resolve against the file's directory, as a server's rules dir (./workspace.ts).
    const workspace = workspaceOf(path);
    setDataSnapshot(workspace.data);
    const report = runTests(c.compiled, tests, { clock: () => performance.now(), ...CLI_EXECUTION, calls: callsOf(workspace) });
    outcomes.push({ path, name: c.compiled.name, report, ms: performance.now() - started });
    const cov = report.coverage;
    const belowMin = min !== null && percent(cov.branches) < min;
    const status = report.failed > 0 || belowMin ? 'FAIL' : 'ok  ';
    o.out(
      `${status} ${path} (${c.compiled.name}): ${report.passed} passed, ${report.failed} failed; coverage: steps ${fraction(cov.steps)}, ` +
        `branches ${fraction(cov.branches)} (${percent(cov.branches).toFixed(1)}%), terminals ${fraction(cov.terminals)}\n`,
    );
    if (tests.length === 0) o.out('  no tests\n');
    for (const r of report.results) {
      if (!r.passed) o.out(`  failed: ${r.name}\n    expected ${JSON.stringify(r.expected)}\n    actual   ${JSON.stringify(r.actual)}\n`);
    }
    if (belowMin)
      o.out(`  branch coverage ${percent(cov.branches).toFixed(1)}% is under --min-coverage ${min}; not covered: ${cov.branches.missing.join(', ')}\n`);
    if (report.failed > 0 || belowMin) failed = true;
  }
  const totals = outcomes.reduce((t, x) => ({ passed: t.passed + (x.report?.passed ?? 0), failed: t.failed + (x.report?.failed ?? 0) }), {
    passed: 0,
    failed: 0,
  });
  o.out(`${outcomes.length} files, ${totals.passed} tests passed, ${totals.failed} failed\n`);
  if (opts.junit !== undefined) {
    try {
      writeFileSync(opts.junit, junitXml(outcomes));
    } catch (err) {
      throw new CliError(`--junit ${opts.junit}: cannot write: ${(err as Error).message}`, EXIT_FAILED);
    }
  }
  return failed ? EXIT_FAILED : EXIT_OK;
}

/** JUnit XML of a test run: one testsuite per rule file, one testcase per test. */
export function junitXml(outcomes: readonly FileOutcome[]): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const tests = outcomes.reduce((n, x) => n + (x.report ? x.report.results.length : 1), 0);
  const failures = outcomes.reduce((n, x) => n + (x.report ? x.report.failed : 1), 0);
  lines.push(`<testsuites name="svc test" tests="${tests}" failures="${failures}">`);
  for (const x of outcomes) {
    const secs = (x.ms / 1000).toFixed(3);
    if (x.report === undefined) {
      lines.push(`  <testsuite name="${xml(x.path)}" tests="1" failures="1" time="${secs}">`);
      const text = (x.problems ?? []).map((p) => `${p.path}: ${p.message}`).join('\n');
      lines.push(`    <testcase name="valid ruleset" classname="${xml(x.path)}"><failure message="invalid ruleset">${xml(text)}</failure></testcase>`);
    } else {
      const r = x.report;
      lines.push(`  <testsuite name="${xml(x.name)}" tests="${r.results.length}" failures="${r.failed}" time="${secs}" file="${xml(x.path)}">`);
      for (const t of r.results) {
        const open = `    <testcase name="${xml(t.name)}" classname="${xml(x.name)}"`;
        if (t.passed) lines.push(`${open}/>`);
        else {
          const detail = `expected ${JSON.stringify(t.expected)}\nactual   ${JSON.stringify(t.actual)}`;
          lines.push(`${open}><failure message="${xml(`expected ${t.expected.code}, got ${t.actual.code}`)}">${xml(detail)}</failure></testcase>`);
        }
      }
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** `svc lint PATH... [--strict]`. */
export function lintCommand(paths: readonly string[], opts: { strict?: boolean }, o: Output = STDIO): number {
  let failed = false;
  let problems = 0;
  let warnings = 0;
  const files = ruleFiles(paths);
  for (const path of files) {
    const c = compileFile(path);
    if (!c.ok) {
      failed = true;
      problems += c.problems.length;
      for (const p of c.problems) o.out(`${path}: error ${p.path}: ${p.message}\n`);
      continue;
    }
    const found: readonly AnalysisWarning[] = analyzeRuleset(c.compiled);
    warnings += found.length;
    const strict = opts.strict === true || c.compiled.doc.config.strict === true;
    for (const w of found) {
      o.out(
        `${path}: ${strict ? 'error' : 'warning'} ${w.code} ${w.path}: ${w.message}${w.witness !== undefined ? ` (witness: ${JSON.stringify(w.witness)})` : ''}\n`,
      );
    }
    if (strict && found.length > 0) failed = true;
  }
  o.out(`${files.length} files, ${problems} problems, ${warnings} warnings\n`);
  return failed ? EXIT_FAILED : EXIT_OK;
}
