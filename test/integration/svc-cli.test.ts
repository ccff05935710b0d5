/**
 * The `svc` command (src/bin/svc.ts, src/cli/): exec, eval and filter answer exactly what a
 * real server answers for the same rule and request (durations aside); push uploads every rule
 * file to a real server with authentication on and stops at the first refusal, saying why;
 * pull writes back what the server holds. Usage errors exit 2, refusals 1.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, writeKeysFile, type KeysFile } from '../helpers/auth-fixtures.js';
import { ROOT, http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const SVC = join(ROOT, 'dist', 'bin', 'svc.js');

/** Runs `svc args` and returns its exit status and output. */
function svc(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SVC, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A JSON answer without its timings (they differ from run to run). */
function untimed(text: string): unknown {
  return JSON.parse(text, (k, v: unknown) => (k === 'duration_us' ? 0 : v));
}

const LOAN = {
  config: { name: 'loan', version: '1.0.0', entry_step: 'age' },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'amount' }], default_next: 'reject' },
    amount: { type: 'decision', branches: [{ condition: 'order.amount <= limit', next_step: 'approve' }], default_next: 'review' },
    approve: { type: 'terminal', result: { code: 'APPROVE', message: 'approved' }, output: { total: 'order.amount * 2' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
    reject: { type: 'terminal', result: { code: 'REJECT' } },
  },
};

describe('svc command', () => {
  const tmp = tempDir('svc-cli-');
  let server: ServerProcess;
  let keys: KeysFile;
  const rules = join(tmp.path, 'rules');

  before(async () => {
    keys = writeKeysFile(tmp.path, [
      { id: 'deployer', role: 'editor' },
      { id: 'runner', role: 'executor' },
    ]);
    server = await startServer(['--auth-keys-file', keys.path]);
    mkdirSync(rules);
    writeFileSync(join(rules, 'a-loan.json'), JSON.stringify(LOAN));
    writeFileSync(join(rules, 'b-tiny.yaml'), 'config: {name: tiny, entry_step: done}\nsteps:\n  done: {type: terminal, result: {code: DONE}}\n');
  });
  after(async () => {
    await server?.stop();
    tmp.remove();
  });

  it('exec answers what POST /api/v1/execute/:name answers, with and without trace', async () => {
    const deployer = bearer(keys.keys['deployer'] as string);
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', LOAN, deployer)).status, 200);
    for (const [input, trace] of [
      [{ user: { age: 30 }, order: { amount: 5 }, limit: 10 }, false],
      [{ user: { age: 30 }, order: { amount: 50 }, limit: 10 }, true],
      [{ user: { age: 3 } }, true],
    ] as const) {
      const fromServer = await fetch(`${server.url}/api/v1/execute/loan`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...deployer },
        body: JSON.stringify({ input, trace }),
      });
      const local = svc(['exec', join(rules, 'a-loan.json'), '--input', JSON.stringify(input), ...(trace ? ['--trace'] : [])]);
      assert.equal(local.status, 0, local.stderr);
      assert.deepEqual(untimed(local.stdout), untimed(await fromServer.text()));
    }
  });

  it('exec of an input that fails answers the catalog body, exit 1', () => {
    const file = join(tmp.path, 'double.json');
    writeFileSync(
      file,
      JSON.stringify({ config: { name: 'double', entry_step: 'd' }, steps: { d: { type: 'terminal', result: { code: 'D' }, output: { x: 'a * 2' } } } }),
    );
    const r = svc(['exec', file, '--input', '{"a": "text"}']);
    assert.equal(r.status, 1);
    assert.equal((JSON.parse(r.stdout) as { code: string }).code, 'INTERNAL_ERROR');
    assert.match(r.stderr, /^svc exec: INTERNAL_ERROR: /);
  });

  it('eval and filter answer what the server answers', async () => {
    const runner = bearer(keys.keys['runner'] as string);
    const evalBody = { expression: 'user.age * 2 > 30 && user.country in ["US"]', context: { user: { age: 20, country: 'US' } } };
    const e = svc(['eval', evalBody.expression, '--context', JSON.stringify(evalBody.context)]);
    assert.equal(e.status, 0, e.stderr);
    const fromServer = await http(server.url, 'POST', '/api/v1/eval', evalBody, runner);
    assert.deepEqual(untimed(e.stdout), fromServer.body);

    for (const format of ['sql', 'json', 'mongo']) {
      const request = { known_input: { limit: 100 }, target_results: ['APPROVE', 'REVIEW'], format };
      const f = svc(['filter', join(rules, 'a-loan.json'), '--known', '{"limit": 100}', '--target', 'APPROVE,REVIEW', '--format', format]);
      assert.equal(f.status, 0, f.stderr);
      assert.deepEqual(JSON.parse(f.stdout), (await http(server.url, 'POST', '/api/v1/rulesets/loan/filter', request, runner)).body, format);
    }
  });

  it('push uploads every rule file with the token, and pull writes them back', async () => {
    const pushed = svc(['push', rules, '--server', server.url], { SVC_TOKEN: keys.keys['deployer'] as string });
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.match(pushed.stdout, /a-loan\.json: updated loan/);
    assert.match(pushed.stdout, /b-tiny\.yaml: created tiny/);

    const out = join(tmp.path, 'pulled');
    const pulled = svc(['pull', out, '--server', server.url, '--token', keys.keys['deployer'] as string]);
    assert.equal(pulled.status, 0, pulled.stderr);
    assert.deepEqual(readdirSync(out).sort(), ['loan.json', 'tiny.json']);
    const held = await http(server.url, 'GET', '/api/v1/rulesets/tiny', undefined, bearer(keys.keys['deployer'] as string));
    assert.deepEqual(JSON.parse(readFileSync(join(out, 'tiny.json'), 'utf8')), held.body);
  });

  it('push stops at the first refusal and says why; a key without write is refused', () => {
    const dir = join(tmp.path, 'bad');
    mkdirSync(dir);
    writeFileSync(join(dir, '1-ok.json'), JSON.stringify({ ...LOAN, config: { ...LOAN.config, name: 'first' } }));
    writeFileSync(join(dir, '2-bad.json'), JSON.stringify({ config: { name: 'second', entry_step: 'nowhere' }, steps: {} }));
    writeFileSync(join(dir, '3-never.json'), JSON.stringify({ ...LOAN, config: { ...LOAN.config, name: 'third' } }));
    const r = svc(['push', dir, '--server', server.url, '--token', keys.keys['deployer'] as string]);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /1-ok\.json: created first/);
    assert.match(r.stderr, /2-bad\.json refused: 400 BAD_REQUEST/);
    assert.match(r.stderr, /config\.entry_step/);
    assert.doesNotMatch(r.stdout + r.stderr, /3-never/);

    const viewer = svc(['push', dir, '--server', server.url, '--token', keys.keys['runner'] as string]);
    assert.equal(viewer.status, 1);
    assert.match(viewer.stderr, /403 FORBIDDEN/);
    const none = svc(['pull', join(tmp.path, 'x'), '--server', server.url]);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /401 UNAUTHENTICATED/);
  });

  it('usage errors exit 2; an unreachable server or a missing file exit 1', () => {
    assert.equal(svc(['exec', join(rules, 'a-loan.json')]).status, 2, 'no --input');
    assert.equal(svc(['exec', join(rules, 'a-loan.json'), '--input', '{']).status, 2, 'bad JSON');
    assert.equal(svc(['frobnicate']).status, 2);
    const gone = svc(['push', rules, '--server', 'http://127.0.0.1:1']);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /cannot reach http:\/\/127\.0\.0\.1:1/);
    assert.equal(svc(['exec', join(tmp.path, 'missing.json'), '--input', '{}']).status, 1);
  });
});
