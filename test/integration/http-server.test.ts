/**
 * The real `svc-server` process over HTTP: persistence to a rules dir that survives a restart
 * (rules, versions, the next version seq), the audit files, `/metrics` parsed back, start-up
 * configuration errors, and a server that keeps running without a signal.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SERVER_BIN, http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { find, parseExposition, value } from '../unit/observe/exposition.js';
import { ageRules, sleep } from './http-support.js';

const API = '/api/v1';
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('svc-server: persistence across a restart, audit files, metrics', () => {
  const tmp = tempDir('svc-http-int-');
  const rulesDir = join(tmp.path, 'rules');
  const auditDir = join(tmp.path, 'audit');
  const args = ['--disable-grpc', '--rules-dir', rulesDir, '--audit-dir', auditDir, '--audit-sample-rate', '100', '--max-versions', '3'];
  let server: ServerProcess | undefined;
  let firstRun: { stdout: Record<string, unknown>[]; exit: number | string } | undefined;
  let snapshot: { list: unknown; docs: Record<string, unknown>; versions: Record<string, unknown> } | undefined;

  after(async () => {
    await server?.stop('SIGKILL');
    tmp.remove();
  });

  it('first run: writes, history pruned to --max-versions, rollback; SIGTERM exits 0', async () => {
    server = await startServer(args);
    const url = server.url;
    for (let i = 1; i <= 5; i++) {
      const r = await http(url, 'POST', `${API}/rulesets`, ageRules('loan', `${i}.0.0`, `ADULT_${i}`));
      assert.equal(r.status, 200);
      assert.equal(r.body.status, i === 1 ? 'created' : 'updated');
    }
    assert.equal((await http(url, 'POST', `${API}/rulesets`, ageRules('pricing', '0.1'))).status, 200);
    assert.equal((await http(url, 'POST', `${API}/rulesets`, ageRules('temp'))).status, 200);
    assert.equal((await http(url, 'DELETE', `${API}/rulesets/temp`)).status, 204);
    // 4 updates made seqs 1-4; --max-versions 3 keeps 2-4
    let v = await http(url, 'GET', `${API}/rulesets/loan/versions`);
    assert.deepEqual(
      v.body.versions.map((e: { seq: number; version: string }) => [e.seq, e.version]),
      [
        [4, '4.0.0'],
        [3, '3.0.0'],
        [2, '2.0.0'],
      ],
    );
    const rb = await http(url, 'POST', `${API}/rulesets/loan/rollback`, { seq: 3 });
    assert.deepEqual(rb.body, { status: 'rolled_back', name: 'loan', from_version: '5.0.0', to_version: '3.0.0' });
    v = await http(url, 'GET', `${API}/rulesets/loan/versions`);
    assert.deepEqual(
      v.body.versions.map((e: { seq: number }) => e.seq),
      [5, 4, 3],
    );
    assert.equal((await http(url, 'POST', `${API}/execute/loan`, { input: { user: { age: 40 } } })).body.code, 'ADULT_3');
    assert.equal((await http(url, 'POST', `${API}/execute/loan`, { input: { user: { age: 4 } } })).body.code, 'MINOR');

    // the layout on disk
    assert.deepEqual(
      readdirSync(rulesDir)
        .filter((f) => !f.startsWith('.'))
        .sort(),
      ['loan.json', 'pricing.json'],
    );
    const history = readdirSync(join(rulesDir, '.versions', 'loan')).sort();
    assert.equal(history.length, 3);
    for (const f of history) assert.match(f, /^v[345]_\d+\.json$/);

    snapshot = {
      list: (await http(url, 'GET', `${API}/rulesets`)).body,
      docs: {
        loan: (await http(url, 'GET', `${API}/rulesets/loan`)).body,
        pricing: (await http(url, 'GET', `${API}/rulesets/pricing`)).body,
      },
      versions: {
        loan: (await http(url, 'GET', `${API}/rulesets/loan/versions`)).body,
        pricing: (await http(url, 'GET', `${API}/rulesets/pricing/versions`)).body,
      },
    };
    const exit = await server.stop('SIGTERM');
    assert.equal(exit, 0);
    firstRun = { stdout: [...server.stdout], exit };
    server = undefined;
  });

  it('second run: rules, documents and versions are intact, and the next seq continues', async () => {
    assert.ok(snapshot, 'first run finished');
    server = await startServer(args);
    const url = server.url;
    assert.deepEqual((await http(url, 'GET', `${API}/rulesets`)).body, snapshot.list);
    assert.deepEqual((await http(url, 'GET', `${API}/rulesets/loan`)).body, snapshot.docs['loan']);
    assert.deepEqual((await http(url, 'GET', `${API}/rulesets/pricing`)).body, snapshot.docs['pricing']);
    assert.deepEqual((await http(url, 'GET', `${API}/rulesets/loan/versions`)).body, snapshot.versions['loan']);
    assert.deepEqual((await http(url, 'GET', `${API}/rulesets/pricing/versions`)).body, snapshot.versions['pricing']);
    assert.equal((await http(url, 'POST', `${API}/execute/loan`, { input: { user: { age: 40 } } })).body.code, 'ADULT_3');
    assert.equal((await http(url, 'GET', `${API}/rulesets/temp`)).status, 404);
    const health = await http(url, 'GET', '/health');
    assert.deepEqual(health.body.storage, { mode: 'persistent', rules_dir: rulesDir, rules_count: 2 });

    assert.equal((await http(url, 'POST', `${API}/rulesets`, ageRules('loan', '6.0.0', 'ADULT_6'))).body.status, 'updated');
    const v = await http(url, 'GET', `${API}/rulesets/loan/versions`);
    assert.deepEqual(
      v.body.versions.map((e: { seq: number; version: string }) => [e.seq, e.version]),
      [
        [6, '3.0.0'],
        [5, '5.0.0'],
        [4, '4.0.0'],
      ],
    );
    // an old version from before the restart can still be restored
    const rb = await http(url, 'POST', `${API}/rulesets/loan/rollback`, { seq: 4 });
    assert.equal(rb.status, 200);
    assert.equal((await http(url, 'POST', `${API}/execute/loan`, { input: { user: { age: 40 } } })).body.code, 'ADULT_4');
  });

  it('/metrics parses back: every family, svc_info version, counters that moved', async () => {
    assert.ok(server, 'second run is up');
    const url = server.url;
    const scrape = async () => {
      const r = await fetch(`${url}/metrics`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
      return parseExposition(await r.text());
    };
    const before = await scrape();
    for (const name of [
      'svc_info',
      'svc_uptime_seconds',
      'svc_rules_total',
      'svc_executions_total',
      'svc_execution_duration_seconds',
      'svc_terminal_results_total',
      'svc_eval_total',
      'svc_eval_duration_seconds',
      'svc_active_executions',
      'svc_compilation_duration_seconds',
    ]) {
      assert.ok(before.types.has(name), `${name} is exposed`);
    }
    const version = (await http(url, 'GET', '/health')).body.version;
    assert.equal(value(before, 'svc_info', { version }), 1);
    assert.equal(value(before, 'svc_rules_total'), 2);
    // compilations at load are measured too
    assert.ok(value(before, 'svc_compilation_duration_seconds_count', { ruleset: 'pricing' }) >= 1);
    const n = (exp: typeof before, labels: Record<string, string>) => find(exp, 'svc_executions_total', labels).reduce((a, s) => a + s.value, 0);
    for (let i = 0; i < 3; i++) await http(url, 'POST', `${API}/execute/pricing`, { input: { user: { age: 50 } } });
    await http(url, 'POST', `${API}/execute/pricing/batch`, { inputs: [{ user: { age: 1 } }, { user: { age: 2 } }] });
    await http(url, 'POST', `${API}/eval`, { expression: '2 * 21' });
    const afterScrape = await scrape();
    assert.equal(n(afterScrape, { ruleset: 'pricing', result: 'success' }) - n(before, { ruleset: 'pricing', result: 'success' }), 5);
    assert.equal(value(afterScrape, 'svc_terminal_results_total', { ruleset: 'pricing', code: 'MINOR' }), 2);
    assert.equal(value(afterScrape, 'svc_execution_duration_seconds_bucket', { ruleset: 'pricing', le: '+Inf' }), 5);
    assert.ok(value(afterScrape, 'svc_eval_total', { result: 'success' }) >= 1);
    assert.ok(value(afterScrape, 'svc_uptime_seconds') >= 0);
  });

  it('audit files: audit-YYYY-MM-DD.jsonl by UTC date, the same lines as stdout, every event with every field', async () => {
    assert.ok(server && firstRun, 'both runs happened');
    assert.equal(await server.stop('SIGTERM'), 0);
    const secondStdout = [...server.stdout];
    server = undefined;

    const files = readdirSync(auditDir).sort();
    assert.ok(files.length >= 1);
    const fileLines: Record<string, unknown>[] = [];
    for (const f of files) {
      assert.match(f, /^audit-\d{4}-\d{2}-\d{2}\.jsonl$/);
      const text = readFileSync(join(auditDir, f), 'utf8');
      assert.ok(text.endsWith('\n'));
      for (const line of text.trimEnd().split('\n')) {
        const rec = JSON.parse(line) as Record<string, unknown>;
        assert.match(String(rec['timestamp']), ISO_UTC_MS);
        assert.equal(f, `audit-${String(rec['timestamp']).slice(0, 10)}.jsonl`, 'a line is in the file of its UTC date');
        assert.equal(rec['level'], 'INFO');
        fileLines.push(rec);
      }
    }
    const stdoutLines = [...firstRun.stdout, ...secondStdout];
    assert.deepEqual(
      fileLines.map((l) => JSON.stringify(l)).sort(),
      stdoutLines.map((l) => JSON.stringify(l)).sort(),
      'the files hold exactly the lines written to stdout',
    );

    const keysOf = (event: string) => fileLines.filter((l) => l['event'] === event).map((l) => Object.keys(l).sort().join(','));
    const expectKeys = (event: string, fields: string[]) => {
      const keys = keysOf(event);
      assert.ok(keys.length > 0, `${event} was written`);
      for (const k of keys) assert.equal(k, ['timestamp', 'level', 'event', ...fields].sort().join(','), event);
    };
    expectKeys('server_started', ['version', 'rules_count']);
    expectKeys('server_stopped', ['uptime_seconds']);
    expectKeys('rule_created', ['rule_name', 'version', 'source_ip']);
    expectKeys('rule_updated', ['rule_name', 'from_version', 'to_version', 'source_ip']);
    expectKeys('rule_deleted', ['rule_name', 'source_ip']);
    expectKeys('rule_rollback', ['rule_name', 'from_version', 'to_version', 'seq', 'source_ip']);
    expectKeys('rule_executed', ['rule_name', 'duration_us', 'result', 'source_ip']);

    const events = fileLines.map((l) => l['event']);
    const started = fileLines.filter((l) => l['event'] === 'server_started');
    assert.deepEqual(
      started.map((l) => l['rules_count']),
      [0, 2],
    );
    assert.equal(events.filter((e) => e === 'server_stopped').length, 2);
    for (const l of fileLines.filter((x) => x['event'] === 'server_stopped')) assert.ok(Number.isInteger(l['uptime_seconds']));
    assert.equal(events[0], 'server_started');
    assert.equal(events.at(-1), 'server_stopped');
    for (const l of fileLines.filter((x) => 'source_ip' in x)) assert.equal(l['source_ip'], '127.0.0.1');
    assert.equal(events.filter((e) => e === 'rule_updated').length, 5);
    assert.deepEqual(
      fileLines.filter((l) => l['event'] === 'rule_rollback').map((l) => [l['from_version'], l['to_version'], l['seq']]),
      [
        ['5.0.0', '3.0.0', 3],
        ['6.0.0', '4.0.0', 4],
      ],
    );
    assert.deepEqual(
      fileLines.filter((l) => l['event'] === 'rule_deleted').map((l) => l['rule_name']),
      ['temp'],
    );
  });
});

describe('svc-server: start-up and running', () => {
  it('a configuration error exits 2 with a clear message and starts nothing', () => {
    for (const [argv, env, message] of [
      [['--role', 'boss'], {}, /--role must be one of standalone, writer, reader, got "boss"/],
      [['--max-versions', '0'], {}, /--max-versions must be/],
      [[], { SVC_AUDIT_SAMPLE_RATE: '150' }, /SVC_AUDIT_SAMPLE_RATE must be a number from 0 to 100/],
      [['--no-such-flag'], {}, /unknown option '--no-such-flag'/],
    ] as const) {
      const r = spawnSync(process.execPath, [SERVER_BIN, '--http-addr', '127.0.0.1:0', '--disable-grpc', ...argv], {
        env: { PATH: process.env['PATH'] ?? '', ...env },
        encoding: 'utf8',
        timeout: 15_000,
      });
      assert.equal(r.status, 2, `${argv.join(' ')} exits 2; stderr: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /http listening/);
      assert.equal(r.stdout, '', 'no audit line (nothing started)');
    }
  });

  it('without a signal the server keeps running past its shutdown and request timeouts', async () => {
    const server = await startServer(['--disable-grpc', '--shutdown-timeout-secs', '1', '--request-timeout-secs', '1']);
    try {
      // NOTE: a wait, not a timing assertion: the countdown must start at a signal, never at start-up.
      await sleep(2500);
      assert.equal(server.child.exitCode, null);
      assert.equal(server.child.signalCode, null);
      const r = await http(server.url, 'GET', '/healthz/live');
      assert.deepEqual(r.body, { status: 'alive' });
    } finally {
      assert.equal(await server.stop('SIGINT'), 0, 'SIGINT also shuts down cleanly');
    }
  });
});
