/**
 * `svc diff OLD NEW` (src/cli/commands.ts `diffCommand`, EXTENSIONS.md 4): offline structural
 * changes between two rule files (JSON or YAML), run as a real child process. Its `--json`
 * answer is the one a real server's `POST /api/v1/rulesets/:name/diff` gives for the same two
 * documents. Exit 0: no change; 1: changes; 2: unreadable file, invalid document, usage.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT, http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const SVC = join(ROOT, 'dist', 'bin', 'svc.js');

function svc(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SVC, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const OLD = {
  config: { name: 'loan', version: '1.0.0', entry_step: 'age' },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'approve' }], default_next: 'reject' },
    approve: { type: 'terminal', result: { code: 'APPROVE' } },
    reject: { type: 'terminal', result: { code: 'REJECT' } },
  },
};

const OLD_YAML = `config: {name: loan, version: "1.0.0", entry_step: age}
steps:
  age:
    type: decision
    branches:
      - {condition: "user.age >= 18", next_step: approve}
    default_next: reject
  reject: {type: terminal, result: {code: REJECT}}
  approve: {type: terminal, result: {code: APPROVE}}
`;

const NEW = {
  config: { name: 'loan', version: '1.1.0', entry_step: 'age' },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'user.age >= 21', next_step: 'approve' }], default_next: 'review' },
    approve: { type: 'terminal', result: { code: 'APPROVE' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
  },
};

describe('svc diff', () => {
  const tmp = tempDir('svc-diff-');
  const file = (name: string, text: string): string => {
    const path = join(tmp.path, name);
    writeFileSync(path, text);
    return path;
  };
  let oldJson: string;
  let oldYaml: string;
  let newJson: string;
  before(() => {
    oldJson = file('old.json', JSON.stringify(OLD));
    oldYaml = file('old.yaml', OLD_YAML);
    newJson = file('new.json', JSON.stringify(NEW));
  });
  after(() => tmp.remove());

  it('the same rules (JSON and YAML, keys in another order): exit 0', () => {
    const r = svc(['diff', oldJson, oldYaml]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'no structural changes\nbehavior: equivalent (exact)\n');
    const json = svc(['diff', oldYaml, oldJson, '--json']);
    assert.equal(json.status, 0);
    assert.deepEqual(JSON.parse(json.stdout), { changes: [], behavior: { equivalent: true, exact: true, regions: [], truncated: false } });
  });

  it('changes: one line each, exit 1', () => {
    const r = svc(['diff', oldYaml, newJson]);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(
      r.stdout,
      [
        '~ config.version: "1.0.0" -> "1.1.0"',
        '~ steps.age.branches[0].condition: "user.age >= 18" -> "user.age >= 21"',
        '~ steps.age.default_next: "reject" -> "review"',
        '- steps.reject: {"type":"terminal","result":{"code":"REJECT"}}',
        '+ steps.review: {"type":"terminal","result":{"code":"REVIEW"}}',
        '5 structural changes',
        'behavior: 2 regions with different codes (exact)',
        '',
      ].join('\n'),
    );
  });

  it('--json is the answer of the server diff route for the same documents', async () => {
    let server: ServerProcess | undefined;
    try {
      server = await startServer([]);
      assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', OLD)).status, 200);
      const fromServer = await http(server.url, 'POST', '/api/v1/rulesets/loan/diff', { from: 'current', to: NEW });
      assert.equal(fromServer.status, 200);
      const local = svc(['diff', oldJson, newJson, '--json']);
      assert.equal(local.status, 1, local.stderr);
      assert.deepEqual(JSON.parse(local.stdout), fromServer.body);
    } finally {
      await server?.stop();
    }
  });

  it('exit 2: an invalid document (its problems on stderr), a missing file, a missing argument', () => {
    const broken = file('broken.json', JSON.stringify({ ...OLD, config: { ...OLD.config, entry_step: 'nowhere' } }));
    const invalid = svc(['diff', oldJson, broken]);
    assert.equal(invalid.status, 2);
    assert.match(invalid.stderr, /broken\.json: invalid ruleset:\n {2}config\.entry_step: /);
    assert.equal(invalid.stdout, '');
    const missing = svc(['diff', oldJson, join(tmp.path, 'nope.json')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /nope\.json/);
    const notJson = svc(['diff', file('bad.json', '{"config": '), oldJson]);
    assert.equal(notJson.status, 2);
    assert.equal(svc(['diff', oldJson]).status, 2);
  });
});
