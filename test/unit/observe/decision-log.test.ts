/**
 * The decision log writer (src/observe/decision-log.ts) on real files: the record's fields and
 * masked copies, the content hash (canonical JSON of the stored document, once per version),
 * UTC daily files, the bounded queue dropping and counting instead of waiting, and write
 * failures (a path under a regular file: ENOTDIR; /dev/full: ENOSPC) dropped and counted by
 * reason, then writes again after the retry pause; the metrics exposition.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { Registry } from 'prom-client';
import {
  DecisionLog,
  LinePacker,
  contentHash,
  decisionFileName,
  decisionIdPrefix,
  decisionLine,
  registerDecisionMetrics,
  versionFacts,
} from '../../../src/observe/decision-log.js';
import { compileRuleset } from '../../../src/ruleset/index.js';
import type { DecisionEntry } from '../../../src/service/ports.js';
import { canonicalJson } from '../../../src/signing/index.js';
import { tempDir } from '../../helpers/server-process.js';

const DOC = {
  config: { name: 'loan', version: '2.0.0', entry_step: 'done', mask: ['user.ssn', 'cards[*]'] },
  steps: { done: { type: 'terminal', result: { code: 'OK' }, output: { ssn: 'user.ssn' } } },
};
const compiled = compileRuleset(DOC);

const DAY1 = Date.UTC(2026, 10, 24, 23, 59, 59, 500);
const DAY2 = Date.UTC(2026, 10, 25, 0, 0, 0, 100);

function entry(over: Partial<DecisionEntry> = {}): DecisionEntry {
  return {
    id: 'p-0',
    at: DAY1,
    tenant: 'default',
    ruleset: 'loan',
    version: '2.0.0',
    compiled,
    input: { user: { ssn: '123', age: 30 }, cards: ['4111', '5555'] },
    code: 'OK',
    output: { ssn: '123' },
    path: 'done',
    durationUs: 7,
    principal: 'key-1',
    error: null,
    ...over,
  };
}

const temps: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const t of temps.splice(0)) t.remove();
});
function dir(): string {
  const t = tempDir('declog-unit-');
  temps.push(t);
  return t.path;
}

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('a record has every field in order, input and output masked by config.mask, the original untouched', () => {
  const e = entry();
  const record = JSON.parse(decisionLine(e)) as Record<string, unknown>;
  assert.deepEqual(Object.keys(record), [
    'decision_id',
    'timestamp',
    'tenant',
    'ruleset',
    'version',
    'content_hash',
    'input',
    'code',
    'output',
    'path',
    'duration_us',
    'principal',
  ]);
  assert.deepEqual(record, {
    decision_id: 'p-0',
    timestamp: '2026-11-24T23:59:59.500Z',
    tenant: 'default',
    ruleset: 'loan',
    version: '2.0.0',
    content_hash: contentHash(compiled.doc),
    input: { user: { ssn: '***', age: 30 }, cards: ['***', '***'] },
    code: 'OK',
    output: { ssn: '123' },
    path: 'done',
    duration_us: 7,
    principal: 'key-1',
  });
  assert.deepEqual(e.input, { user: { ssn: '123', age: 30 }, cards: ['4111', '5555'] });
});

test('a failed execution is recorded with code, output and path null and its error code', () => {
  const record = JSON.parse(decisionLine(entry({ code: null, output: null, path: null, durationUs: null, error: { code: 'TIMEOUT' } }))) as Record<
    string,
    unknown
  >;
  assert.equal(record['code'], null);
  assert.equal(record['output'], null);
  assert.equal(record['path'], null);
  assert.equal(record['duration_us'], null);
  assert.deepEqual(record['error'], { code: 'TIMEOUT' });
});

test('content_hash is sha256 of the canonical JSON of the stored document, computed once per version', () => {
  const expected = `sha256:${createHash('sha256').update(canonicalJson(compiled.doc)).digest('hex')}`;
  assert.equal(versionFacts(compiled).contentHash, expected);
  assert.equal(versionFacts(compiled), versionFacts(compiled), 'cached on the compiled version');
  // Key order does not change it; content does.
  const reordered = compileRuleset({ steps: DOC.steps, config: { mask: DOC.config.mask, entry_step: 'done', version: '2.0.0', name: 'loan' } });
  assert.equal(versionFacts(reordered).contentHash, expected);
  const other = compileRuleset({ ...DOC, config: { ...DOC.config, version: '2.0.1' } });
  assert.notEqual(versionFacts(other).contentHash, expected);
});

test('records go to decisions-YYYY-MM-DD.jsonl by the UTC day of the decision', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: join(d, 'made') });
  log.push(entry({ id: 'a', at: DAY1 }));
  log.push(entry({ id: 'b', at: DAY2 }));
  log.push(entry({ id: 'c', at: DAY2 }));
  await log.close();
  assert.deepEqual(readdirSync(join(d, 'made')).sort(), ['decisions-2026-11-24.jsonl', 'decisions-2026-11-25.jsonl']);
  assert.deepEqual(
    lines(join(d, 'made', decisionFileName(DAY1))).map((r) => r['decision_id']),
    ['a'],
  );
  assert.deepEqual(
    lines(join(d, 'made', decisionFileName(DAY2))).map((r) => r['decision_id']),
    ['b', 'c'],
  );
  assert.equal(log.written, 3);
});

test('push never waits: with the queue full, a record is dropped and counted as queue_full', async () => {
  const d = dir();
  let drain: (() => void) | undefined;
  const log = new DecisionLog({ dir: d, capacity: 2, schedule: (fn) => void (drain = fn) });
  log.push(entry({ id: '1' }));
  log.push(entry({ id: '2' }));
  log.push(entry({ id: '3' }));
  assert.equal(log.pending, 2);
  assert.equal(log.dropped.get('queue_full'), 1);
  drain?.();
  await log.flush();
  assert.deepEqual(
    lines(join(d, decisionFileName(DAY1))).map((r) => r['decision_id']),
    ['1', '2'],
  );
  await log.close();
});

test('one drain writes what was queued before it; records queued during its write wait for the next scheduled drain', async () => {
  const d = dir();
  const drains: (() => void)[] = [];
  const log = new DecisionLog({ dir: d, schedule: (fn) => void drains.push(fn) });
  for (const id of ['1', '2', '3']) log.push(entry({ id }));
  assert.equal(drains.length, 1, 'one drain scheduled for the three');
  drains[0]!();
  log.push(entry({ id: '4' }));
  await until(() => log.written === 3);
  assert.equal(log.pending, 1, 'the record queued during the write is not written by that drain');
  assert.equal(drains.length, 2, 'a second drain is scheduled for it');
  drains[1]!();
  await until(() => log.written === 4);
  assert.deepEqual(
    lines(join(d, decisionFileName(DAY1))).map((r) => r['decision_id']),
    ['1', '2', '3', '4'],
  );
  await log.close();
});

test('with the default schedule, queued records reach the file on their own (a timer drains them)', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: d });
  for (const id of ['a', 'b']) log.push(entry({ id }));
  await until(() => log.written === 2);
  assert.deepEqual(
    lines(join(d, decisionFileName(DAY1))).map((r) => r['decision_id']),
    ['a', 'b'],
  );
  await log.close();
});

/** Polls `pred` every 2 ms until it holds (fails after 5 s). */
async function until(pred: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!pred()) {
    if (Date.now() > end) assert.fail('condition not reached within 5 s');
    await new Promise((r) => setTimeout(r, 2));
  }
}

test('a dir that cannot exist (under a regular file) drops and counts by reason, and logs once', async () => {
  const d = dir();
  writeFileSync(join(d, 'file.txt'), 'x');
  const warnings: unknown[] = [];
  const log = new DecisionLog({ dir: join(d, 'file.txt', 'sub'), logger: { warn: (f) => void warnings.push(f), info: () => {} } });
  for (let i = 0; i < 3; i++) {
    log.push(entry({ id: String(i) }));
    await log.flush();
  }
  assert.equal(log.dropped.get('enotdir'), 3);
  assert.equal(log.written, 0);
  assert.equal(warnings.length, 1);
  await log.close();
});

test('a full disk (/dev/full) drops and counts enospc; after the retry pause the file is tried again', async () => {
  const d = dir();
  const file = join(d, decisionFileName(DAY1));
  symlinkSync('/dev/full', file);
  let now = 1000;
  const infos: unknown[] = [];
  const log = new DecisionLog({ dir: d, retryMs: 500, now: () => now, logger: { warn: () => {}, info: (f) => void infos.push(f) } });
  log.push(entry({ id: 'lost-1' }));
  await log.flush();
  assert.equal(log.dropped.get('enospc'), 1);
  // Within the pause: dropped without touching the disk, under the same reason.
  log.push(entry({ id: 'lost-2' }));
  await log.flush();
  assert.equal(log.dropped.get('enospc'), 2);
  // Space again (a real file), after the pause: written.
  unlinkSync(file);
  now += 600;
  log.push(entry({ id: 'kept' }));
  await log.flush();
  assert.equal(log.written, 1);
  assert.equal(infos.length, 1, 'the recovery is logged');
  assert.deepEqual(
    lines(file).map((r) => r['decision_id']),
    ['kept'],
  );
  await log.close();
});

test('records pushed after close are dropped and counted; close writes what was queued', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: d, schedule: () => {} });
  log.push(entry({ id: 'queued' }));
  await log.close();
  log.push(entry({ id: 'late' }));
  assert.deepEqual(
    lines(join(d, decisionFileName(DAY1))).map((r) => r['decision_id']),
    ['queued'],
  );
  assert.equal(log.dropped.get('queue_full'), 1);
});

test('the metrics: records written and dropped by reason', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: d, capacity: 1, schedule: () => {} });
  const registry = new Registry();
  registerDecisionMetrics(registry, log);
  log.push(entry());
  log.push(entry());
  await log.close();
  const text = await registry.metrics();
  assert.match(text, /^svc_decision_records_written_total 1$/m);
  assert.match(text, /^svc_decision_records_dropped_total\{reason="queue_full"\} 1$/m);
});

test('id prefixes differ between processes (random part) and carry the start time', () => {
  const a = decisionIdPrefix(0);
  const b = decisionIdPrefix(0);
  assert.match(a, /^0-[0-9a-f]{8}-$/);
  assert.notEqual(a, b);
});

test('writes hold whole lines and stay under the segment size (workers sharing a day file never interleave inside a line)', () => {
  const packer = new LinePacker(8);
  for (const line of ['aaa', 'bbb', 'cc']) packer.add('day-1', line);
  packer.add('day-1', 'a-very-long-line');
  packer.add('day-1', 'é€');
  packer.add('day-2', 'x');
  assert.equal(packer.lines, 6);
  assert.equal(packer.bytes, 4 + 4 + 3 + 17 + 6 + 2);
  const segments = packer.take();
  assert.deepEqual(
    segments.map((s) => [s.name, s.buf.subarray(0, s.used).toString('utf8'), s.lines]),
    [
      ['day-1', 'aaa\nbbb\n', 2],
      ['day-1', 'cc\n', 1],
      ['day-1', 'a-very-long-line\n', 1],
      ['day-1', 'é€\n', 1],
      ['day-2', 'x\n', 1],
    ],
  );
  assert.equal(packer.lines, 0);
  assert.equal(packer.bytes, 0);
  assert.deepEqual(packer.take(), []);
});

test('a written segment buffer is reused, and what it held before does not leak into the next lines', () => {
  const packer = new LinePacker(16);
  packer.add('d', 'first-line-1234');
  const [first] = packer.take();
  packer.recycle(first!);
  packer.add('d', 'ab');
  const [second] = packer.take();
  assert.equal(second!.buf, first!.buf, 'the same buffer');
  assert.equal(second!.buf.subarray(0, second!.used).toString(), 'ab\n');
});

test('the queue is bounded in bytes too: a record past capacityBytes is dropped and counted as queue_full', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: d, capacityBytes: 1, schedule: () => {} });
  log.push(entry({ id: 'first' }));
  log.push(entry({ id: 'second' }));
  assert.equal(log.pending, 1);
  assert.equal(log.dropped.get('queue_full'), 1);
  await log.close();
  assert.deepEqual(
    lines(join(d, decisionFileName(DAY1))).map((r) => r['decision_id']),
    ['first'],
  );
});

test('a large record (over one segment) is written whole, between the lines queued before and after it', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: d, schedule: () => {} });
  const big = 'x'.repeat(300 * 1024);
  log.push(entry({ id: 'before' }));
  log.push(entry({ id: 'big', input: { note: big } }));
  log.push(entry({ id: 'after' }));
  await log.close();
  const records = lines(join(d, decisionFileName(DAY1)));
  assert.deepEqual(
    records.map((r) => r['decision_id']),
    ['before', 'big', 'after'],
  );
  assert.equal((records[1]!['input'] as { note: string }).note, big);
});

test('an entry is serialized when pushed: a later change to its input object is not recorded', async () => {
  const d = dir();
  const log = new DecisionLog({ dir: d, schedule: () => {} });
  const input = { user: { ssn: '1', age: 30 }, cards: [] as string[] };
  log.push(entry({ id: 'snap', input }));
  input.user.age = 99;
  await log.close();
  assert.deepEqual(lines(join(d, decisionFileName(DAY1)))[0]!['input'], { user: { ssn: '***', age: 30 }, cards: [] });
});
