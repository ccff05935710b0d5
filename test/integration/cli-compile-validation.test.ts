/**
 * svc-compile refuses a ruleset the server would refuse (EXTENSIONS.md 2): the built binary in
 * a child process, real files in a temp dir; exit 1, every problem on its own line, nothing
 * written. A valid ruleset with metadata and tests compiles, and its tests are in the `.svc`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT, tempDir } from '../helpers/server-process.js';
import { decodeRuleFile } from '../../src/signing/rule-file.js';
import { initSvcCodec } from '../../src/signing/svc-format.js';

const BIN = join(ROOT, 'dist', 'bin', 'svc-compile.js');

function compile(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const RULE = {
  config: { name: 'loan', entry_step: 'age', metadata: { owner: 'risk' } },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'applicant.age >= 18', next_step: 'ok' }], default_next: 'no' },
    ok: { type: 'terminal', result: { code: 'APPROVED' } },
    no: { type: 'terminal', result: { code: 'REJECTED' } },
  },
  tests: [{ name: 'adult', input: { applicant: { age: 30 } }, expect: { code: 'APPROVED' } }],
};

describe('svc-compile validates the ruleset', () => {
  const tmp = tempDir('svc-compile-strict-');
  after(() => tmp.remove());

  it('a valid ruleset with metadata and tests compiles; the tests are kept in the .svc', async () => {
    writeFileSync(join(tmp.path, 'good.json'), JSON.stringify(RULE));
    const r = compile(['-i', 'good.json'], tmp.path);
    assert.equal(r.status, 0, r.stderr);
    await initSvcCodec();
    const doc = decodeRuleFile('good.svc', readFileSync(join(tmp.path, 'good.svc')));
    assert.deepEqual(doc['tests'], RULE.tests);
  });

  it('an invalid ruleset exits 1 with one line per problem and writes nothing', () => {
    const bad = structuredClone(RULE) as any;
    bad.steps.age.defualt_next = 'no';
    delete bad.steps.age.default_next;
    bad.config.owner = 'me';
    bad.steps.ok.result = {};
    writeFileSync(join(tmp.path, 'bad.yaml'), JSON.stringify(bad));
    const r = compile(['-i', 'bad.yaml'], tmp.path);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      'svc-compile: bad.yaml: invalid ruleset (3 problems); refusing to compile',
      'bad.yaml: steps.ok.result.code: required',
      'bad.yaml: config.owner: unknown key',
      "bad.yaml: steps.age.defualt_next: unknown key (did you mean 'default_next'?)",
    ]);
    assert.equal(existsSync(join(tmp.path, 'bad.svc')), false);
  });
});
