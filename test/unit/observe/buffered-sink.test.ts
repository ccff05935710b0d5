/**
 * The batching stdout sink of the audit log (src/observe/buffered-sink.ts): lines stay
 * complete and in order, one write per scheduled flush, an immediate write past the size
 * limit, and `AuditLog.close()` flushes what is pending (so `server_stopped` is written).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuditLog } from '../../../src/observe/index.js';
import { BufferedLineSink } from '../../../src/observe/buffered-sink.js';

function target(): { writes: string[]; write(s: string): boolean } {
  const writes: string[] = [];
  return { writes, write: (s: string) => (writes.push(s), true) };
}

/** A manual scheduler: `run()` runs what was scheduled. */
function manual(): { schedule(fn: () => void): void; run(): void; pending: number } {
  const queue: Array<() => void> = [];
  return {
    schedule: (fn) => void queue.push(fn),
    run: () => queue.splice(0).forEach((fn) => fn()),
    get pending() {
      return queue.length;
    },
  };
}

test('lines written in one turn reach the target in one write, in order', () => {
  const out = target();
  const s = manual();
  const sink = new BufferedLineSink(out, { schedule: s.schedule });
  sink.write('a\n');
  sink.write('b\n');
  sink.write('c\n');
  assert.deepEqual(out.writes, []);
  assert.equal(s.pending, 1, 'one flush scheduled for the turn');
  s.run();
  assert.deepEqual(out.writes, ['a\nb\nc\n']);
  sink.write('d\n');
  s.run();
  assert.deepEqual(out.writes, ['a\nb\nc\n', 'd\n']);
});

test('no write is larger than maxBytes unless one line is; lines are never split', () => {
  const out = target();
  const s = manual();
  const sink = new BufferedLineSink(out, { schedule: s.schedule, maxBytes: 12 });
  sink.write('1234\n');
  sink.write('5678\n');
  assert.deepEqual(out.writes, []);
  sink.write('9abc\n'); // 15 > 12: the first two go out, this one waits
  assert.deepEqual(out.writes, ['1234\n5678\n']);
  sink.write('a very long line\n'); // longer than maxBytes: written alone, at once
  assert.deepEqual(out.writes, ['1234\n5678\n', '9abc\n', 'a very long line\n']);
  s.run();
  assert.deepEqual(out.writes, ['1234\n5678\n', '9abc\n', 'a very long line\n']);
  assert.ok((out.writes as string[]).every((w) => w.endsWith('\n')));
});

test('flush() writes synchronously; a throwing target does not throw', () => {
  const out = target();
  const sink = new BufferedLineSink(out, { schedule: () => {} });
  sink.write('x\n');
  sink.flush();
  assert.deepEqual(out.writes, ['x\n']);
  sink.flush();
  assert.deepEqual(out.writes, ['x\n'], 'nothing pending: no write');
  const bad = new BufferedLineSink(
    {
      write: () => {
        throw new Error('EPIPE');
      },
    },
    { schedule: () => {} },
  );
  bad.write('y\n');
  assert.doesNotThrow(() => bad.flush());
});

test('the default schedule flushes on setImmediate', async () => {
  const out = target();
  const sink = new BufferedLineSink(out);
  sink.write('z\n');
  assert.deepEqual(out.writes, []);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(out.writes, ['z\n']);
});

test('AuditLog.close() flushes the last lines (server_stopped)', async () => {
  const out = target();
  const sink = new BufferedLineSink(out, { schedule: () => {} });
  const audit = new AuditLog({ stdout: sink, now: () => Date.UTC(2024, 0, 1) });
  audit.write('rule_executed', { rule_name: 'a' });
  audit.write('server_stopped', { uptime_seconds: 1 });
  assert.deepEqual(out.writes, []);
  await audit.close();
  const lines = out.writes
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    lines.map((l) => l['event']),
    ['rule_executed', 'server_stopped'],
  );
});
