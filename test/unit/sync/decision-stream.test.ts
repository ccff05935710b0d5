/**
 * Decision records to JetStream (src/sync/decision-stream.ts) with a fake broker link: records
 * wait while the broker is down and a full queue drops and counts (`stream_queue_full`); on "up"
 * the stream `svc-decisions` is created when missing and the queue is published (subject by
 * tenant and ruleset, the decision id as message id, the file's JSON line as data); a failed
 * publish is dropped and counted (`stream_error`) with one warning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decisionLine } from '../../../src/observe/decision-log.js';
import { compileRuleset } from '../../../src/ruleset/index.js';
import type { DecisionEntry } from '../../../src/service/ports.js';
import type { BrokerLink, BrokerSession, UpListener } from '../../../src/sync/broker-link.js';
import { DecisionStream, decisionSubject } from '../../../src/sync/decision-stream.js';

const compiled = compileRuleset({ config: { name: 'loan', entry_step: 'done', mask: ['ssn'] }, steps: { done: { type: 'terminal', result: { code: 'OK' } } } });

function entry(id: string): DecisionEntry {
  return {
    id,
    at: Date.UTC(2026, 10, 24),
    tenant: 'shop',
    ruleset: 'loan',
    version: '1.0.0',
    compiled,
    input: { ssn: 'x' },
    code: 'OK',
    output: {},
    path: 'done',
    durationUs: 1,
    principal: null,
    error: null,
  };
}

/** A link whose up/down the test drives, and a session recording what it is asked. */
function fakes(publishFails = false) {
  const up: UpListener[] = [];
  const down: Array<() => void> = [];
  const link = { onUp: (l: UpListener) => void up.push(l), onDown: (l: () => void) => void down.push(l), requestTimeoutMs: 1000 } as unknown as BrokerLink;
  const added: Record<string, unknown>[] = [];
  const published: Array<{ subject: string; data: string; msgID: string }> = [];
  let exists = false;
  const session = {
    jsm: {
      streams: {
        info: async () => {
          if (!exists) throw Object.assign(new Error('stream not found'), { code: 10059 });
          return { config: { name: 'svc-decisions' }, state: { messages: 0, last_seq: 0, first_seq: 0 } };
        },
        add: async (config: Record<string, unknown>) => {
          added.push(config);
          exists = true;
          return {};
        },
      },
    },
    js: {
      publish: async (subject: string, data: Uint8Array, opts: { msgID: string }) => {
        if (publishFails) throw new Error('no responders');
        published.push({ subject, data: new TextDecoder().decode(data), msgID: opts.msgID });
        return { seq: published.length, duplicate: false };
      },
    },
  } as unknown as BrokerSession;
  return {
    link,
    added,
    published,
    goUp: async () => {
      for (const l of up) await l(session);
    },
    goDown: () => {
      for (const l of down) l();
    },
  };
}

test('records wait while the broker is down; a full queue drops and counts; on up the stream is created and the queue published', async () => {
  const drops: Array<[string, number]> = [];
  const f = fakes();
  const stream = new DecisionStream({ logger: { info: () => {}, warn: () => {} }, capacity: 2, countDrop: (r, n) => void drops.push([r, n]) });
  stream.attach(f.link);
  stream.push(entry('a'));
  stream.push(entry('b'));
  stream.push(entry('c'));
  assert.deepEqual(drops, [['stream_queue_full', 1]]);
  await f.goUp();
  await stream.idle();
  assert.equal(f.added.length, 1);
  assert.equal(f.added[0]!['name'], 'svc-decisions');
  assert.deepEqual(f.added[0]!['subjects'], ['svc-decisions.>']);
  assert.deepEqual(
    f.published.map((p) => [p.subject, p.msgID]),
    [
      ['svc-decisions.shop.loan', 'a'],
      ['svc-decisions.shop.loan', 'b'],
    ],
  );
  assert.equal(f.published[0]!.data, decisionLine(entry('a')));
  assert.match(f.published[0]!.data, /"ssn":"\*\*\*"/);
  assert.equal(stream.published, 2);

  // Down again: records wait for the next up, which finds the stream and does not add it again.
  f.goDown();
  stream.push(entry('d'));
  await new Promise((r) => setImmediate(r));
  assert.equal(f.published.length, 2);
  await f.goUp();
  await stream.idle();
  assert.deepEqual(
    f.published.map((p) => p.msgID),
    ['a', 'b', 'd'],
  );
  assert.equal(f.added.length, 1);
  await stream.close();
});

test('a failed publish is dropped and counted as stream_error, with one warning', async () => {
  const drops: Array<[string, number]> = [];
  const warnings: unknown[] = [];
  const f = fakes(true);
  const stream = new DecisionStream({ logger: { info: () => {}, warn: (o) => void warnings.push(o) }, countDrop: (r, n) => void drops.push([r, n]) });
  stream.attach(f.link);
  await f.goUp();
  stream.push(entry('x'));
  stream.push(entry('y'));
  await new Promise((r) => setImmediate(r));
  await stream.idle();
  assert.deepEqual(drops, [['stream_error', 2]]);
  assert.equal(warnings.length, 1);
  assert.equal(stream.published, 0);
  await stream.close();
});

test('the subject names tenant and ruleset', () => {
  assert.equal(decisionSubject('default', 'loan'), 'svc-decisions.default.loan');
});
