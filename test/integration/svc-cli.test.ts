/**
 * The `svc` command (src/bin/svc.ts, src/cli/): exec, eval and filter answer exactly what a
 * real server answers for the same rule and request (durations aside); push uploads every rule
 * file to a real server with authentication on and stops at the first refusal, saying why;
 * pull writes back what the server holds; test reports what POST .../test reports, with JUnit
 * and a coverage floor; lint fails on problems, and on warnings when strict. Usage errors exit
 * 2, refusals 1.
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

  it('test: the same results and coverage as POST .../test, a JUnit report, --min-coverage', async () => {
    const dir = join(tmp.path, 'tested');
    mkdirSync(dir);
    const tested = {
      ...LOAN,
      config: { ...LOAN.config, name: 'tested' },
      tests: [
        { name: 'adult in limit', input: { user: { age: 30 }, order: { amount: 5 }, limit: 10 }, expect: { code: 'APPROVE', output: { total: 10 } } },
        { name: 'minor', input: { user: { age: 3 } }, expect: { code: 'REJECT', path: 'age -> reject' } },
      ],
    };
    writeFileSync(join(dir, 'tested.json'), JSON.stringify(tested));
    const junit = join(tmp.path, 'junit.xml');
    const r = svc(['test', dir, '--junit', junit]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const deployer = bearer(keys.keys['deployer'] as string);
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', tested, deployer)).status, 200);
    const fromServer = (await http(server.url, 'POST', '/api/v1/rulesets/tested/test', {}, deployer)).body as {
      passed: number;
      failed: number;
      coverage: Record<'steps' | 'branches' | 'terminals', { covered: number; total: number }>;
    };
    const c = fromServer.coverage;
    assert.match(r.stdout, new RegExp(`${fromServer.passed} passed, ${fromServer.failed} failed`));
    assert.match(
      r.stdout,
      new RegExp(
        `steps ${c.steps.covered}/${c.steps.total}, branches ${c.branches.covered}/${c.branches.total} .*terminals ${c.terminals.covered}/${c.terminals.total}`,
      ),
    );
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, /<testsuite name="tested" tests="2" failures="0"/);
    assert.match(xml, /<testcase name="adult in limit" classname="tested"\/>/);

    // 3 of 4 branches (with defaults) are taken: 75%.
    const under = svc(['test', dir, '--min-coverage', '80']);
    assert.equal(under.status, 1);
    assert.match(under.stdout, /branch coverage 75\.0% is under --min-coverage 80; not covered: steps\.amount\.default_next/);
    assert.equal(svc(['test', dir, '--min-coverage', '75']).status, 0);
    assert.equal(svc(['test', dir, '--min-coverage', 'lots']).status, 2);

    // A failing test: exit 1, the failure in the report and in the JUnit file.
    writeFileSync(
      join(dir, 'tested.json'),
      JSON.stringify({ ...tested, tests: [{ name: 'wrong', input: { user: { age: 3 } }, expect: { code: 'APPROVE' } }] }),
    );
    const failing = svc(['test', dir, '--junit', junit]);
    assert.equal(failing.status, 1);
    assert.match(failing.stdout, /failed: wrong\n {4}expected \{"code":"APPROVE"\}\n {4}actual {3}\{"code":"REJECT"/);
    assert.match(readFileSync(junit, 'utf8'), /<failure message="expected APPROVE, got REJECT">/);
  });

  it('lint: problems fail, warnings fail only with --strict or config.strict', () => {
    const dir = join(tmp.path, 'lint');
    mkdirSync(dir);
    const dead = {
      config: { name: 'dead', entry_step: 'age' },
      steps: {
        age: {
          type: 'decision',
          branches: [
            { condition: 'user.age >= 18', next_step: 'ok' },
            { condition: 'user.age >= 21', next_step: 'ok' },
          ],
          default_next: 'no',
        },
        ok: { type: 'terminal', result: { code: 'OK' } },
        no: { type: 'terminal', result: { code: 'NO' } },
      },
    };
    writeFileSync(join(dir, 'dead.json'), JSON.stringify(dead));
    const warned = svc(['lint', dir]);
    assert.equal(warned.status, 0);
    assert.match(warned.stdout, /dead\.json: warning DEAD_BRANCH steps\.age\.branches\[1\]: /);
    assert.equal(svc(['lint', dir, '--strict']).status, 1);
    writeFileSync(join(dir, 'dead.json'), JSON.stringify({ ...dead, config: { ...dead.config, strict: true } }));
    assert.equal(svc(['lint', dir]).status, 1, 'config.strict: the server would refuse it');
    writeFileSync(
      join(dir, 'typo.json'),
      JSON.stringify({ ...dead, config: { name: 'typo', entry_step: 'age' }, steps: { ...dead.steps, age: { ...dead.steps.age, defualt_next: 'no' } } }),
    );
    const typo = svc(['lint', join(dir, 'typo.json')]);
    assert.equal(typo.status, 1);
    assert.match(typo.stdout, /typo\.json: error steps\.age\.defualt_next: unknown key \(did you mean 'default_next'\?\)/);
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

describe('svc command: a rule file runs with the rulesets and datasets next to it', () => {
  const examples = join(ROOT, 'examples');

  it('test runs loan with the risk it calls and the high_risk dataset; the data/ directory is not a rule file', () => {
    const r = svc(['test', join(examples, 'rules')]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /loan\.json \(loan\): 5 passed, 0 failed/);
    assert.match(r.stdout, /risk\.json \(risk\): 3 passed, 0 failed/);
    assert.match(r.stdout, /^2 files, 8 tests passed, 0 failed$/m);
  });

  it('exec and filter of loan resolve its call to risk, which reads @high_risk', () => {
    const input = JSON.parse(readFileSync(join(examples, 'inputs', 'approve.json'), 'utf8')).input as { applicant: Record<string, unknown> };
    const approved = svc(['exec', join(examples, 'rules', 'loan.json'), '--input', JSON.stringify(input)]);
    assert.equal(approved.status, 0, approved.stdout + approved.stderr);
    assert.equal((untimed(approved.stdout) as { code: string }).code, 'APPROVE');
    // A country of the high_risk dataset makes risk answer HIGH, so loan does not approve.
    const risky = { ...input, applicant: { ...input.applicant, country: 'KP' } };
    const refused = svc(['exec', join(examples, 'rules', 'loan.json'), '--input', JSON.stringify(risky)]);
    assert.equal(refused.status, 0, refused.stdout + refused.stderr);
    assert.notEqual((untimed(refused.stdout) as { code: string }).code, 'APPROVE');
    const filter = svc(['filter', join(examples, 'rules', 'loan.json'), '--known', '{"loan":{"amount":5000}}', '--target', 'APPROVE']);
    assert.equal(filter.status, 0, filter.stdout + filter.stderr);
    assert.match((JSON.parse(filter.stdout) as { filter: string }).filter, /applicant_country NOT IN \('KP'/);
  });

  it('diff compares behaviour with the callee found next to the files; a missing callee is a warning', () => {
    const changed = svc(['diff', join(examples, 'rules', 'loan.json'), join(examples, 'changes', 'loan-v2.json'), '--json']);
    assert.equal(changed.status, 1, changed.stderr);
    assert.equal(changed.stderr, '');
    const behavior = (JSON.parse(changed.stdout) as { behavior: { equivalent: boolean; regions: Array<{ from_code: string; to_code: string }> } }).behavior;
    assert.equal(behavior.equivalent, false);
    assert.ok(
      behavior.regions.some((r) => r.from_code === 'REVIEW' && r.to_code === 'APPROVE'),
      JSON.stringify(behavior.regions),
    );
    // Alone in a directory, loan's call to risk cannot resolve: said on stderr.
    const alone = tempDir('svc-cli-alone-');
    writeFileSync(join(alone.path, 'loan.json'), readFileSync(join(examples, 'rules', 'loan.json')));
    writeFileSync(join(alone.path, 'loan-v2.json'), readFileSync(join(examples, 'changes', 'loan-v2.json')));
    const blind = svc(['diff', join(alone.path, 'loan.json'), join(alone.path, 'loan-v2.json')]);
    assert.equal(blind.status, 1);
    assert.match(blind.stderr, /warning: 'risk' is called but not found next to the files/);
  });
});
