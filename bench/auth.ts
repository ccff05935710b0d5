/**
 * Auth suite (EXTENSIONS.md 1, "cost on the hot path"): `POST /api/v1/execute/:name` of three
 * svc servers in the same run: authentication off, on with an API key (`--auth-keys-file`),
 * and on with a JWT (`--auth-jwt-jwks-file`, EdDSA). Every request of a round carries the same
 * credential, as a client's would: the guard verifies it once and then finds its principal in
 * its cache. Rounds alternate off / key / jwt, the order rotating from round to round; medians
 * are reported. Targets: with a key at
 * least 0.95 of the throughput with auth off, with a JWT at least 0.9.
 *
 *   node --import tsx bench/auth.ts       (after building dist/; or `bash bench/run.sh auth`)
 *   BENCH_AUTH_SECONDS=1 BENCH_AUTH_ROUNDS=45 BENCH_AUTH_CONNECTIONS=50
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { AuthGuard, hashApiKey, newApiKey, parseKeysFile } from '../src/auth/index.js';
import { runLoad, loadTool, type LoadRound } from './lib/load.js';
import { cpuPlan, cpuSeconds, SERVER_BIN, startSvc, type SvcServer } from './lib/procs.js';
import { absoluteRow, envInt, machineInfo, median, printSummary, round, writeReport, type SummaryRow, runMain } from './lib/report.js';
import { APPROVAL_INPUT, APPROVAL_RULESET } from './lib/scenarios.js';

const SECONDS = envInt('BENCH_AUTH_SECONDS', 1);
const ROUNDS = envInt('BENCH_AUTH_ROUNDS', 45);
const CONNECTIONS = envInt('BENCH_AUTH_CONNECTIONS', 50);
const WARMUP_SECONDS = 2;
const TARGETS = { key: 0.95, jwt: 0.9 } as const;

interface Measured extends LoadRound {
  readonly server_cpu_s: number;
  readonly rps_per_cpu_s: number | null;
}

type Mode = 'off' | 'key' | 'jwt';

async function main(): Promise<void> {
  const tool = loadTool();
  if (tool.tool === null) {
    console.log(`auth bench skipped: ${tool.reason}`);
    return;
  }
  const machine = machineInfo();
  const plan = cpuPlan();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-auth-'));
  const servers: Partial<Record<Mode, SvcServer>> = {};
  const results: Record<Mode, Measured[]> = { off: [], key: [], jwt: [] };
  try {
    // An admin API key made by svc-apikey, and an EdDSA JWT signed by a key of a local JWKS.
    const [key, record] = execFileSync(process.execPath, [join(SERVER_BIN, '..', 'svc-apikey.js'), '--id', 'bench', '--role', 'admin'], { encoding: 'utf8' })
      .trim()
      .split('\n');
    writeFileSync(join(dir, 'keys.json'), `{"keys": [${record}]}\n`);
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'bench', alg: 'EdDSA' };
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
    const jwt = await new SignJWT({ svc_role: 'admin', svc_tenants: ['*'] })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'bench' })
      .setSubject('bench-user')
      .setExpirationTime('2h')
      .sign(pair.privateKey);

    const auth: Record<Mode, { flags: string[]; header: string | null }> = {
      off: { flags: [], header: null },
      key: { flags: ['--auth-keys-file', join(dir, 'keys.json')], header: `Bearer ${key}` },
      jwt: { flags: ['--auth-jwt-jwks-file', join(dir, 'jwks.json')], header: `Bearer ${jwt}` },
    };
    const modes: Mode[] = ['off', 'key', 'jwt'];
    console.log(
      `auth bench: ${tool.tool}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per mode (alternating), ` +
        `${plan ? `servers pinned to CPU ${plan.server}, load to CPU ${plan.load}` : 'no pinning'}, load average ${machine.load_average_start.join(' ')}`,
    );
    // NOTE: started in the reverse of the measuring order (auth off last), so that no mode gains from starting first.
    for (const m of [...modes].reverse()) {
      const s = await startSvc(auth[m].flags, plan?.server ?? null);
      servers[m] = s;
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(auth[m].header ? { authorization: auth[m].header } : {}) };
      const res = await fetch(`${s.url}/api/v1/rulesets`, { method: 'POST', headers, body: JSON.stringify(APPROVAL_RULESET) });
      if (res.status !== 201 && res.status !== 200) throw new Error(`${m}: POST ruleset answered ${res.status}: ${await res.text()}`);
    }
    const path = `/api/v1/execute/${APPROVAL_RULESET.config.name}`;
    const body = JSON.stringify({ input: APPROVAL_INPUT });
    const run = (m: Mode, seconds: number): Measured => {
      const target = servers[m] as SvcServer;
      const cpu0 = cpuSeconds(target.pid);
      const header = auth[m].header;
      const r = runLoad({
        url: `${target.url}${path}`,
        body,
        connections: CONNECTIONS,
        seconds,
        cpus: plan?.load ?? null,
        ...(header ? { headers: { authorization: header } } : {}),
      });
      const cpu = cpuSeconds(target.pid) - cpu0;
      return { ...r, server_cpu_s: round(cpu, 2), rps_per_cpu_s: cpu > 0 ? Math.round(r.requests / cpu) : null };
    };
    for (const m of modes) run(m, WARMUP_SECONDS);
    for (let r = 0; r < ROUNDS; r++) {
      // NOTE: the order rotates each round (off/key/jwt, key/jwt/off, jwt/off/key), so that no mode
      // always runs right after another: on this shared machine throughput drifts within a round.
      for (const m of [...modes.slice(r % 3), ...modes.slice(0, r % 3)]) {
        const x = run(m, SECONDS);
        results[m].push(x);
        console.log(
          `  execute round ${r + 1} auth ${m.padEnd(3)} ${String(x.rps).padStart(7)} req/s  p50 ${x.p50_ms.toFixed(2)} ms  p99 ${x.p99_ms.toFixed(2)} ms  ` +
            `${String(x.rps_per_cpu_s ?? '-').padStart(7)} req/cpu-s  errors ${x.errors}`,
        );
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }

  const med = (xs: Measured[], f: (m: Measured) => number | null) => median(xs.map((m) => f(m) ?? Number.NaN));
  const errors = (m: Mode) => results[m].reduce((n, x) => n + x.errors, 0);
  /**
   * NOTE: the target is judged on the median of the per-round ratios (each round runs the three
   * modes back to back, one second each, 45 rounds): on this shared 2-core machine throughput
   * drifts by +-15% from one stretch of seconds to the next, far more than auth costs (the guard
   * itself is about 0.13 us of a 30 us request), and pairing within short rounds cancels most
   * of that drift. The unpaired medians are reported next to it.
   */
  const paired = (m: Mode, f: (x: Measured) => number | null): number =>
    median(results[m].map((x, i) => (f(x) ?? Number.NaN) / (f(results.off[i] as Measured) ?? Number.NaN)));
  const summary: SummaryRow[] = [];
  for (const m of ['key', 'jwt'] as const) {
    const label = m === 'key' ? 'an API key' : 'a JWT (EdDSA)';
    const ratio = round(
      paired(m, (x) => x.rps),
      3,
    );
    summary.push(
      absoluteRow(
        `POST /api/v1/execute/:name throughput with ${label} / auth off (median of per-round ratios)`,
        'x',
        ratio,
        `>= ${TARGETS[m]}`,
        ratio >= TARGETS[m],
        `medians: ${med(results[m], (x) => x.rps)} vs ${med(results.off, (x) => x.rps)} req/s; per CPU-second ${round(
          paired(m, (x) => x.rps_per_cpu_s),
          3,
        )}` + (errors(m) ? `; ${errors(m)} errors` : ''),
      ),
    );
  }
  // The guard's own cost per request, in process: a cached API key checked for an execute route.
  summary.push(absoluteRow('guard check of a cached API key (in process)', 'ns', guardNs(), 'report', true));
  summary.push(
    absoluteRow(
      'POST /api/v1/execute/:name p99 latency, API key',
      'ms',
      round(
        med(results.key, (x) => x.p99_ms),
        2,
      ),
      'report',
      true,
      `auth off: ${round(
        med(results.off, (x) => x.p99_ms),
        2,
      )} ms; JWT: ${round(
        med(results.jwt, (x) => x.p99_ms),
        2,
      )} ms`,
    ),
  );
  printSummary(summary);
  writeReport({
    suite: 'auth',
    machine,
    method:
      `${tool.tool} with ${CONNECTIONS} connections over loopback; ${ROUNDS} rounds of ${SECONDS} s per mode, alternating auth off / API key / JWT in an order that rotates each round, after ${WARMUP_SECONDS} s warm-up each; the target is judged on the median of the per-round ratios (paired within a round), the medians of each mode are in the note. ` +
      `${plan ? `All three servers pinned to CPU ${plan.server} (one runs load at a time), the load generator to CPU ${plan.load}.` : 'No CPU pinning.'} ` +
      'Each server runs with its defaults plus the auth flag; every request carries the same credential (Authorization: Bearer), which the guard verifies once and then finds in its principal cache.',
    summary,
    details: { connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, cores: cpus().length, pinning: plan, results },
  });
}

/**
 * Nanoseconds per `AuthGuard.check` of a cached API key. Each call gets a fresh header string
 * (a slice, as a request brings its own string whose hash is not computed yet); the cost of
 * making the slice is measured alone and taken off. Best of 5 rounds of 1,000,000.
 */
function guardNs(): number {
  const key = newApiKey();
  const guard = new AuthGuard();
  guard.setKeys(parseKeysFile(JSON.stringify({ keys: [{ id: 'k', hash: hashApiKey(key), role: 'admin', tenants: ['*'], expires_at: null }] })));
  const padded = `xBearer ${key}`;
  const n = 1_000_000;
  const best = (body: (h: string) => number): number => {
    let min = Number.POSITIVE_INFINITY;
    let sink = 0;
    for (let r = 0; r < 5; r++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) sink += body(padded.slice(1));
      min = Math.min(min, Number(process.hrtime.bigint() - t0) / n);
    }
    if (sink < 0) console.log(sink);
    return min;
  };
  const base = best((h) => h.length);
  const checked = best((h) => (guard.check(h, '127.0.0.1', 'execute', 'default') as { id: string }).id.length);
  return round(Math.max(0, checked - base), 0);
}

runMain(main);
