/**
 * `--config FILE` (EXTENSIONS.md 5 "Config file"): keys, typed values, precedence against flags,
 * variables and defaults (each pair), path resolution, and the errors that name the file and key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, FLAGS, parseConfig, type Config } from '../../../src/config/index.js';
import { nearest } from '../../../src/config/config-file.js';

const CWD = '/srv/app';

/** Parses with in-memory files (path as given → text). */
function parse(argv: string[], env: Record<string, string | undefined>, files: Record<string, string>): Config {
  return parseConfig(argv, env, {
    version: '0.0.0-test',
    randomBytes: (n) => new Uint8Array(n),
    cwd: CWD,
    readFile: (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: 'ENOENT' });
      return text;
    },
  });
}

/** Parses with `--config svc.yaml` holding `yaml`. */
function withFile(yaml: string, argv: string[] = [], env: Record<string, string | undefined> = {}): Config {
  return parse(['--config', 'svc.yaml', ...argv], env, { 'svc.yaml': yaml });
}

function fails(run: () => unknown, message: string | RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

test('YAML values are typed like the flag text: numbers, booleans, enums, addresses, lists, octal modes', () => {
  const c = withFile(
    [
      'max_batch_size: 500',
      'metrics_enabled: false',
      'debug_mode: yes',
      'role: READER',
      'http_addr: 127.0.0.1:9000',
      'audit_sample_rate: 12.5',
      'uds_mode: 0660',
      'signature_trusted_keys: [a2V5MQ==, a2V5Mg==]',
      'service_name: "rules eu"',
    ].join('\n'),
  );
  assert.equal(c.maxBatchSize, 500);
  assert.equal(c.metricsEnabled, false);
  assert.equal(c.debugMode, true);
  assert.equal(c.role, 'reader');
  assert.deepEqual(c.httpAddr, { host: '127.0.0.1', port: 9000 });
  assert.equal(c.auditSampleRate, 12.5);
  assert.equal(c.udsMode, 0o660, '0660 is read as written (octal), not as the YAML integer 660');
  assert.deepEqual(c.signatureTrustedKeys, ['a2V5MQ==', 'a2V5Mg==']);
  assert.equal(c.serviceName, 'rules eu');
  assert.equal(c.configFile, 'svc.yaml');
});

test('a JSON file is read the same way', () => {
  const c = parse(
    ['--config', 'svc.json'],
    {},
    { 'svc.json': '{"max_batch_size": 500, "metrics_enabled": false, "signature_trusted_keys": "a2V5MQ==,a2V5Mg=="}' },
  );
  assert.equal(c.maxBatchSize, 500);
  assert.equal(c.metricsEnabled, false);
  assert.deepEqual(c.signatureTrustedKeys, ['a2V5MQ==', 'a2V5Mg==']);
});

test('an empty file, and keys set to null, leave the defaults', () => {
  const defaults = parse([], {}, {});
  assert.deepEqual({ ...withFile(''), configFile: null }, defaults);
  assert.deepEqual({ ...withFile('# nothing yet\n'), configFile: null }, defaults);
  assert.deepEqual({ ...withFile('rules_dir:\nmax_versions: null\n'), configFile: null }, defaults);
});

test('precedence, each pair: file > default, env > file, flag > file, flag > env', () => {
  assert.equal(withFile('max_batch_size: 500').maxBatchSize, 500, 'file beats default');
  assert.equal(withFile('max_batch_size: 500', [], { SVC_MAX_BATCH_SIZE: '600' }).maxBatchSize, 600, 'env beats file');
  assert.equal(withFile('max_batch_size: 500', ['--max-batch-size', '700']).maxBatchSize, 700, 'flag beats file');
  assert.equal(withFile('max_batch_size: 500', ['--max-batch-size', '700'], { SVC_MAX_BATCH_SIZE: '600' }).maxBatchSize, 700, 'flag beats env');
  assert.equal(withFile('max_batch_size: 500', [], { SVC_MAX_BATCH_SIZE: '' }).maxBatchSize, 500, 'an empty variable counts as unset');
  assert.equal(withFile('metrics_enabled: false', ['--metrics-enabled']).metricsEnabled, true, 'a boolean flag alone beats the file');
});

test('--port and --grpc-port apply over an address from a weaker source only', () => {
  assert.deepEqual(withFile('http_addr: 10.0.0.1:80', ['-p', '8000']).httpAddr, { host: '10.0.0.1', port: 8000 });
  assert.deepEqual(withFile('http_addr: 10.0.0.1:80', [], { SVC_PORT: '8000' }).httpAddr, { host: '10.0.0.1', port: 8000 });
  assert.deepEqual(withFile('port: 8000', ['--http-addr', '127.0.0.1:9000']).httpAddr, { host: '127.0.0.1', port: 9000 });
  assert.deepEqual(withFile('grpc_port: 7000', [], { SVC_GRPC_ADDR: '127.0.0.1:6000' }).grpcAddr, { host: '127.0.0.1', port: 6000 });
});

test('SVC_CONFIG names the file; --config beats it', () => {
  const files = { 'a.yaml': 'max_batch_size: 1', 'b.yaml': 'max_batch_size: 2' };
  assert.equal(parse([], { SVC_CONFIG: 'a.yaml' }, files).maxBatchSize, 1);
  assert.equal(parse(['--config', 'b.yaml'], { SVC_CONFIG: 'a.yaml' }, files).maxBatchSize, 2);
});

test('relative paths in the file resolve against its directory; absolute ones and flag paths stay', () => {
  const files = { 'conf/svc.yaml': 'rules_dir: ./rules\naudit_dir: /var/log/svc\nauth_keys_file: ../keys.json\n' };
  const c = parse(['--config', 'conf/svc.yaml'], {}, files);
  assert.equal(c.rulesDir, '/srv/app/conf/rules');
  assert.equal(c.auditDir, '/var/log/svc');
  assert.equal(c.authKeysFile, '/srv/app/keys.json');
  assert.equal(parse(['--config', 'conf/svc.yaml', '--rules-dir', './mine'], {}, files).rulesDir, './mine', 'a flag path stays as given');
  assert.equal(parse(['--config', '/etc/svc/svc.yaml'], {}, { '/etc/svc/svc.yaml': 'rules_dir: rules' }).rulesDir, '/etc/svc/rules');
  assert.equal(withFile('writer_addr: ./not-a-path').writerAddr, './not-a-path', 'only path options are resolved');
});

test('a bad value is an error naming the file and the key', () => {
  fails(() => withFile('max_batch_size: abc'), 'svc.yaml: max_batch_size must be a positive integer, got "abc"');
  fails(() => withFile('max_batch_size: 1e3'), 'svc.yaml: max_batch_size must be a positive integer, got "1e3"');
  fails(() => withFile('max_batch_size: -5'), 'svc.yaml: max_batch_size must be a positive integer, got "-5"');
  fails(() => withFile('metrics_enabled: maybe'), 'svc.yaml: metrics_enabled must be a boolean (true, false, 1, 0, yes, no), got "maybe"');
  fails(() => withFile('role: boss'), 'svc.yaml: role must be one of standalone, writer, reader, got "boss"');
  fails(() => withFile('rules_dir: ""'), 'svc.yaml: rules_dir must not be empty');
  fails(() => withFile('rules_dir: {a: 1}'), 'svc.yaml: rules_dir must be a single value, got a mapping');
  fails(() => withFile('rules_dir: [a, b]'), 'svc.yaml: rules_dir must be a single value, got a list');
  fails(() => withFile('signature_trusted_keys: ["a,b"]'), 'svc.yaml: signature_trusted_keys must be a list of plain values without commas');
});

test('a combination error names the file key it came from', () => {
  fails(() => withFile('watch_rules: true'), 'svc.yaml: watch_rules requires --rules-dir (or SVC_RULES_DIR)');
});

test('unknown keys are all reported, each with a did-you-mean when one is near', () => {
  fails(
    () => withFile('max_bach_size: 3\nrule-dir: x\nlisten: 1\n'),
    'svc.yaml: unknown key "max_bach_size" (did you mean "max_batch_size"?); unknown key "rule-dir" (did you mean "rules_dir"?); unknown key "listen"',
  );
  fails(() => withFile('max-batch-size: 3'), 'svc.yaml: unknown key "max-batch-size" (keys are snake_case: did you mean "max_batch_size"?)');
  fails(() => withFile('config: other.yaml'), /svc\.yaml: key "config" cannot be set in a config file/);
});

test('a file that is not a mapping, not valid YAML/JSON or not readable is an error naming it', () => {
  fails(() => withFile('- a\n- b\n'), 'svc.yaml: must be a mapping of option keys to values (max_batch_size: 500)');
  fails(() => withFile('a: 1\na: 2\n'), /^svc\.yaml: not valid YAML or JSON: Map keys must be unique at line 2, column 1/);
  fails(() => parse(['--config', 'bad.json'], {}, { 'bad.json': '{"max_batch_size": 1,' }), /^bad\.json: not valid YAML or JSON: /);
  fails(() => parse(['--config', 'missing.yaml'], {}, {}), '--config missing.yaml: cannot read the config file: no such file');
  fails(() => parse([], { SVC_CONFIG: 'missing.yaml' }, {}), 'SVC_CONFIG missing.yaml: cannot read the config file: no such file');
});

test('a real file on disk is read, relative to the working directory', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'svc.yaml'), 'max_versions: 7\nrules_dir: ./rules\n');
  const c = parseConfig(['--config', 'svc.yaml'], {}, { cwd: dir });
  assert.equal(c.maxVersions, 7);
  assert.equal(c.rulesDir, join(dir, 'rules'));
});

test('nearest: within two edits and shorter than the word, else nothing', () => {
  assert.equal(nearest('max_bach_size', ['max_batch_size', 'max_steps']), 'max_batch_size');
  assert.equal(nearest('roel', ['role', 'port']), 'role');
  assert.equal(nearest('listen', ['role', 'port']), undefined);
  assert.equal(nearest('x', ['p']), undefined);
});

test('every option whose name says it is a file or directory is marked path (resolved against the config file)', () => {
  // NOTE: a switch (`--disable-http-fast-path`) names a feature, not a file.
  const unmarked = FLAGS.filter((f) => /(dir|path|file|cert|key|ca)$/.test(f.name) && f.kind.type !== 'bool' && f.path !== true).map((f) => f.name);
  assert.deepEqual(unmarked, []);
  assert.deepEqual(
    FLAGS.filter((f) => f.path === true && f.kind.type !== 'text').map((f) => f.name),
    [],
    'paths are text options',
  );
});
