/**
 * The built `svc-server` as a child process with a real config file: the file's values are
 * honoured (a relative rules dir resolves against the file's directory), a flag beats the file,
 * `--print-config` masks a secret and starts nothing, and the log is a readable banner with
 * `--log-format pretty` or under a pseudo-terminal (`script` from util-linux) while it stays
 * JSON lines when stderr is not a terminal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_BIN, http, startServer, tempDir } from '../helpers/server-process.js';

const RULESET = { config: { name: 'c', version: '1', entry_step: 'OK' }, steps: { OK: { type: 'terminal', result: { code: 'OK' } } } };

/** A temp dir with `conf/svc.yaml` holding `yaml`; the server runs with the dir as cwd. */
function configDir(yaml: string): { dir: string; file: string; remove: () => void } {
  const tmp = tempDir('svc-config-');
  mkdirSync(join(tmp.path, 'conf'));
  const file = join(tmp.path, 'conf', 'svc.yaml');
  writeFileSync(file, yaml);
  return { dir: tmp.path, file, remove: tmp.remove };
}

test('a server started with --config honours the file: role, limits, and a rules dir relative to the file', async (t) => {
  const { dir, file, remove } = configDir('role: reader\nrules_dir: ./rules\nmetrics_enabled: false\n');
  t.after(remove);
  const server = await startServer(['--config', file]);
  try {
    const write = await http(server.url, 'POST', '/api/v1/rulesets', RULESET);
    assert.equal(write.status, 409, 'role: reader from the file refuses writes');
    const health = await http(server.url, 'GET', '/health');
    assert.equal(health.body.storage.rules_dir, join(dir, 'conf', 'rules'), 'rules_dir resolves against the file, not the cwd');
    assert.equal((await http(server.url, 'GET', '/metrics')).status, 404, 'metrics_enabled: false from the file');
    const ready = await server.waitForLog((l) => l['msg'] === 'ready');
    assert.equal(ready['config_file'], file);
    assert.equal(ready['role'], 'reader');
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('a flag beats the file: --role standalone makes the same file writable, into the file-relative rules dir', async (t) => {
  const { dir, file, remove } = configDir('role: reader\nrules_dir: ./rules\n');
  t.after(remove);
  const server = await startServer(['--config', file, '--role', 'standalone'], { env: { SVC_CONFIG: '/nonexistent/ignored.yaml' } });
  try {
    assert.equal((await http(server.url, 'POST', '/api/v1/rulesets', RULESET)).status, 200);
    assert.ok(existsSync(join(dir, 'conf', 'rules', 'c.json')), 'the rule file is written under conf/rules');
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('a bad value in the file stops the start with exit 2 and names the file and key', (t) => {
  const { file, remove } = configDir('max_batch_size: lots\n');
  t.after(remove);
  const run = spawnSync(process.execPath, [SERVER_BIN, '--config', file], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' }, timeout: 20_000 });
  assert.equal(run.status, 2);
  assert.equal(run.stderr, `svc-server: ${file}: max_batch_size must be a positive integer, got "lots"\n(see svc-server --help)\n`);
});

test('--print-config prints every key with its source, masks the broker password, and starts nothing', (t) => {
  const { file, remove } = configDir('sync_user: svc\nsync_url: nats://127.0.0.1:4222\nmax_batch_size: 500\n');
  t.after(remove);
  const run = spawnSync(process.execPath, [SERVER_BIN, '--config', file, '--max-batch-size', '600', '--print-config'], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', SVC_SYNC_PASSWORD: 'hunter2-secret' },
    timeout: 20_000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '', 'no log: the server did not start');
  assert.ok(!run.stdout.includes('hunter2'), 'the password is not printed');
  assert.match(run.stdout, /^sync_password: "\*\*\*" +# env, secret$/m);
  assert.match(run.stdout, /^sync_user: svc +# file$/m);
  assert.match(run.stdout, /^max_batch_size: 600 +# flag$/m);
  assert.match(run.stdout, /^max_versions: 10 +# default$/m);
  assert.match(run.stdout, new RegExp(`^# config file: ${file.replaceAll('.', '\\.')} \\(from flag\\)$`, 'm'));
});

/** Spawns the server with stderr as raw text; resolves once `done(stderr)` holds. */
function spawnRaw(command: string, args: string[], done: (text: string) => boolean, env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', ...env }, detached: true });
  let stderr = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  const ready = new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`not ready within 20 s; stderr:\n${stderr}\nstdout:\n${stdout}`)), 20_000);
    const check = (): void => {
      if (done(stderr + stdout)) {
        clearTimeout(timer);
        res();
      }
    };
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      check();
    });
    child.stdout!.on('data', check);
    void exited.then(() => rej(new Error(`exited early; stderr:\n${stderr}\nstdout:\n${stdout}`)));
  });
  return {
    ready,
    stderr: () => stderr,
    stdout: () => stdout,
    /** SIGTERM to the process group this test started (the server, or `script` and its server). */
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      return exited;
    },
  };
}

const ANSI = /\u001b\[[0-9;]*m/g;

test('--log-format pretty: a readable banner with the real address, and no JSON log lines', async () => {
  const server = spawnRaw(process.execPath, [SERVER_BIN, '--http-addr', '127.0.0.1:0', '--grpc-addr', '127.0.0.1:0', '--log-format', 'pretty'], (text) =>
    text.includes('warning   memory only: rules are lost on exit'),
  );
  try {
    await server.ready;
    const text = server.stderr();
    const url = /^ {2}HTTP {6}(http:\/\/127\.0\.0\.1:\d+)$/m.exec(text)?.[1];
    assert.ok(url, text);
    assert.match(text, /^svc-server \S+ ready in \d+ ms$/m);
    assert.match(text, /^ {2}gRPC {6}127\.0\.0\.1:\d+$/m);
    assert.match(text, /^ {2}storage {3}memory only$/m);
    assert.match(text, /^ {2}auth {6}off$/m);
    assert.ok(!text.includes('{"level"'), 'no JSON on stderr');
    assert.ok(!text.includes('http listening'), 'the banner replaces the listening lines');
    assert.equal((await http(url, 'GET', '/health')).status, 200, 'the address in the banner is the one that listens');
  } finally {
    assert.equal(await server.stop(), 0);
  }
  assert.match(server.stderr(), /^\d\d:\d\d:\d\d\.\d{3} INFO {2}shutting down signal=SIGTERM timeout_secs=30$/m, 'later lines are readable too');
});

test('by default, with stderr not a terminal, the log stays JSON lines and ends start-up with a ready line', async () => {
  const server = await startServer([]);
  try {
    const ready = await server.waitForLog((l) => l['msg'] === 'ready');
    assert.equal(ready['level'], 'info');
    assert.equal(ready['http'], server.url);
    assert.equal(ready['grpc'], server.grpcAddress);
    assert.equal(ready['rulesets'], 0);
    assert.equal(ready['auth'], 'off');
    assert.deepEqual(ready['warnings'], ['memory only: rules are lost on exit']);
    assert.ok(typeof ready['ready_ms'] === 'number');
    assert.ok(!server.output().includes('ready in'), 'no banner');
  } finally {
    await server.stop();
  }
});

test('auto under a pseudo-terminal (script from util-linux): the banner, no JSON log lines', async (t) => {
  assert.equal(spawnSync('script', ['--version']).status, 0, 'this test needs `script` (util-linux) to give the server a terminal');
  const tmp = tempDir('svc-tty-');
  t.after(tmp.remove);
  const pidFile = join(tmp.path, 'server.pid');
  // NOTE: the server runs in the terminal's own session, where a signal to `script` does not
  // reach it (and SIGHUP only reloads credentials): it writes its pid and is stopped by it.
  const serverCommand = [process.execPath, SERVER_BIN, '--http-addr', '127.0.0.1:0', '--grpc-addr', '127.0.0.1:0'].map((a) => `'${a}'`).join(' ');
  const command = `echo $$ > '${pidFile}'; exec ${serverCommand}`;
  const server = spawnRaw('script', ['-qec', command, '/dev/null'], (text) => text.replace(ANSI, '').includes('warning   memory only'));
  try {
    await server.ready;
    const text = server.stdout().replace(ANSI, '');
    assert.match(text, /svc-server \S+ ready in \d+ ms/);
    assert.match(text, / {2}HTTP {6}http:\/\/127\.0\.0\.1:\d+/);
    assert.ok(!text.includes('{"level"'), 'no JSON log lines on a terminal');
    assert.ok(server.stdout().includes('\u001b['), 'colours on a terminal');
  } finally {
    if (existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    await server.stop();
  }
});
