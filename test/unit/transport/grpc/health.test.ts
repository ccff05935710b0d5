/**
 * `grpc.health.v1.Health` (src/transport/grpc/health.ts) over a fake readiness, without a
 * network: Check per service name, Watch (first status, changes only, SERVICE_UNKNOWN), drain
 * (NOT_SERVING to every watcher, then the end), and a cancelled Watch forgotten. Against the
 * real server: test/integration/grpc-health-reflection.test.ts.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { HealthService } from '../../../../src/transport/grpc/health.js';
import { MalformedMessage } from '../../../../src/transport/grpc/proto.js';

class FakeStream extends EventEmitter {
  readonly written: string[] = [];
  ended = false;
  constructor(readonly request: unknown) {
    super();
  }
  write(m: { status: string }): boolean {
    this.written.push(m.status);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  destroy(err: unknown): void {
    this.emit('destroyed', err);
  }
}

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

function service(readyRef: { ok: boolean }, intervalMs = 5) {
  const h = new HealthService(async () => {
    if (!readyRef.ok) throw new Error('not ready');
  }, intervalMs);
  const impl = h.implementation() as Record<string, Function>;
  const check = (request: unknown) =>
    new Promise<{ err: any; res: any }>((resolve) => impl['Check']!({ request }, (err: any, res: any) => resolve({ err, res })));
  const watch = (request: unknown) => {
    const s = new FakeStream(request);
    impl['Watch']!(s);
    return s;
  };
  return { h, check, watch };
}

describe('grpc.health.v1.Health', () => {
  it('Check: "" and rules.RuleService follow readiness; another name is NOT_FOUND; a malformed message is INVALID_ARGUMENT', async () => {
    const ready = { ok: true };
    const { check } = service(ready);
    assert.deepEqual((await check({ service: '' })).res, { status: 'SERVING' });
    assert.deepEqual((await check({ service: 'rules.RuleService' })).res, { status: 'SERVING' });
    ready.ok = false;
    assert.deepEqual((await check({ service: '' })).res, { status: 'NOT_SERVING' });
    const unknown = await check({ service: 'x.Y' });
    assert.equal(unknown.err.code, status.NOT_FOUND);
    assert.deepEqual(unknown.err.metadata.get('svc-error-code'), ['NOT_FOUND']);
    const bad = await check(new MalformedMessage('truncated'));
    assert.equal(bad.err.code, status.INVALID_ARGUMENT);
  });

  it('Watch: the status at once, then one message per change only', async () => {
    const ready = { ok: true };
    const { h, watch } = service(ready);
    const s = watch({ service: '' });
    await tick(30);
    assert.deepEqual(s.written, ['SERVING'], 'no repeats while nothing changes');
    ready.ok = false;
    await tick(30);
    ready.ok = true;
    await tick(30);
    assert.deepEqual(s.written, ['SERVING', 'NOT_SERVING', 'SERVING']);
    assert.equal(s.ended, false);
    h.drain();
  });

  it('Watch of an unknown service: SERVICE_UNKNOWN, the call stays open and gets no readiness changes', async () => {
    const ready = { ok: true };
    const { h, watch } = service(ready);
    const s = watch({ service: 'x.Y' });
    ready.ok = false;
    await tick(30);
    assert.deepEqual(s.written, ['SERVICE_UNKNOWN']);
    assert.equal(s.ended, false);
    h.drain();
    assert.deepEqual(s.written, ['SERVICE_UNKNOWN', 'NOT_SERVING']);
    assert.equal(s.ended, true);
  });

  it('drain: every watcher gets NOT_SERVING and ends; later Checks and Watches are NOT_SERVING', async () => {
    const { h, watch, check } = service({ ok: true });
    const a = watch({ service: '' });
    const b = watch({ service: 'rules.RuleService' });
    await tick(10);
    h.drain();
    for (const s of [a, b]) {
      assert.deepEqual(s.written, ['SERVING', 'NOT_SERVING']);
      assert.equal(s.ended, true);
    }
    assert.deepEqual((await check({ service: '' })).res, { status: 'NOT_SERVING' });
    const late = watch({ service: '' });
    assert.deepEqual(late.written, ['NOT_SERVING']);
    assert.equal(late.ended, true);
  });

  it('a cancelled Watch is forgotten: nothing more is written to it', async () => {
    const ready = { ok: true };
    const { h, watch } = service(ready);
    const s = watch({ service: '' });
    await tick(10);
    s.emit('cancelled');
    ready.ok = false;
    await tick(30);
    h.drain();
    assert.deepEqual(s.written, ['SERVING']);
    assert.equal(s.ended, false);
  });
});
