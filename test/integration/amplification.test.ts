/**
 * CPU and memory amplification (EXTENSIONS.md 6 "Work budget"): the cases of
 * test/helpers/amplification.ts against a real server with the default limits. Each case must
 * end quickly with LIMIT_EXCEEDED (or TIMEOUT), `/healthz/live` on another connection must keep
 * answering, and the server's RSS must stay under RSS_BOUND_MB.
 *
 * NOTE (stall bound): the bound is 1 s of evaluation on top of what the server spends reading
 * and parsing a body of the same size, which is transport work outside the budget and on a
 * loaded 2-core machine alone can take several hundred ms: the control case (`/eval` of `1`
 * with the same 10 MB context) measures it, and each case must stall less than
 * STALL_BOUND_MS + the control's stall.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { amplificationCases, controlCase, heavyCondition, heavyRuleset, measureCase, send, timeoutBody, type CaseResult } from '../helpers/amplification.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

/** Most a case may stall `/healthz/live` beyond the control (parsing the same body), ms. */
const STALL_BOUND_MS = 1000;
/**
 * Highest server RSS allowed while the cases run, MB. Before the budget case 2 reached 3.3 GB;
 * with it about 100-360 MB (the server holds the parsed 10 MB bodies of earlier cases until a GC).
 */
const RSS_BOUND_MB = 600;
/** Longest a case may take end to end (sending 10 MB included), ms. */
const CASE_BOUND_MS = 8000;

describe('amplification cases with the default limits', () => {
  let server: ServerProcess;
  let control: CaseResult;

  before(async () => {
    server = await startServer(['--disable-grpc']);
    // The control: the same 10 MB context with a trivial expression (body parse only).
    const c = controlCase();
    control = await measureCase(server, c.name, () => c.run(server));
    assert.deepEqual(control.statuses, [200]);
  });
  after(async () => {
    await server?.stop();
  });

  const expected: Record<string, { status: number; codes: RegExp }> = {
    '1. /eval deep equality, 10 MB': { status: 400, codes: /^LIMIT_EXCEEDED$/ },
    '1. batch of 2,400 deep equalities, 9.6 MB': { status: 200, codes: /^(SAME,)?LIMIT_EXCEEDED$/ }, // the first items run, the rest are stopped
    '2. upper(s+s+…×200), 10 unread clients + 1': { status: 400, codes: /^LIMIT_EXCEEDED$/ },
    '3. timeout_ms 100, one heavy condition': { status: 500, codes: /^(LIMIT_EXCEEDED|TIMEOUT)$/ },
  };

  for (const c of amplificationCases()) {
    it(`${c.name}: ends with the budget's error, /healthz/live keeps answering, RSS stays bounded`, async (t) => {
      const r = await measureCase(server, c.name, () => c.run(server));
      t.diagnostic(`${JSON.stringify(r)} control stall ${control.stallMs} ms`);
      const want = expected[c.name]!;
      assert.deepEqual(r.statuses, [want.status], JSON.stringify(r));
      assert.match(r.codes[0]!, want.codes, JSON.stringify(r));
      assert.ok(r.durationMs < CASE_BOUND_MS, `case took ${r.durationMs} ms`);
      assert.ok(r.stallMs < STALL_BOUND_MS + control.stallMs, `stall ${r.stallMs} ms (control ${control.stallMs} ms)`);
      assert.ok(r.peakRssMb < RSS_BOUND_MB, `peak RSS ${r.peakRssMb} MB`);
    });
  }

  it('the server log names no unexpected error', () => {
    assert.deepEqual(
      server.logs.filter((l) => l['msg'] === 'unexpected error'),
      [],
    );
  });
});

describe('the execution timeout bounds one step (operation limit out of the way)', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer(['--disable-grpc', '--max-eval-ops', '1000000000000']);
  });
  after(async () => {
    await server?.stop();
  });

  it('timeout_ms 100 with one heavy condition answers TIMEOUT soon after 100 ms of evaluation', async () => {
    await send(server.url, 'POST', '/api/v1/rulesets', JSON.stringify(heavyRuleset('slow', heavyCondition(300), 100)));
    const r = await measureCase(server, 'timeout', async () => [await send(server.url, 'POST', '/api/v1/execute/slow', timeoutBody())]);
    assert.deepEqual(r.statuses, [500]);
    assert.deepEqual(r.codes, ['TIMEOUT']);
    assert.ok(r.durationMs < CASE_BOUND_MS, `case took ${r.durationMs} ms`);
  });
});
