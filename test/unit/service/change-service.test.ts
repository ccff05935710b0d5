/**
 * The façade's impact run under its limits (src/service/change-service.ts): it stops at the
 * request timeout (500 TIMEOUT) and at the work budget of its executions together (500
 * LIMIT_EXCEEDED), with no partial answer; within both it answers. A real RuleService over a
 * MemoryStore, with a manual clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuditLog, silentLogger } from '../../../src/observe/index.js';
import { ServiceError } from '../../../src/service/errors.js';
import { NO_METRICS } from '../../../src/service/ports.js';
import { RuleService } from '../../../src/service/rule-service.js';
import type { CallContext } from '../../../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { MemoryStore } from '../../../src/store/index.js';

const CTX: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };

function tagRules(code: string): Record<string, unknown> {
  return {
    config: { name: 'tags', entry_step: 'a' },
    steps: {
      a: { type: 'decision', branches: [{ condition: '"z" in tags', next_step: 'b' }], default_next: 'b' },
      b: { type: 'terminal', result: { code } },
    },
  };
}

async function service(options: { requestTimeoutMs?: number; maxEvalOps?: number; tick?: number }): Promise<RuleService> {
  let now = 0;
  const audit = new AuditLog({ stdout: { write: () => true }, sampleRate: 0 });
  const s = new RuleService(
    {
      version: 'test',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 0,
      maxSteps: 100,
      maxBatchSize: 10_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 0,
      budget: { maxEvalOps: options.maxEvalOps ?? 10_000_000, maxValueBytes: 1 << 20 },
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store: new MemoryStore(),
      metrics: NO_METRICS,
      audit,
      sampler: audit.sampler,
      logger: silentLogger(),
      clock: () => (now += options.tick ?? 0),
      now: Date.now,
    },
  );
  await s.putRuleset(CTX, tagRules('OLD'));
  return s;
}

const INPUTS = Array.from({ length: 1000 }, () => ({ tags: ['a', 'b', 'c', 'd'] }));

async function refused(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof ServiceError && e.code === code && message.test(e.message) && e.httpStatus === 500);
}

describe('impact limits in the service', () => {
  it('within its limits it answers', async () => {
    const s = await service({ requestTimeoutMs: 1_000_000, maxEvalOps: 1_000_000, tick: 1 });
    const r = await s.impact(CTX, 'tags', { candidate: tagRules('NEW'), inputs: INPUTS });
    assert.deepEqual(r.transitions, [{ from: 'OLD', to: 'NEW', count: 1000 }]);
  });

  it('stops at the request timeout: 500 TIMEOUT', async () => {
    const s = await service({ requestTimeoutMs: 50, tick: 1 });
    await refused(s.impact(CTX, 'tags', { candidate: tagRules('NEW'), inputs: INPUTS }), 'TIMEOUT', /request timeout of 50 ms .* after \d+ of 1000 inputs/);
  });

  it('stops once its executions together spent --max-eval-ops: 500 LIMIT_EXCEEDED', async () => {
    // 4 operations an execution, 8 an input: 800 allows 99 inputs, not 1000.
    const s = await service({ maxEvalOps: 800 });
    await refused(
      s.impact(CTX, 'tags', { candidate: tagRules('NEW'), inputs: INPUTS }),
      'LIMIT_EXCEEDED',
      /work budget of 800 operations .* after 100 of 1000 inputs/,
    );
  });
});
