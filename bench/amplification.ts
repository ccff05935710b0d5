/**
 * Amplification cases of the work budget (EXTENSIONS.md 6; the cases are in
 * test/helpers/amplification.ts): the worst `/healthz/live` stall and the peak RSS of the
 * server while each case runs, on two builds: "before" (a build of the commit before the work
 * budget, e.g. made from git in a temp dir) and "after" (this checkout's dist/). Every case runs
 * against a fresh server with the default limits. Writes bench/results/amplification-<ts>.json,
 * which bench/report.ts renders as "Limits: amplification cases".
 *
 * Run: `node --import tsx bench/amplification.ts [before-server.js]` (default
 * /tmp/svc-before/dist/bin/svc-server.js). AMP_ONLY=before measures the before build only;
 * AMP_ONLY=after measures this build and carries the before figures of the newest result file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { amplificationCases, controlCase, measureCase, type CaseResult } from '../test/helpers/amplification.js';
import { ROOT, startServer } from '../test/helpers/server-process.js';
import { machineInfo, writeReport } from './lib/report.js';

/** Runs every case on a fresh server of `bin`. */
async function runBuild(label: string, bin: string): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const c of [controlCase(), ...amplificationCases()]) {
    const server = await startServer(['--disable-grpc'], { serverBin: bin });
    try {
      const r = await measureCase(server, c.name, () => c.run(server));
      console.log(
        `${label.padEnd(6)} ${r.name.padEnd(48)} stall ${String(r.stallMs).padStart(6)} ms  peak RSS ${String(r.peakRssMb).padStart(5)} MB  ${r.durationMs} ms  ${r.statuses.join(',')} ${r.codes.join(',')}`,
      );
      out.push(r);
    } finally {
      await server.stop('SIGKILL');
    }
  }
  return out;
}

/**
 * The "before" cases of the newest result file that has them (AMP_ONLY=after: the before build
 * is slow to measure, over four minutes, so an "after" run may reuse its figures).
 */
function lastBefore(): { file: string; build: string | null; cases: CaseResult[] } | null {
  const dir = join(ROOT, 'bench', 'results');
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('amplification-') && f.endsWith('.json'))
    .sort()
    .reverse();
  for (const file of files) {
    const d = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { details?: { before?: CaseResult[] | null; before_build?: string | null } };
    if (Array.isArray(d.details?.before)) return { file, build: d.details.before_build ?? null, cases: d.details.before };
  }
  return null;
}

async function main(): Promise<void> {
  const beforeBin = process.argv[2] ?? '/tmp/svc-before/dist/bin/svc-server.js';
  const afterBin = join(ROOT, 'dist', 'bin', 'svc-server.js');
  const only = process.env['AMP_ONLY'];
  const carried = only === 'after' ? lastBefore() : null;
  const before = carried !== null ? carried.cases : only === 'after' || !existsSync(beforeBin) ? null : await runBuild('before', beforeBin);
  const after = only === 'before' ? null : await runBuild('after', afterBin);
  writeReport({
    suite: 'amplification',
    machine: machineInfo(),
    method:
      'Default limits; each case on a fresh server (--disable-grpc). Stall: the slowest /healthz/live answer on another keep-alive connection (polled every 50 ms) while the case runs; peak RSS: the highest VmRSS of the server sampled every 50 ms. "before" is a build of the commit before the work budget.',
    summary: [],
    details: { before_build: carried !== null ? carried.build : before === null ? null : beforeBin, before_from: carried?.file ?? null, before, after },
  });
}

await main();
