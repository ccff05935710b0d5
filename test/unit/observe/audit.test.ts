import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, AuditSampler } from '../../../src/observe/index.js';
import type { ServiceAudit, ServiceSampler } from '../../../src/service/ports.js';

/** Collects what is written to "stdout". */
function sink(): { write(s: string): boolean; lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (s: string) => (lines.push(s), true) };
}

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0, 123); // 2024-05-01T12:00:00.123Z

test('a line is exactly {timestamp, level, event, ...fields} in that order, newline-terminated', () => {
  const out = sink();
  const audit = new AuditLog({ stdout: out, now: () => T0 });
  audit.write('rule_created', { rule_name: 'loan', version: '1.0.0', source_ip: '10.0.0.1' });
  assert.deepEqual(out.lines, [
    '{"timestamp":"2024-05-01T12:00:00.123Z","level":"INFO","event":"rule_created","rule_name":"loan","version":"1.0.0","source_ip":"10.0.0.1"}\n',
  ]);
});

test('fields cannot override timestamp, level or event', () => {
  const out = sink();
  const audit = new AuditLog({ stdout: out, now: () => T0 });
  audit.write('server_started', { event: 'fake', level: 'DEBUG', timestamp: 'never', version: '1' });
  assert.equal(out.lines[0], '{"timestamp":"2024-05-01T12:00:00.123Z","level":"INFO","event":"server_started","version":"1"}\n');
});

test('values JSON cannot write do not lose the line', () => {
  const out = sink();
  const audit = new AuditLog({ stdout: out, now: () => T0 });
  audit.write('x', { big: 10n });
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  audit.write('y', { circular });
  assert.deepEqual(JSON.parse(out.lines[0] as string), { timestamp: '2024-05-01T12:00:00.123Z', level: 'INFO', event: 'x', big: '10' });
  const second = JSON.parse(out.lines[1] as string) as Record<string, unknown>;
  assert.equal(second.event, 'y');
  assert.match(String(second.fields_error), /circular/i);
});

test('with an audit dir, stdout and the UTC-dated file both get the line; the dir is created', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'nested', 'audit');
  const out = sink();
  // 23:30 on 30 April in UTC-5 is already 1 May in UTC: the file is named by the UTC date.
  const audit = new AuditLog({ dir, stdout: out, now: () => Date.UTC(2024, 4, 1, 4, 30) });
  audit.write('server_started', { version: '1', rules_count: 0 });
  audit.write('server_stopped', { uptime_seconds: 5 });
  await audit.close();
  assert.deepEqual(readdirSync(dir), ['audit-2024-05-01.jsonl']);
  const file = readFileSync(join(dir, 'audit-2024-05-01.jsonl'), 'utf8');
  assert.equal(file, out.lines.join(''));
  assert.equal(file.split('\n').length, 3);
});

test('the file rotates when the UTC day changes, and appends to an existing day file', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'audit-2024-05-01.jsonl'), '{"old":true}\n');
  const clock = { t: Date.UTC(2024, 4, 1, 23, 59, 59, 999) };
  const audit = new AuditLog({ dir, stdout: sink(), now: () => clock.t });
  audit.write('a', {});
  clock.t += 1; // midnight UTC
  audit.write('b', {});
  clock.t += 1000;
  audit.write('c', {});
  clock.t += 24 * 3600 * 1000;
  audit.write('d', {});
  await audit.close();
  assert.deepEqual(readdirSync(dir).sort(), ['audit-2024-05-01.jsonl', 'audit-2024-05-02.jsonl', 'audit-2024-05-03.jsonl']);
  const events = (name: string): unknown[] =>
    readFileSync(join(dir, name), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event?: string }).event ?? 'old');
  assert.deepEqual(events('audit-2024-05-01.jsonl'), ['old', 'a']);
  assert.deepEqual(events('audit-2024-05-02.jsonl'), ['b', 'c']);
  assert.deepEqual(events('audit-2024-05-03.jsonl'), ['d']);
});

test('close flushes; writes after close still reach stdout but not the file', async (t) => {
  const dir = tempDir(t);
  const out = sink();
  const audit = new AuditLog({ dir, stdout: out, now: () => T0 });
  for (let i = 0; i < 1000; i++) audit.write('rule_executed', { i });
  await audit.close();
  assert.equal(readFileSync(join(dir, 'audit-2024-05-01.jsonl'), 'utf8').split('\n').length, 1001);
  audit.write('late', {});
  assert.equal(out.lines.length, 1001);
  await audit.close();
  assert.equal(readFileSync(join(dir, 'audit-2024-05-01.jsonl'), 'utf8').split('\n').length, 1001);
});

test('an unusable audit dir does not throw: stdout keeps every line, the failure is logged once per day file', async (t) => {
  const root = tempDir(t);
  const notADir = join(root, 'file');
  writeFileSync(notADir, 'x');
  const errors: unknown[] = [];
  const out = sink();
  const clock = { t: T0 };
  const audit = new AuditLog({
    dir: notADir,
    stdout: out,
    now: () => clock.t,
    logger: { error: (fields: object) => errors.push(fields) },
    retryMs: 1000,
  });
  audit.write('a', {});
  audit.write('b', {});
  clock.t += 5000;
  audit.write('c', {});
  await audit.close();
  assert.equal(out.lines.length, 3);
  assert.equal(errors.length, 1);
  assert.equal((errors[0] as { dir: string }).dir, notADir);
});

test('a stream error is caught, logged once, and the file retried after retryMs', async (t) => {
  const dir = tempDir(t);
  // A directory where the day file should be: open fails asynchronously with EISDIR.
  const blocked = join(dir, 'audit-2024-05-01.jsonl');
  mkdirSync(blocked);
  const errors: unknown[] = [];
  let logged: () => void = () => {};
  const firstError = new Promise<void>((resolve) => (logged = resolve));
  const logger = {
    error: (f: object) => {
      errors.push(f);
      logged();
    },
  };
  const clock = { t: T0 };
  const audit = new AuditLog({ dir, stdout: sink(), now: () => clock.t, logger, retryMs: 1000 });
  audit.write('a', {});
  await firstError;
  audit.write('b', {}); // within retryMs: not retried
  rmSync(blocked, { recursive: true });
  clock.t += 2000;
  audit.write('c', {}); // retried: works now
  await audit.close();
  assert.equal(errors.length, 1);
  assert.match(String((errors[0] as { err: string }).err), /EISDIR|illegal operation/i);
  const lines = readFileSync(blocked, 'utf8').trim().split('\n');
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { event: string }).event),
    ['c'],
  );
});

test('sampler: rate 100 always, 0 never, whatever the random source says', () => {
  const always = new AuditSampler(100, () => 0.999999);
  const never = new AuditSampler(0, () => 0);
  for (let i = 0; i < 100; i++) {
    assert.equal(always.shouldSample(), true);
    assert.equal(never.shouldSample(), false);
  }
});

test('sampler: an exact fraction with a deterministic random source', () => {
  let i = 0;
  const sequence = (): number => (i++ % 100) / 100; // 0.00, 0.01, ..., 0.99
  const sampler = new AuditSampler(25, sequence);
  let hits = 0;
  for (let n = 0; n < 1000; n++) if (sampler.shouldSample()) hits++;
  assert.equal(hits, 250);
  sampler.rate = 12.5;
  hits = 0;
  for (let n = 0; n < 1000; n++) if (sampler.shouldSample()) hits++;
  assert.equal(hits, 130); // 0.00..0.12 are below 12.5 percent: 13 of every 100
});

test('sampler: the rate is live and validated; the default is 10', () => {
  const sampler = new AuditSampler();
  assert.equal(sampler.rate, 10);
  sampler.rate = 0;
  assert.equal(sampler.shouldSample(), false);
  sampler.rate = 100;
  assert.equal(sampler.shouldSample(), true);
  for (const bad of [-1, 101, Number.NaN, Number.POSITIVE_INFINITY, '50' as unknown as number]) {
    assert.throws(() => {
      sampler.rate = bad;
    }, RangeError);
  }
  assert.equal(sampler.rate, 100);
  assert.throws(() => new AuditSampler(150), RangeError);
});

test('AuditLog exposes a sampler built from its options, and satisfies the service ports', () => {
  const audit = new AuditLog({ stdout: sink(), sampleRate: 0, random: () => 0 });
  assert.equal(audit.sampler.rate, 0);
  assert.equal(audit.sampler.shouldSample(), false);
  const port: ServiceAudit = audit;
  const sampler: ServiceSampler = audit.sampler;
  assert.ok(port && sampler);
});
