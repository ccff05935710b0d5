/**
 * Clock use of `execute` (SPEC "Limits", DECISIONS.md 3): duration from two reads; no read per
 * step without trace; the timeout checked every 16 visited steps (16, 32, ...); one read per
 * step with trace, and the trace timings come from the clock; a path-only trace reads it as an
 * untraced walk does. All with fake clocks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileRuleset, execute, ExecutionError, type CompiledRuleset, type ExecuteOptions } from '../../../src/ruleset/index.js';

/** A ruleset visiting exactly `n` steps: s1 .. s(n-1) are empty action steps, s(n) a terminal. */
function chain(n: number, timeoutMs?: number): CompiledRuleset {
  const steps: Record<string, unknown> = {};
  for (let i = 1; i < n; i++) steps[`s${i}`] = { type: 'action', actions: [], next_step: `s${i + 1}` };
  steps[`s${n}`] = { type: 'terminal', result: { code: 'END' } };
  const config: Record<string, unknown> = { name: 'chain', entry_step: 's1' };
  if (timeoutMs !== undefined) config['timeout_ms'] = timeoutMs;
  return compileRuleset({ config, steps });
}

/** A clock returning `values` in turn (the last one forever), counting its reads. */
function scripted(...values: number[]): { clock: () => number; reads: () => number } {
  let reads = 0;
  return {
    clock: () => values[Math.min(reads++, values.length - 1)]!,
    reads: () => reads,
  };
}

/** A clock that advances `step` ms per read, counting its reads. */
function ticking(step = 1): { clock: () => number; reads: () => number } {
  let reads = 0;
  return { clock: () => ++reads * step, reads: () => reads };
}

function opts(clock: () => number, extra: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return { clock, timeoutMs: 5000, maxSteps: 10000, ...extra };
}

function timeoutAt(fn: () => unknown, stepId: string, timeoutMs: number): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ExecutionError, String(err));
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.message, `execution timed out after ${timeoutMs} ms`);
    assert.equal(err.timeoutMs, timeoutMs);
    assert.equal(err.stepId, stepId);
    return true;
  });
}

test('duration_us is whole microseconds between the first and the last read', () => {
  const c = scripted(10, 12.3456);
  const r = execute(chain(3), {}, opts(c.clock));
  assert.equal(r.duration_us, 2346);
  assert.equal(c.reads(), 2);
});

test('without trace the clock is read only at start and end below 16 steps', () => {
  for (const n of [1, 2, 15]) {
    const c = ticking();
    execute(chain(n), {}, opts(c.clock));
    assert.equal(c.reads(), 2, `${n} steps`);
  }
});

test('without trace the timeout check reads the clock at steps 16, 32, ... only', () => {
  const cases: Array<[steps: number, reads: number]> = [
    [16, 3],
    [31, 3],
    [32, 4],
    [47, 4],
    [48, 5],
    [100, 8],
  ];
  for (const [n, reads] of cases) {
    const c = ticking();
    execute(chain(n), {}, opts(c.clock));
    assert.equal(c.reads(), reads, `${n} steps`);
  }
});

test('a disabled timeout reads no clock during the walk', () => {
  const c = ticking();
  execute(chain(100), {}, opts(c.clock, { timeoutMs: 0 }));
  assert.equal(c.reads(), 2);
  const c2 = ticking();
  execute(chain(100, 0), {}, opts(c2.clock, { timeoutMs: 5000 }));
  assert.equal(c2.reads(), 2, 'config.timeout_ms 0 disables the server default');
});

test('the timeout fires at the first check (step 16), not before', () => {
  // Start at 0; every later read says 1000 ms passed. The first check is at step 16.
  const c = scripted(0, 1000);
  timeoutAt(() => execute(chain(40), {}, opts(c.clock, { timeoutMs: 50 })), 's16', 50);
  assert.equal(c.reads(), 2);
});

test('the timeout is checked again at step 32', () => {
  // 1 ms per read: at step 16 1 ms has passed (< 2), at step 32 2 ms (>= 2).
  const c = ticking();
  timeoutAt(() => execute(chain(40), {}, opts(c.clock, { timeoutMs: 2 })), 's32', 2);
  assert.equal(c.reads(), 3);
});

test('no timeout when the walk ends before the first check', () => {
  const c = scripted(0, 1000);
  const r = execute(chain(15), {}, opts(c.clock, { timeoutMs: 50 }));
  assert.equal(r.code, 'END');
});

test("the ruleset's timeout_ms overrides the option", () => {
  timeoutAt(() => execute(chain(40, 7), {}, opts(scripted(0, 8).clock, { timeoutMs: 0 })), 's16', 7);
  const r = execute(chain(40, 9), {}, opts(scripted(0, 8).clock, { timeoutMs: 1 }));
  assert.equal(r.code, 'END');
});

test('with trace the clock is read once per step (plus the start) and no more', () => {
  for (const n of [1, 5, 16, 40]) {
    const c = ticking();
    const r = execute(chain(n), {}, opts(c.clock, { trace: true }));
    assert.equal(c.reads(), n + 1, `${n} steps`);
    assert.equal(r.trace!.steps.length, n);
  }
});

test('with trace, step timings and the total come from the clock', () => {
  const c = scripted(100, 100.5, 102, 102.0004, 110);
  const r = execute(chain(4), {}, opts(c.clock, { trace: true }));
  assert.deepEqual(
    r.trace!.steps.map((s) => [s.id, s.duration_us]),
    [
      ['s1', 500],
      ['s2', 1500],
      ['s3', 0],
      ['s4', 8000],
    ],
  );
  assert.equal(r.duration_us, 10000);
  assert.equal(r.trace!.path, 's1 -> s2 -> s3 -> s4');
});

test('with trace the timeout uses the per-step reads', () => {
  const c = ticking();
  // Reads: start=1, after s1=2, ..., after s15=16. At step 16: 16 - 1 = 15 >= 15.
  timeoutAt(() => execute(chain(40), {}, opts(c.clock, { trace: true, timeoutMs: 15 })), 's16', 15);
  assert.equal(c.reads(), 16);
});

test('a path-only trace reads the clock as an untraced walk does and keeps the path without steps', () => {
  for (const [n, reads] of [
    [1, 2],
    [15, 2],
    [16, 3],
    [40, 4],
  ] as const) {
    const c = ticking();
    const r = execute(chain(n), {}, opts(c.clock, { trace: true, pathOnly: true }));
    assert.equal(c.reads(), reads, `${n} steps`);
    assert.equal(r.trace!.path, Array.from({ length: n }, (_, i) => `s${i + 1}`).join(' -> '));
    assert.deepEqual(r.trace!.steps, []);
  }
});

test('a path-only trace still times out at the checks (16, 32, ...)', () => {
  const c = scripted(0, 1000);
  timeoutAt(() => execute(chain(40), {}, opts(c.clock, { trace: true, pathOnly: true, timeoutMs: 50 })), 's16', 50);
  const t = ticking();
  timeoutAt(() => execute(chain(40), {}, opts(t.clock, { trace: true, pathOnly: true, timeoutMs: 2 })), 's32', 2);
});

test('a clock that goes backwards gives 0, not a negative duration', () => {
  const r = execute(chain(2), {}, opts(scripted(5, 4).clock));
  assert.equal(r.duration_us, 0);
});

test('a failed execution carries the time until it failed, from one extra read on the error path', () => {
  const compiled = compileRuleset({
    config: { name: 'fails', entry_step: 'd' },
    steps: {
      d: { type: 'decision', branches: [{ condition: 'user.name * 2 > 1', next_step: 't' }] },
      t: { type: 'terminal', result: { code: 'T' } },
    },
  });
  const clock = scripted(10, 12.5);
  assert.throws(
    () => execute(compiled, { user: { name: 'x' } }, opts(clock.clock)),
    (err: unknown) => err instanceof ExecutionError && err.code === 'EVALUATION_ERROR' && err.durationUs === 2500,
  );
  assert.equal(clock.reads(), 2);
  const limited = chain(40);
  const ticks = ticking(1);
  assert.throws(
    () => execute(limited, {}, opts(ticks.clock, { maxSteps: 5, timeoutMs: 0 })),
    (err: unknown) => err instanceof ExecutionError && err.code === 'STEP_LIMIT' && err.durationUs === 1000,
  );
});
