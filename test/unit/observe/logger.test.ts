import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createLogger, silentLogger, type Logger } from '../../../src/observe/index.js';
import type { Logger as OneLogger } from '../../../src/log.js';

/** A destination that keeps every line. */
function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test('lines are JSON with a level word, an ISO time, fields and msg', async () => {
  const out = capture();
  const logger = createLogger({ level: 'info', destination: out.stream });
  logger.info({ port: 8080 }, 'listening');
  logger.warn('careful');
  await new Promise((resolve) => setImmediate(resolve));
  const [first, second] = out.lines();
  assert.equal(first?.level, 'info');
  assert.match(String(first?.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(first?.port, 8080);
  assert.equal(first?.msg, 'listening');
  assert.equal(second?.level, 'warn');
  assert.equal(second?.msg, 'careful');
  assert.equal('pid' in (first ?? {}), false, 'no pid/hostname noise by default');
});

test('the level filters: info drops debug, error keeps only errors, debug keeps all', async () => {
  for (const [level, expected] of [
    ['info', ['error', 'warn', 'info']],
    ['error', ['error']],
    ['debug', ['error', 'warn', 'info', 'debug']],
    ['warn', ['error', 'warn']],
  ] as const) {
    const out = capture();
    const logger = createLogger({ level, destination: out.stream });
    logger.error('e');
    logger.warn('w');
    logger.info('i');
    logger.debug('d');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      out.lines().map((l) => l.level),
      expected,
      level,
    );
  }
});

test("base fields appear on every line beside the line's own fields", async () => {
  const out = capture();
  const logger: Logger = createLogger({ level: 'info', destination: out.stream, base: { service: 'svc-server' } });
  logger.info({ n: 1 }, 'loaded');
  await new Promise((resolve) => setImmediate(resolve));
  const [line] = out.lines();
  assert.equal(line?.service, 'svc-server');
  assert.equal(line?.n, 1);
});

test('by default lines go to stderr, never stdout', () => {
  const loggerModule = fileURLToPath(new URL('../../../src/observe/logger.ts', import.meta.url));
  const script = `import { createLogger } from ${JSON.stringify(loggerModule)}; createLogger({ level: 'info' }).info({ a: 1 }, 'to-stderr');`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, '');
  const line = JSON.parse(result.stderr.trim()) as Record<string, unknown>;
  assert.equal(line.msg, 'to-stderr');
  assert.equal(line.a, 1);
});

test('silentLogger drops everything; it and the pino logger are the one Logger type', () => {
  const logger: Logger = silentLogger();
  const port: OneLogger = logger;
  port.info({ a: 1 }, 'x');
  logger.error('y');
  const pinoPort: OneLogger = createLogger({ level: 'error', destination: capture().stream });
  assert.ok(pinoPort);
});
