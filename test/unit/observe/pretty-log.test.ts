/**
 * `--log-format pretty`: readable lines, the `ready` record as a banner, the start-up lines the
 * banner repeats left out, and nothing lost when the banner never comes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MEMORY_ONLY_WARNING, buildReadyReport, createLogger, renderBanner, resolveLogFormat, type ReadyReport } from '../../../src/observe/index.js';
import { PrettyLogStream, formatRecord } from '../../../src/observe/pretty-log.js';
import type { ReadyConfig } from '../../../src/observe/banner.js';

const TIME = '2026-11-24T08:15:30.250Z';

function line(level: string, msg: string, fields: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ level, time: TIME, ...fields, msg })}\n`;
}

function sink(): { text: () => string; write: (s: string) => void } {
  let out = '';
  return { text: () => out, write: (s: string) => void (out += s) };
}

const CONFIG: ReadyConfig = {
  role: 'standalone',
  rulesDir: null,
  authKeysFile: null,
  authJwtJwksFile: null,
  watchRules: false,
  watchPoll: false,
  watchPollIntervalMs: 30000,
  syncUrl: null,
  configFile: null,
  grpcTlsCert: null,
};

const FACTS = {
  version: '1.2.3',
  readyMs: 85,
  httpUrl: 'http://127.0.0.1:8080',
  grpcAddress: '127.0.0.1:50051',
  socketPath: null,
  rulesets: 3,
  tenants: null,
  shownSyncUrl: null,
  openDoor: null,
};

const OPEN_DOOR = 'authentication is off: anyone who can reach 0.0.0.0:8080 (HTTP) can read and change rules';

test('formatRecord: time, level, message, then key=value fields (quoted when needed)', () => {
  assert.equal(
    formatRecord({ level: 'warn', time: TIME, msg: 'skipped a rule file', path: 'r.json', reason: 'bad json', n: 2, obj: { a: 1 } }),
    '08:15:30.250 WARN  skipped a rule file path=r.json reason="bad json" n=2 obj={"a":1}\n',
  );
  assert.equal(formatRecord({ level: 'info', time: TIME, msg: 'stopped' }), '08:15:30.250 INFO  stopped\n');
});

test('formatRecord: a multi-line value (a stack) follows its line, indented', () => {
  const text = formatRecord({ level: 'error', time: TIME, msg: 'internal error', code: 'INTERNAL_ERROR', stack: 'Error: boom\n    at f (x.js:1:1)' });
  assert.equal(text, '08:15:30.250 ERROR internal error code=INTERNAL_ERROR\n    Error: boom\n        at f (x.js:1:1)\n');
});

test('formatRecord: colours only when asked', () => {
  assert.ok(!formatRecord({ level: 'warn', msg: 'x' }).includes('\u001b['));
  assert.ok(formatRecord({ level: 'warn', msg: 'x' }, true).includes('\u001b[33mWARN '));
});

test('the ready record becomes the banner; the start-up lines it repeats are left out, the others kept before it', () => {
  const out = sink();
  const stream = new PrettyLogStream({ out });
  stream.write(line('info', 'rules loaded', { loaded: 3, skipped: 1 }));
  stream.write(line('warn', 'skipped a rule file', { path: 'bad.json' }));
  stream.write(line('info', 'http listening', { url: 'http://127.0.0.1:8080' }));
  stream.write(line('info', 'grpc listening', { address: '127.0.0.1:50051' }));
  stream.write(line('warn', OPEN_DOOR, { addresses: ['0.0.0.0:8080'] }));
  assert.equal(out.text(), '', 'held until the banner');
  const report = buildReadyReport(CONFIG, { ...FACTS, openDoor: OPEN_DOOR });
  stream.write(line('info', 'ready', { ...report }));
  stream.write(line('info', 'shutting down', { signal: 'SIGTERM' }));
  const text = out.text();
  assert.ok(!text.includes('rules loaded') && !text.includes('http listening') && !text.includes('grpc listening'), text);
  assert.equal(text.split(OPEN_DOOR).length - 1, 1, 'the open-door warning is shown once, in the banner');
  assert.ok(text.startsWith('08:15:30.250 WARN  skipped a rule file path=bad.json\nsvc-server 1.2.3 ready in 85 ms\n'), text);
  assert.ok(text.endsWith('08:15:30.250 INFO  shutting down signal=SIGTERM\n'), 'lines after the banner are written at once');
  assert.ok(!text.includes('{"'), 'no JSON');
});

test('an error before ready prints the held lines first, then the error', () => {
  const out = sink();
  const stream = new PrettyLogStream({ out });
  stream.write(line('info', 'rules loaded', { loaded: 0 }));
  stream.write(line('error', 'svc-server could not start', { err: 'EADDRINUSE' }));
  assert.equal(out.text(), '08:15:30.250 INFO  rules loaded loaded=0\n08:15:30.250 ERROR svc-server could not start err=EADDRINUSE\n');
});

test('held lines are written when the banner does not come in time, or at flush()', async () => {
  const out = sink();
  const stream = new PrettyLogStream({ out, holdMs: 20 });
  stream.write(line('info', 'broker connecting'));
  assert.equal(out.text(), '');
  await sleep(60);
  assert.equal(out.text(), '08:15:30.250 INFO  broker connecting\n');
  const other = sink();
  const second = new PrettyLogStream({ out: other });
  second.write(line('warn', 'something'));
  second.flush();
  assert.equal(other.text(), '08:15:30.250 WARN  something\n');
});

test('a line that is not JSON passes through unchanged', () => {
  const out = sink();
  new PrettyLogStream({ out }).write('plain text\n');
  assert.equal(out.text(), 'plain text\n');
});

test('buildReadyReport: memory only, auth, sync with a masked broker URL, tenants, TLS', () => {
  const memory = buildReadyReport(CONFIG, FACTS);
  assert.deepEqual(memory.warnings, [MEMORY_ONLY_WARNING]);
  assert.equal(memory.auth, 'off');
  assert.equal(memory.sync, 'off');
  const full = buildReadyReport(
    {
      ...CONFIG,
      role: 'writer',
      rulesDir: '/data/rules',
      authKeysFile: 'keys.json',
      authJwtJwksFile: 'jwks.json',
      watchRules: true,
      watchPoll: true,
      watchPollIntervalMs: 500,
      syncUrl: 'nats://u:p@h:4222',
      configFile: 'svc.yaml',
      grpcTlsCert: 'c.pem',
    },
    { ...FACTS, tenants: 2, shownSyncUrl: 'nats://***@h:4222' },
  );
  assert.deepEqual(full.warnings, []);
  assert.equal(full.auth, 'api keys and jwt');
  assert.equal(full.sync, 'watching the rules dir (polling every 500 ms); broker nats://***@h:4222 as writer');
  assert.equal(full.grpc, '127.0.0.1:50051 (TLS)');
  assert.equal(full.tenants, 2);
  assert.equal(full.config_file, 'svc.yaml');
  assert.match(buildReadyReport({ ...CONFIG, syncUrl: 'nats://h' }, FACTS).sync, /^broker ignored \(standalone/);
});

test('renderBanner: one aligned line per fact and per warning', () => {
  const report: ReadyReport = { ...buildReadyReport(CONFIG, { ...FACTS, httpUrl: 'https://127.0.0.1:8443', socketPath: '/tmp/svc.sock', tenants: 1 }) };
  assert.equal(
    renderBanner(report),
    [
      'svc-server 1.2.3 ready in 85 ms',
      '  HTTPS     https://127.0.0.1:8443',
      '  gRPC      127.0.0.1:50051',
      '  socket    /tmp/svc.sock',
      '  role      standalone',
      '  storage   memory only',
      '  rulesets  3 (1 tenant)',
      '  auth      off',
      '  sync      off',
      '  warning   memory only: rules are lost on exit',
      '',
    ].join('\n'),
  );
});

test('resolveLogFormat: auto follows the terminal, json and pretty are as asked', () => {
  assert.equal(resolveLogFormat('auto', true), 'pretty');
  assert.equal(resolveLogFormat('auto', false), 'json');
  assert.equal(resolveLogFormat('json', true), 'json');
  assert.equal(resolveLogFormat('pretty', false), 'pretty');
});

test('createLogger: the pretty format writes readable lines through pino, json stays JSON', () => {
  const pretty = sink();
  createLogger({ level: 'info', format: 'pretty', destination: pretty }).error({ code: 'X' }, 'failed');
  assert.match(pretty.text(), /^\d\d:\d\d:\d\d\.\d\d\d ERROR failed code=X\n$/);
  const json = sink();
  createLogger({ level: 'info', destination: json }).error({ code: 'X' }, 'failed');
  assert.deepEqual(Object.keys(JSON.parse(json.text()) as object), ['level', 'time', 'code', 'msg']);
});
