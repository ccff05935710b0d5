/**
 * `svc_compilation_duration_seconds` (SPEC.md "GET /metrics") is observed at every
 * ruleset compile, whatever started it: files loaded at start (JSON and YAML), API writes
 * (create, update, rollback) and files the watcher loads. Counted through `GET /metrics` of
 * the real built server.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseExposition, value, type Exposition } from '../unit/observe/exposition.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { waitFor } from './http-support.js';

const COUNT = 'svc_compilation_duration_seconds_count';

function ruleset(name: string, version: string): Record<string, unknown> {
  return {
    config: { name, version, entry_step: 'end' },
    steps: { end: { type: 'terminal', result: { code: 'DONE' } } },
  };
}

describe('svc_compilation_duration_seconds', () => {
  let server: ServerProcess;
  let dir: { path: string; remove: () => void };

  const scrape = async (): Promise<Exposition> => {
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    return parseExposition(await res.text());
  };
  /** The compilation count of `name`, 0 when it has no series. */
  const compiled = async (name: string): Promise<number> => {
    const exp = await scrape();
    return exp.samples.some((s) => s.name === COUNT && s.labels['ruleset'] === name) ? value(exp, COUNT, { ruleset: name }) : 0;
  };

  before(async () => {
    dir = tempDir('svc-compile-metrics-');
    writeFileSync(join(dir.path, 'from-json.json'), JSON.stringify(ruleset('from-json', '1.0.0')));
    writeFileSync(
      join(dir.path, 'from-yaml.yaml'),
      ['config:', '  name: from-yaml', '  entry_step: end', 'steps:', '  end:', '    type: terminal', '    result:', '      code: DONE', ''].join('\n'),
    );
    server = await startServer(['--rules-dir', dir.path, '--disable-grpc']);
  });

  after(async () => {
    await server?.stop();
    dir?.remove();
  });

  it('is a histogram labelled by ruleset, observed once per file loaded at start', async () => {
    const exp = await scrape();
    assert.equal(exp.types.get('svc_compilation_duration_seconds'), 'histogram');
    assert.equal(value(exp, COUNT, { ruleset: 'from-json' }), 1);
    assert.equal(value(exp, COUNT, { ruleset: 'from-yaml' }), 1);
    assert.equal(value(exp, 'svc_compilation_duration_seconds_bucket', { ruleset: 'from-json', le: '+Inf' }), 1);
    assert.ok(value(exp, 'svc_compilation_duration_seconds_sum', { ruleset: 'from-json' }) > 0);
  });

  it('is observed at every API write: create, update and rollback', async () => {
    assert.equal(await compiled('api'), 0);
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', ruleset('api', '1.0.0'))).body.status, 'created');
    assert.equal(await compiled('api'), 1);
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', ruleset('api', '1.1.0'))).body.status, 'updated');
    assert.equal(await compiled('api'), 2);
    const versions = await http(server.url, 'GET', '/api/v1/rulesets/api/versions');
    const seq = versions.body.versions[0].seq as number;
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets/api/rollback', { seq })).body.status, 'rolled_back');
    assert.equal(await compiled('api'), 3);
  });
});

describe('svc_compilation_duration_seconds with --watch-rules', () => {
  it('is observed when the watcher loads a new file', async () => {
    const dir = tempDir('svc-compile-watch-');
    const server = await startServer(['--rules-dir', dir.path, '--watch-rules', '--disable-grpc']);
    try {
      writeFileSync(join(dir.path, 'dropped.json'), JSON.stringify(ruleset('dropped', '1.0.0')));
      await waitFor(async () => (await http(server.url, 'GET', '/api/v1/rulesets/dropped')).status === 200, 'the watcher loads dropped.json');
      const exp = parseExposition(await (await fetch(`${server.url}/metrics`)).text());
      assert.ok(value(exp, COUNT, { ruleset: 'dropped' }) >= 1);
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});
