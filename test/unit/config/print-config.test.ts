/**
 * `svc-server --print-config`: every key with its source, secrets masked by construction (the
 * `secret` column of the flag table, and URL user parts), and the YAML form read back as a
 * config file gives the same configuration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, ConfigExit, FLAGS, loadConfigOrExit, parseConfig, type CliIo, type Config } from '../../../src/config/index.js';

const OPTIONS = { version: '0.0.0-test', randomBytes: (n: number) => new Uint8Array(n), cwd: '/srv/app' };

/** Runs `--print-config` and returns what it prints. */
function printed(argv: string[], env: Record<string, string | undefined> = {}, files: Record<string, string> = {}): string {
  try {
    parseConfig(argv, env, { ...OPTIONS, readFile: (path) => files[path] ?? '' });
  } catch (err) {
    if (err instanceof ConfigExit) {
      assert.equal(err.exitCode, 0);
      return err.output;
    }
    throw err;
  }
  throw new Error('--print-config did not exit');
}

type Entry = { value: unknown; source: string };

function printedJson(argv: string[], env: Record<string, string | undefined> = {}, files: Record<string, string> = {}): Record<string, Entry> {
  return JSON.parse(printed([...argv, '--print-config=json'], env, files)) as Record<string, Entry>;
}

/**
 * A name that suggests a secret value: a password, token, secret, credential or key content.
 * Path options (a key *file*) are not secrets: their content is, and it is never printed.
 */
const SECRET_NAME = /(pass(word|phrase)?|passwd|token|secret|credential|(^|-)(api-|private-)?key)$/;

test('every flag whose name suggests a secret is marked secret in the flag table', () => {
  const unmarked = FLAGS.filter((f) => SECRET_NAME.test(f.name) && f.path !== true && f.secret !== true).map((f) => f.name);
  assert.deepEqual(unmarked, []);
  assert.ok(
    FLAGS.some((f) => f.secret),
    'the broker password and token are secrets',
  );
  assert.ok(SECRET_NAME.test('sync-password') && SECRET_NAME.test('sync-token') && SECRET_NAME.test('auth-api-key'), 'the pattern catches the usual names');
});

test('every secret flag, set by flag, env or file, prints as *** and its value appears nowhere', () => {
  for (const def of FLAGS.filter((f) => f.secret)) {
    const key = def.name.replaceAll('-', '_');
    const value = `${def.example}-XYZZY`;
    const pair = def.name === 'sync-password' ? ['--sync-user', 'svc'] : def.name === 'sync-user' ? ['--sync-password', 'p'] : [];
    for (const [argv, env, files] of [
      [[...pair, `--${def.name}=${value}`], {}, {}],
      [pair, { [def.env]: value }, {}],
      [['--config', 'svc.yaml', ...pair], {}, { 'svc.yaml': `${key}: ${value}\n` }],
    ] as Array<[string[], Record<string, string>, Record<string, string>]>) {
      const json = printedJson(argv, env, files);
      assert.equal(json[key]!.value, '***', `${def.name} is masked`);
      const yaml = printed([...argv, '--print-config'], env, files);
      assert.match(yaml, new RegExp(`^${key}: "\\*\\*\\*" +# (flag|env|file), secret$`, 'm'));
      assert.ok(!yaml.includes('XYZZY') && !JSON.stringify(json).includes('XYZZY'), `${def.name}'s value is not printed`);
    }
  }
});

test('credentials in URLs are masked, the rest of the URL is shown', () => {
  const json = printedJson(['--sync-url', 'nats://alice:pw@10.0.0.1:4222,nats://bob:pw2@10.0.0.2:4222', '--otlp-endpoint', 'http://u:p@collector:4318']);
  assert.equal(json['sync_url']!.value, 'nats://***@10.0.0.1:4222,nats://***@10.0.0.2:4222');
  assert.equal(json['otlp_endpoint']!.value, 'http://***@collector:4318');
});

test('every option is printed under its file key with where its value came from', () => {
  const json = printedJson(['--config', 'svc.yaml', '--max-batch-size', '7'], { SVC_MAX_VERSIONS: '3' }, { 'svc.yaml': 'rules_dir: ./rules\nrole: writer\n' });
  assert.deepEqual(
    Object.keys(json),
    FLAGS.map((f) => f.name.replaceAll('-', '_')),
  );
  assert.deepEqual(json['config'], { value: 'svc.yaml', source: 'flag' });
  assert.deepEqual(json['max_batch_size'], { value: 7, source: 'flag' });
  assert.deepEqual(json['max_versions'], { value: 3, source: 'env' });
  assert.deepEqual(json['rules_dir'], { value: '/srv/app/rules', source: 'file' });
  assert.deepEqual(json['role'], { value: 'writer', source: 'file' });
  assert.deepEqual(json['http_addr'], { value: '0.0.0.0:8080', source: 'default' });
  assert.deepEqual(json['port'], { value: null, source: 'default' });
  assert.deepEqual(json['uds_mode'], { value: '0600', source: 'default' });
});

test('the YAML form has a source comment on every line and reads back as the same configuration', () => {
  const argv = [
    '--max-batch-size',
    '7',
    '--rules-dir',
    '/data/rules',
    '--http-addr',
    '[::1]:9000',
    '--signature-trusted-keys',
    'a2V5MQ==,a2V5Mg==',
    '--uds-mode',
    '0660',
  ];
  const yaml = printed([...argv, '--print-config']);
  assert.match(yaml, /^# config file: none$/m);
  assert.match(yaml, /^max_batch_size: 7 +# flag$/m);
  assert.match(yaml, /^instance_id: null +# default: random/m);
  for (const def of FLAGS.filter((f) => f.name !== 'config')) {
    assert.match(yaml, new RegExp(`^${def.name.replaceAll('-', '_')}: .* # (flag|env|file|default)`, 'm'), `${def.name} is printed`);
  }
  const original = parseConfig(argv, {}, OPTIONS);
  const readBack = parseConfig(['--config', 'printed.yaml'], {}, { ...OPTIONS, readFile: () => yaml });
  assert.deepEqual({ ...readBack, configFile: null }, original);
});

test('an invalid configuration is reported instead of printed', () => {
  assert.throws(
    () => parseConfig(['--print-config', '--max-batch-size', '0'], {}, OPTIONS),
    (err: unknown) => err instanceof ConfigError && err.message === '--max-batch-size must be a positive integer, got "0"',
  );
  assert.throws(
    () => parseConfig(['--print-config=xml'], {}, OPTIONS),
    (err: unknown) => err instanceof ConfigError && /--print-config/.test(err.message) && /yaml, json/.test(err.message),
  );
});

test('loadConfigOrExit prints the configuration to stdout and exits 0 without returning a config', () => {
  let out = '';
  let err = '';
  let code: number | undefined;
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    exit: (c: number): never => {
      code = c;
      throw new Error('exit');
    },
  };
  let config: Config | undefined;
  assert.throws(() => (config = loadConfigOrExit(['--print-config=json', '-p', '1234'], { SVC_SYNC_TOKEN: 't0p' }, io)), /exit/);
  assert.equal(config, undefined);
  assert.equal(code, 0);
  assert.equal(err, '');
  const json = JSON.parse(out) as Record<string, Entry>;
  assert.deepEqual(json['port'], { value: 1234, source: 'flag' });
  assert.deepEqual(json['sync_token'], { value: '***', source: 'env' });
});
