/**
 * Decision records end to end (EXTENSIONS.md 4, docs/changing-rules.md), on real server
 * processes, real files and the real `svc` command: `--decision-log DIR` writes one line per
 * execution (HTTP hot path, HTTP fastify path, batch, gRPC) with the id the answer carries
 * (`X-Svc-Decision-Id`, gRPC trailer `svc-decision-id`), masked fields, the caller and the
 * content hash; `svc replay` re-runs the records and finds the outcomes a new version changes
 * (against the current version, and against a candidate through the impact route); a decision
 * dir that cannot be written (a path under a regular file, ENOTDIR) or a full disk (/dev/full,
 * ENOSPC) drops records and counts them in /metrics while the server keeps answering; with
 * `--decision-log-stream` the same records reach the JetStream stream `svc-decisions` of a real
 * nats-server.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { bearer, writeKeysFile, type KeysFile } from '../helpers/auth-fixtures.js';
import { connect } from '../helpers/grpc-client.js';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.js';
import { ROOT, http, startFails, startServer, tempDir, withServer, type ServerProcess } from '../helpers/server-process.js';
import { waitConnected } from '../helpers/sync-cluster.js';
import { loadNatsApi } from '../../src/sync/nats-api.js';

const SVC = join(ROOT, 'dist', 'bin', 'svc.js');

const LOAN = {
  config: { name: 'loan', version: '1.0.0', entry_step: 'age', mask: ['user.ssn', 'cards[*].number'] },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'approve' }], default_next: 'reject' },
    approve: { type: 'terminal', result: { code: 'APPROVE', message: 'approved' }, output: { age: 'user.age' } },
    reject: { type: 'terminal', result: { code: 'REJECT' } },
  },
};

/** LOAN with the age limit moved to `limit`. */
function loanAt(limit: number, version: string): typeof LOAN {
  return {
    config: { ...LOAN.config, version },
    steps: { ...LOAN.steps, age: { ...LOAN.steps.age, branches: [{ condition: `user.age >= ${limit}`, next_step: 'approve' }] } },
  };
}

/** The decision records in `dir` (every daily file), parsed. */
function records(dir: string): Record<string, any>[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith('decisions-'));
  } catch {
    return [];
  }
  return names
    .sort()
    .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n'))
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, any>);
}

/** Waits until `pred` holds (records are written off the request path). */
async function eventually<T>(fn: () => T | Promise<T>, pred: (v: T) => boolean, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The value of one series of /metrics, or undefined. */
async function metric(url: string, series: string): Promise<number | undefined> {
  const res = await fetch(`${url}/metrics`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function svc(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SVC, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('decision records', () => {
  const tmp = tempDir('declog-it-');
  const dir = join(tmp.path, 'decisions');
  let server: ServerProcess;
  let keys: KeysFile;
  let runner: Record<string, string>;
  let editor: Record<string, string>;

  before(async () => {
    keys = writeKeysFile(tmp.path, [
      { id: 'deployer', role: 'editor' },
      { id: 'runner', role: 'executor' },
      { id: 'reviewer', role: 'viewer' },
    ]);
    runner = bearer(keys.keys['runner']!);
    editor = bearer(keys.keys['deployer']!);
    server = await startServer(['--decision-log', dir, '--auth-keys-file', keys.path, '--auth-public-metrics']);
    const put = await http(server.url, 'POST', '/api/v1/rulesets', LOAN, editor);
    assert.equal(put.status, 200, JSON.stringify(put.body));
  });
  after(async () => {
    await server?.stop();
    tmp.remove();
  });

  it('an HTTP execution answers X-Svc-Decision-Id and its record holds the decision, masked, with caller and content hash', async () => {
    const input = { user: { age: 30, ssn: '123-45-6789' }, cards: [{ number: '4111', kind: 'visa' }] };
    const res = await http(server.url, 'POST', '/api/v1/execute/loan', { input }, runner);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['code', 'message', 'output', 'duration_us'], 'no trace in the answer');
    const id = res.headers.get('x-svc-decision-id');
    assert.ok(id, 'the header is there');
    const [rec] = await eventually(
      () => records(dir).filter((r) => r['decision_id'] === id),
      (rs) => rs.length === 1,
      'the record of the execution',
    );
    assert.deepEqual(Object.keys(rec!), [
      'decision_id',
      'timestamp',
      'tenant',
      'ruleset',
      'version',
      'content_hash',
      'input',
      'code',
      'output',
      'path',
      'duration_us',
      'principal',
    ]);
    assert.equal(rec!['tenant'], 'default');
    assert.equal(rec!['ruleset'], 'loan');
    assert.equal(rec!['version'], '1.0.0');
    assert.match(rec!['content_hash'], /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(rec!['input'], { user: { age: 30, ssn: '***' }, cards: [{ number: '***', kind: 'visa' }] });
    assert.equal(rec!['code'], 'APPROVE');
    assert.deepEqual(rec!['output'], { age: 30 });
    assert.equal(rec!['path'], 'age -> approve');
    assert.equal(rec!['duration_us'], res.body.duration_us);
    assert.equal(rec!['principal'], 'runner');
    assert.ok(Math.abs(Date.parse(rec!['timestamp']) - Date.now()) < 60_000);
    assert.match(readdirSync(dir)[0]!, /^decisions-\d{4}-\d{2}-\d{2}\.jsonl$/);
  });

  it('the fastify path (a query string) and a traced request carry the header too', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/loan?via=fastify', { input: { user: { age: 3 } }, trace: true }, runner);
    assert.equal(res.status, 200);
    assert.equal(res.body.trace.path, 'age -> reject');
    const id = res.headers.get('x-svc-decision-id');
    assert.ok(id);
    await eventually(
      () => records(dir).filter((r) => r['decision_id'] === id && r['code'] === 'REJECT'),
      (rs) => rs.length === 1,
      'the record',
    );
  });

  it('a batch answers one id B and its items are recorded as B.0, B.1', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/loan/batch', { inputs: [{ user: { age: 40 } }, { user: { age: 4 } }] }, runner);
    assert.equal(res.status, 200);
    const id = res.headers.get('x-svc-decision-id');
    assert.ok(id);
    const recs = await eventually(
      () => records(dir).filter((r) => String(r['decision_id']).startsWith(`${id}.`)),
      (rs) => rs.length === 2,
      'the batch records',
    );
    assert.deepEqual(
      recs.map((r) => [r['decision_id'], r['code']]),
      [
        [`${id}.0`, 'APPROVE'],
        [`${id}.1`, 'REJECT'],
      ],
    );
  });

  it('a gRPC execution carries the id in trailing metadata svc-decision-id', async () => {
    const client = connect(server.grpcAddress);
    try {
      const trailer = await new Promise<grpc.Metadata>((resolve, reject) => {
        const md = new grpc.Metadata();
        md.set('authorization', runner['authorization']!);
        const fn = (client.raw as unknown as Record<string, Function>)['Execute']!;
        const call = fn.call(client.raw, { name: 'loan', input_json: JSON.stringify({ user: { age: 50 } }) }, md, (err: Error | null) => {
          if (err) reject(err);
        }) as grpc.ClientUnaryCall;
        call.on('status', (s: grpc.StatusObject) => resolve(s.metadata));
      });
      const id = trailer.get('svc-decision-id')[0];
      assert.equal(typeof id, 'string');
      await eventually(
        () => records(dir).filter((r) => r['decision_id'] === id),
        (rs) => rs.length === 1,
        'the gRPC record',
      );
    } finally {
      client.close();
    }
  });

  it('svc replay finds the outcomes a new version changes, and a candidate through the impact route', async () => {
    // Recorded so far: ages 30, 3, 40, 4, 50 (APPROVE, REJECT, APPROVE, REJECT, APPROVE).
    await eventually(
      () => records(dir),
      (rs) => rs.length === 5,
      'five records',
    );
    const copy = join(tmp.path, 'replayed');
    mkdirSync(copy);
    for (const n of readdirSync(dir)) writeFileSync(join(copy, n), readFileSync(join(dir, n)));

    const same = svc(['replay', copy, '--server', server.url], { SVC_TOKEN: keys.keys['runner']! });
    assert.equal(same.status, 0, same.stderr);
    const unchanged = JSON.parse(same.stdout);
    assert.equal(unchanged.total, 5);
    assert.equal(unchanged.changed, 0);

    // Candidate (not stored): limit 35 turns the 30-year-old's APPROVE into REJECT.
    const candidate = join(tmp.path, 'candidate.json');
    writeFileSync(candidate, JSON.stringify(loanAt(35, '2.0.0')));
    // With a candidate, replay asks the impact route, which needs `read`: an executor key is refused.
    const refused = svc(['replay', copy, '--server', server.url, '--candidate', candidate], { SVC_TOKEN: keys.keys['runner']! });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /403|FORBIDDEN|read/);
    const impact = svc(['replay', copy, '--server', server.url, '--candidate', candidate, '--max-batch-size', '2'], { SVC_TOKEN: keys.keys['reviewer']! });
    assert.equal(impact.status, 1, impact.stderr);
    const ir = JSON.parse(impact.stdout);
    assert.equal(ir.total, 5);
    assert.equal(ir.changed, 1);
    assert.deepEqual(ir.transitions, [{ from: 'APPROVE', to: 'REJECT', count: 1 }]);
    assert.deepEqual(ir.examples[0].input, { user: { age: 30, ssn: '***' }, cards: [{ number: '***', kind: 'visa' }] });

    // Stored as the current version: replay against it reports the same change, naming the decision.
    const put = await http(server.url, 'POST', '/api/v1/rulesets', loanAt(35, '2.0.0'), editor);
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const changed = svc(['replay', copy, '--server', server.url, '--token', keys.keys['runner']!]);
    assert.equal(changed.status, 1, changed.stderr);
    const cr = JSON.parse(changed.stdout);
    assert.equal(cr.total, 5);
    assert.equal(cr.changed, 1);
    assert.deepEqual(cr.transitions, [{ from: 'APPROVE', to: 'REJECT', count: 1 }]);
    const recorded = records(copy).find((r) => r['input'].user.age === 30);
    assert.equal(cr.examples[0].decision_id, recorded!['decision_id']);
    assert.equal(cr.rulesets.loan.changed, 1);
    // A new version has another content hash in its records.
    const res = await http(server.url, 'POST', '/api/v1/execute/loan', { input: { user: { age: 1 } } }, runner);
    const id = res.headers.get('x-svc-decision-id');
    const [rec] = await eventually(
      () => records(dir).filter((r) => r['decision_id'] === id),
      (rs) => rs.length === 1,
      'the record of version 2',
    );
    assert.equal(rec!['version'], '2.0.0');
    assert.notEqual(rec!['content_hash'], recorded!['content_hash']);
  });

  it('a server without --decision-log answers no X-Svc-Decision-Id', async () => {
    await withServer(['--disable-grpc'], async (s) => {
      await http(s.url, 'POST', '/api/v1/rulesets', LOAN);
      const res = await http(s.url, 'POST', '/api/v1/execute/loan', { input: { user: { age: 30 } } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-svc-decision-id'), null);
    });
  });
});

describe('decision records on a disk that cannot take them', () => {
  const tmp = tempDir('declog-full-');
  after(() => tmp.remove());

  /** Runs executions and checks they answer while the records are dropped and counted under `reason`. */
  async function dropsCounted(s: ServerProcess, reason: string): Promise<void> {
    const put = await http(s.url, 'POST', '/api/v1/rulesets', LOAN);
    assert.equal(put.status, 200);
    for (let i = 0; i < 20; i++) {
      const res = await http(s.url, 'POST', '/api/v1/execute/loan', { input: { user: { age: i } } });
      assert.equal(res.status, 200, 'the server keeps answering');
      assert.equal(res.body.code, i >= 18 ? 'APPROVE' : 'REJECT');
    }
    const dropped = await eventually(
      () => metric(s.url, `svc_decision_records_dropped_total{reason="${reason}"}`),
      (n) => n === 20,
      `20 records dropped as ${reason}`,
    );
    assert.equal(dropped, 20);
    assert.equal(await metric(s.url, 'svc_decision_records_written_total'), 0);
    await s.waitForLog((l) => l['msg'] === 'decision records dropped: the decision log cannot be written' && l['reason'] === reason);
    assert.equal((await http(s.url, 'GET', '/health')).status, 200);
  }

  it('a decision dir under a regular file (ENOTDIR): records dropped and counted, the server answers', async () => {
    writeFileSync(join(tmp.path, 'file.txt'), 'not a directory');
    await withServer(['--decision-log', join(tmp.path, 'file.txt', 'sub'), '--disable-grpc'], (s) => dropsCounted(s, 'enotdir'));
  });

  it('a full disk (the day files are /dev/full, ENOSPC): records dropped and counted, the server answers', async () => {
    const full = join(tmp.path, 'full');
    mkdirSync(full);
    // Today's and tomorrow's file (the run may cross midnight UTC).
    for (const ms of [Date.now(), Date.now() + 86_400_000]) {
      symlinkSync('/dev/full', join(full, `decisions-${new Date(ms).toISOString().slice(0, 10)}.jsonl`));
    }
    await withServer(['--decision-log', full, '--disable-grpc'], (s) => dropsCounted(s, 'enospc'));
  });
});

describe('decision records to JetStream (--decision-log-stream)', () => {
  const tmp = tempDir('declog-stream-');
  let nats: NatsServer | undefined;
  after(async () => {
    await nats?.dispose();
    tmp.remove();
  });

  it('an instance with sync publishes each record to the stream svc-decisions besides its day file', async () => {
    nats = await startNatsServer();
    const dir = join(tmp.path, 'decisions');
    await withServer(
      ['--role', 'writer', '--sync-url', nats.url, '--decision-log', dir, '--decision-log-stream', '--disable-grpc', '--rules-dir', join(tmp.path, 'rules')],
      async (s) => {
        assert.equal((await http(s.url, 'POST', '/api/v1/rulesets', LOAN)).status, 200);
        await waitConnected(s);
        const ids: string[] = [];
        for (const age of [10, 20, 30]) {
          const res = await http(s.url, 'POST', '/api/v1/execute/loan', { input: { user: { age, ssn: 'secret' } } });
          ids.push(res.headers.get('x-svc-decision-id')!);
        }
        await eventually(
          () => metric(s.url, 'svc_decision_records_published_total'),
          (n) => n === 3,
          'three records published',
        );
        const loaded = await loadNatsApi();
        assert.ok(loaded.ok);
        const nc = await loaded.api.connect({ servers: nats!.url });
        try {
          const jsm = (await loaded.api.jetstreamManager(nc)) as unknown as {
            streams: {
              info(n: string): Promise<{ config: { subjects: string[] }; state: { messages: number } }>;
              getMessage(n: string, q: { seq: number }): Promise<{ subject: string; data: Uint8Array }>;
            };
          };
          const info = await jsm.streams.info('svc-decisions');
          assert.deepEqual(info.config.subjects, ['svc-decisions.>']);
          assert.equal(info.state.messages, 3);
          const published = [];
          for (let seq = 1; seq <= 3; seq++) {
            const m = await jsm.streams.getMessage('svc-decisions', { seq });
            assert.equal(m.subject, 'svc-decisions.default.loan');
            published.push(JSON.parse(new TextDecoder().decode(m.data)) as Record<string, any>);
          }
          assert.deepEqual(
            published.map((r) => r['decision_id']),
            ids,
          );
          assert.deepEqual(published[2]!['input'], { user: { age: 30, ssn: '***' } }, 'masked as in the file');
          // The same lines as the day file.
          assert.deepEqual(published, records(dir));
        } finally {
          await nc.close();
        }
      },
    );
  });

  it('--decision-log-stream without --sync-url is refused at start', async () => {
    const text = await startFails(['--decision-log', join(tmp.path, 'x'), '--decision-log-stream']);
    assert.match(text, /--decision-log-stream requires --decision-log and --sync-url/);
  });
});
