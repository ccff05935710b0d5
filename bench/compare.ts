/**
 * `npm run bench:compare`: runs bench suites against the previous release's build and this
 * checkout's, alternating, and fails (exit 1) when a figure regresses beyond its noise band.
 *
 *   npm run bench:compare -- [--base <ref>] [--runs N] [--keep] [suite ...]
 *   node --import tsx bench/compare.ts --base-results <dir> --head-results <dir>   (judge saved runs only)
 *
 * - Base: `--base <ref>` (a tag, branch or commit), else the newest tag `v*` reachable from HEAD
 *   (`git describe --tags --abbrev=0 --match 'v*'`); with neither, it stops and asks for --base.
 * - The base is checked out in a temporary git worktree (`git worktree add --detach`). Its
 *   node_modules (and bench/node_modules) are symlinks to this checkout's when the lock files
 *   are equal, else `npm ci` runs there. Both builds are compiled with tsc (dist/).
 * - Suites (default: every suite of bench/run.sh that both builds have) run in each tree with
 *   that tree's own suite code, `--runs` times per build (default 2), in the order base, head,
 *   head, base, ... so neither build always runs first. Result files go to the output directory
 *   (`--out`, default <tmp>/svc-bench-compare-<time>/{base,head}), not into bench/results/.
 * - The judgement (bench/lib/compare.ts): each figure (its ratio to the same-run baseline when
 *   it has one) against the base's, with the larger of the suite's default noise band and the
 *   runs' spread. A table is printed and written as compare.json beside the results.
 * Kept out of `npm test` (it takes minutes per suite); the judgement has unit tests.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { compareReports, formatTable, hasRegression } from './lib/compare.js';
import type { SuiteReport } from './lib/report.js';
import { ROOT } from './lib/report.js';

interface Args {
  base: string | null;
  runs: number;
  keep: boolean;
  suites: string[];
  out: string | null;
  baseResults: string | null;
  headResults: string | null;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { base: null, runs: 2, keep: false, suites: [], out: null, baseResults: null, headResults: null };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i] as string;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) usage(`${x} needs a value`);
      return v;
    };
    if (x === '--base') a.base = value();
    else if (x === '--runs') {
      a.runs = Number(value());
      if (!Number.isInteger(a.runs) || a.runs < 1) usage('--runs must be a positive integer');
    } else if (x === '--keep') a.keep = true;
    else if (x === '--out') a.out = resolve(value());
    else if (x === '--base-results') a.baseResults = resolve(value());
    else if (x === '--head-results') a.headResults = resolve(value());
    else if (x === '--help' || x === '-h') usage(null);
    else if (x.startsWith('-')) usage(`unknown option ${x}`);
    else a.suites.push(x);
  }
  if ((a.baseResults === null) !== (a.headResults === null)) usage('--base-results and --head-results go together');
  return a;
}

function usage(problem: string | null): never {
  if (problem) console.error(`bench:compare: ${problem}`);
  console.error('usage: npm run bench:compare -- [--base <ref>] [--runs N] [--keep] [--out <dir>] [suite ...]');
  console.error('       node --import tsx bench/compare.ts --base-results <dir> --head-results <dir>');
  process.exit(problem ? 2 : 0);
}

function git(args: string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The base ref: --base, else the newest `v*` tag reachable from HEAD. */
function baseRef(given: string | null): string {
  if (given !== null) return given;
  try {
    return git(['describe', '--tags', '--abbrev=0', '--match', 'v*']);
  } catch {
    console.error('bench:compare: this repository has no `v*` tag to compare with; give the base with --base <ref> (a tag, branch or commit)');
    process.exit(2);
  }
}

/** The suites of bench/run.sh (ALL_SUITES) of a tree. */
function suitesOf(tree: string): string[] {
  const run = join(tree, 'bench', 'run.sh');
  if (!existsSync(run)) return [];
  const m = /^ALL_SUITES=\(([^)]*)\)/m.exec(readFileSync(run, 'utf8'));
  return m ? (m[1] as string).split(/\s+/).filter(Boolean) : [];
}

function sameFile(a: string, b: string): boolean {
  return existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b));
}

/** node_modules of `tree` (at `sub`): a symlink to this checkout's when the lock files match, else `npm ci`. */
function installDeps(tree: string, sub: string): void {
  const dir = join(tree, sub);
  if (!existsSync(join(dir, 'package.json'))) return;
  if (sameFile(join(dir, 'package-lock.json'), join(ROOT, sub, 'package-lock.json')) && existsSync(join(ROOT, sub, 'node_modules'))) {
    symlinkSync(realpathSync(join(ROOT, sub, 'node_modules')), join(dir, 'node_modules'));
    console.log(`bench:compare: ${sub || '.'}/node_modules of the base: symlink (same lock file)`);
  } else {
    console.log(`bench:compare: ${sub || '.'}/node_modules of the base: npm ci (the lock file differs)`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
  }
}

/** Compiles dist/ of a tree. */
function build(tree: string, label: string): void {
  console.log(`bench:compare: building ${label} (tsc)`);
  execFileSync(process.execPath, [join(tree, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: tree, stdio: 'inherit' });
  const bin = join(tree, 'dist', 'bin');
  if (existsSync(bin)) for (const f of readdirSync(bin)) if (f.endsWith('.js')) execFileSync('chmod', ['+x', join(bin, f)]);
}

/** Runs one suite in `tree`; moves the result file it wrote into `outDir` and returns it (null: none). */
function runSuite(tree: string, suite: string, outDir: string, label: string): SuiteReport | null {
  const results = join(tree, 'bench', 'results');
  const before = new Set(existsSync(results) ? readdirSync(results) : []);
  console.log(
    `=== bench:compare: ${suite} on ${label} (${new Date().toISOString().slice(11, 19)}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
  );
  const r = spawnSync(process.execPath, ['--import', 'tsx', join('bench', `${suite}.ts`)], { cwd: tree, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    console.error(`bench:compare: ${suite} failed on ${label} (exit ${r.status})`);
    return null;
  }
  const fresh = (existsSync(results) ? readdirSync(results) : []).filter((f) => !before.has(f) && f.startsWith(`${suite}-`) && f.endsWith('.json')).sort();
  const file = fresh.at(-1);
  if (file === undefined) return null;
  mkdirSync(outDir, { recursive: true });
  renameSync(join(results, file), join(outDir, file));
  return JSON.parse(readFileSync(join(outDir, file), 'utf8')) as SuiteReport;
}

/** Suite reports of a directory of result files. */
function readResults(dir: string): SuiteReport[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'compare.json')
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as SuiteReport)
    .filter((r) => Array.isArray(r.summary));
}

/** Prints (and writes) the comparison; true when a figure regressed. */
function judge(base: SuiteReport[], head: SuiteReport[], baseName: string, out: string | null): boolean {
  const rows = compareReports(base, head);
  console.log(`\n${formatTable(rows, baseName, 'head')}\n`);
  if (out !== null) {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'compare.json'), `${JSON.stringify({ base: baseName, rows }, null, 2)}\n`);
    console.log(`bench:compare: results and compare.json in ${out}`);
  }
  const bad = rows.filter((r) => r.verdict === 'regression');
  if (hasRegression(rows)) {
    console.log(`bench:compare: ${bad.length} figure(s) regressed beyond their noise band`);
    return true;
  }
  console.log('bench:compare: no figure regressed beyond its noise band');
  return false;
}

function main(): void {
  const a = parseArgs(process.argv.slice(2));
  if (a.baseResults !== null && a.headResults !== null) {
    if (judge(readResults(a.baseResults), readResults(a.headResults), 'base', null)) process.exit(1);
    return;
  }
  const ref = baseRef(a.base);
  const commit = git(['rev-parse', '--short', `${ref}^{commit}`]);
  const out = a.out ?? join(tmpdir(), `svc-bench-compare-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const tree = mkdtempSync(join(tmpdir(), 'svc-bench-base-'));
  rmSync(tree, { recursive: true, force: true });
  console.log(
    `bench:compare: base ${ref} (${commit}) in ${tree}; head is this checkout (${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain']) ? ', with uncommitted changes' : ''})`,
  );
  git(['worktree', 'add', '--detach', tree, commit]);
  let failed = false;
  let regressed = false;
  try {
    installDeps(tree, '');
    installDeps(tree, 'bench');
    build(tree, `the base (${ref})`);
    build(ROOT, 'the head');
    const both = new Set(suitesOf(tree));
    const wanted = a.suites.length > 0 ? a.suites : suitesOf(ROOT).filter((s) => both.has(s));
    const missing = wanted.filter((s) => !existsSync(join(tree, 'bench', `${s}.ts`)) || !existsSync(join(ROOT, 'bench', `${s}.ts`)));
    if (missing.length > 0) console.log(`bench:compare: not in both builds, skipped: ${missing.join(' ')}`);
    const suites = wanted.filter((s) => !missing.includes(s));
    const reports: { base: SuiteReport[]; head: SuiteReport[] } = { base: [], head: [] };
    for (let run = 0; run < a.runs; run++) {
      for (const suite of suites) {
        // NOTE: base, head, then head, base: neither build always runs first (drift, warm caches).
        const order: Array<'base' | 'head'> = run % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
        for (const which of order) {
          const r = runSuite(which === 'base' ? tree : ROOT, suite, join(out, which), which === 'base' ? `base ${ref}` : 'head');
          if (r === null) failed = true;
          else reports[which].push(r);
        }
      }
    }
    regressed = judge(reports.base, reports.head, ref, out);
  } finally {
    if (!a.keep) {
      try {
        git(['worktree', 'remove', '--force', tree]);
      } catch {
        rmSync(tree, { recursive: true, force: true });
        git(['worktree', 'prune']);
      }
    } else console.log(`bench:compare: base worktree kept at ${tree}`);
  }
  if (failed) console.error('bench:compare: a suite failed on one of the builds (see above)');
  if (failed || regressed) process.exit(1);
}

main();
