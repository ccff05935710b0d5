/**
 * Walks the flag table so that a new option without env variable, doc, help line, docs entry,
 * config-file key or Config field breaks a test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, FLAGS, FLAG_GROUPS, envNameOf, helpText, parseConfig, type Config, type FlagDef } from '../../../src/config/index.js';

const FIXED_BYTES = (size: number): Uint8Array => new Uint8Array(size);

/** Config files of these tests, by path (a missing one reads as empty). */
let files: Record<string, string> = {};
const FILE_DIR = '/etc/svc-test';

function parse(argv: string[], env: Record<string, string | undefined> = {}): Config {
  return parseConfig(argv, env, { version: '0.0.0-test', randomBytes: FIXED_BYTES, readFile: (path) => files[path] ?? '', cwd: FILE_DIR });
}

/** Parses with a config file holding `{<key>: value}` (JSON, one of the two file formats). */
function parseWithFile(argv: string[], env: Record<string, string | undefined>, entries: Record<string, string>): Config {
  files = { 'svc.json': JSON.stringify(entries) };
  try {
    return parse(['--config', 'svc.json', ...argv], env);
  } finally {
    files = {};
  }
}

/** Options some flags need to be valid at all (flags, and env for the flag under test). */
interface Prerequisite {
  readonly argv: string[];
  readonly env: Record<string, string>;
}
const PREREQUISITES: Record<string, Prerequisite> = {
  'watch-rules': { argv: ['--rules-dir', 'r'], env: {} },
  'grpc-tls-cert': { argv: ['--grpc-tls-key', 'k.pem'], env: { SVC_GRPC_TLS_CERT: 'base.pem' } },
  'grpc-tls-key': { argv: ['--grpc-tls-cert', 'c.pem'], env: { SVC_GRPC_TLS_KEY: 'base.pem' } },
  'signature-require': { argv: ['--signature-enabled'], env: {} },
  'http-tls-cert': { argv: ['--http-tls-key', 'k.pem'], env: { SVC_HTTP_TLS_CERT: 'base.pem' } },
  'http-tls-key': { argv: ['--http-tls-cert', 'c.pem'], env: { SVC_HTTP_TLS_KEY: 'base.pem' } },
  'tls-client-ca': { argv: ['--http-tls-cert', 'c.pem', '--http-tls-key', 'k.pem', '--disable-grpc'], env: {} },
  'sync-user': { argv: ['--sync-password', 'p'], env: { SVC_SYNC_USER: 'base' } },
  'sync-password': { argv: ['--sync-user', 'u'], env: { SVC_SYNC_PASSWORD: 'base' } },
  'auth-jwt-issuer': { argv: ['--auth-jwt-jwks-file', 'j.json'], env: {} },
  'auth-jwt-audience': { argv: ['--auth-jwt-jwks-file', 'j.json'], env: {} },
  'decision-log-stream': { argv: ['--decision-log', 'd', '--sync-url', 'nats://127.0.0.1:4222'], env: {} },
};
const NONE: Prerequisite = { argv: [], env: {} };

/** An invalid value for each kind (null: the kind accepts any text). */
const INVALID: Record<FlagDef['kind']['type'], string | null> = {
  bool: 'maybe',
  int: 'abc',
  number: 'abc',
  enum: 'nope',
  pattern: '!!',
  url: 'nope',
  address: 'nope',
  text: null,
  list: null,
};

const docs = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
const help = helpText('0.0.0-test');

test('names, env variables and short flags are unique', () => {
  const names = FLAGS.map((f) => f.name);
  const envs = FLAGS.map((f) => f.env);
  const shorts = FLAGS.flatMap((f) => (f.short ? [f.short] : []));
  assert.equal(new Set(names).size, names.length);
  assert.equal(new Set(envs).size, envs.length);
  assert.equal(new Set(shorts).size, shorts.length);
});

for (const def of FLAGS) {
  const { argv: prereq, env: baseEnv } = PREREQUISITES[def.name] ?? NONE;

  test(`--${def.name}: env name, doc, group`, () => {
    assert.equal(def.env, envNameOf(def.name));
    assert.match(def.name, /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
    assert.ok(def.doc.length > 10 && def.doc.endsWith('.'), 'doc is a sentence');
    assert.ok(FLAG_GROUPS.includes(def.group));
    assert.notEqual(def.example, def.default, 'example differs from the default');
  });

  test(`--${def.name}: the example changes the config, by flag and by env alike`, () => {
    const baseline = parse(prereq, baseEnv);
    const byFlag = parse([...prereq, `--${def.name}=${def.example}`], baseEnv);
    const byEnv = parse(prereq, { ...baseEnv, [def.env]: def.example });
    assert.notDeepEqual(byFlag, baseline);
    assert.deepEqual(byEnv, byFlag);
    if (def.short) assert.deepEqual(parse([...prereq, `-${def.short}`, def.example], baseEnv), byFlag);
  });

  if (def.name !== 'config') {
    test(`--${def.name}: the example in a config file (key ${def.name.replaceAll('-', '_')}) sets the same value as the flag`, () => {
      const key = def.name.replaceAll('-', '_');
      // The variable of the flag under test would beat the file: left out here.
      const env = Object.fromEntries(Object.entries(baseEnv).filter(([name]) => name !== def.env));
      const byFile = parseWithFile(prereq, env, { [key]: def.example });
      // NOTE: a relative path in a file resolves against the file's directory (here FILE_DIR).
      const expected = def.path ? resolve(FILE_DIR, def.example) : def.example;
      const byFlag = parse(['--config', 'svc.json', ...prereq, `--${def.name}=${expected}`], env);
      assert.deepEqual(byFile, byFlag);
      assert.notDeepEqual(byFile, parse(['--config', 'svc.json', ...prereq], baseEnv));
      if (def.default !== null) {
        assert.deepEqual(
          parseWithFile([...prereq, `--${def.name}=${def.default}`], env, { [key]: def.example }),
          parse(['--config', 'svc.json', ...prereq], env),
          'the flag beats the file',
        );
      }
    });
  }

  if (def.default !== null) {
    test(`--${def.name}: a flag at its default beats the env example`, () => {
      assert.deepEqual(parse([...prereq, `--${def.name}=${def.default}`], { ...baseEnv, [def.env]: def.example }), parse(prereq, baseEnv));
    });
  }

  const invalid = def.kind.type === 'text' ? '' : INVALID[def.kind.type];
  if (invalid !== null) {
    test(`--${def.name}: an invalid value is a ConfigError naming the flag or the variable`, () => {
      assert.throws(
        () => parse([...prereq, `--${def.name}=${invalid}`], baseEnv),
        (err: unknown) => {
          return err instanceof ConfigError && err.message.startsWith(`--${def.name} must `);
        },
      );
      if (invalid !== '') {
        assert.throws(
          () => parse(prereq, { ...baseEnv, [def.env]: invalid }),
          (err: unknown) => {
            return err instanceof ConfigError && err.message.startsWith(`${def.env} must `);
          },
        );
      }
    });
  }

  test(`--${def.name}: listed in --help and in docs/configuration.md`, () => {
    assert.ok(help.includes(`--${def.name} `), 'help has the flag');
    assert.ok(help.includes(`env: ${def.env})`), 'help has the env variable');
    const row = docs.split('\n').find((line) => line.startsWith(`| \`--${def.name}\``) || line.startsWith(`| \`-${def.short}\`, \`--${def.name}\``));
    assert.ok(row, `docs table has a row for --${def.name}`);
    assert.ok(row.includes(`\`${def.env}\``), 'docs row has the env variable');
    const shownDefault = def.default ?? def.defaultText ?? 'none';
    assert.ok(row.includes(shownDefault), `docs row shows the default ${shownDefault}`);
  });
}

test('every Config field is set by some flag', () => {
  const baseline = parse([]) as unknown as Record<string, unknown>;
  const touched = new Set<string>();
  for (const def of FLAGS) {
    const { argv: prereq, env: baseEnv } = PREREQUISITES[def.name] ?? NONE;
    const before = parse(prereq, baseEnv) as unknown as Record<string, unknown>;
    const after = parse([...prereq, `--${def.name}=${def.example}`], baseEnv) as unknown as Record<string, unknown>;
    for (const key of Object.keys(baseline)) {
      if (JSON.stringify(after[key]) !== JSON.stringify(before[key])) touched.add(key);
    }
  }
  assert.deepEqual(
    Object.keys(baseline).filter((k) => !touched.has(k)),
    [],
  );
});

test('docs mention no flag that the table lacks', () => {
  const known = new Set(FLAGS.map((f) => f.name));
  const mentioned = [...docs.matchAll(/`--(?:no-)?([a-z][a-z0-9-]*)/g)].map((m) => m[1] as string);
  const actions = new Set(['help', 'version', 'print-config']);
  assert.deepEqual([...new Set(mentioned.filter((n) => !known.has(n) && !actions.has(n)))], []);
});
