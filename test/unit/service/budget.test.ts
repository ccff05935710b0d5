/**
 * The façade under the work budget (EXTENSIONS.md 6): LIMIT_EXCEEDED is 500 on execute and in
 * batch items and 400 on /eval (RESOURCE_EXHAUSTED on gRPC); a batch stops at the request
 * timeout and once its items have spent the budget; an unexpected error keeps its cause and is
 * logged with its stack.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExecutionError } from '../../../src/ruleset/result.js';
import { GrpcStatus, ServiceError, toServiceError } from '../../../src/service/errors.js';
import { RuleService } from '../../../src/service/rule-service.js';
import type { CallContext } from '../../../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { MemoryStore } from '../../../src/store/index.js';
import { NO_METRICS } from '../../../src/service/ports.js';

const ctx: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };
const PAIRS = (n: number) => `[${new Array(n).fill('a').join(',')}] == [${new Array(n).fill('b').join(',')}]`;

interface Logged {
  obj: Record<string, unknown>;
  msg: string | undefined;
}

async function makeService(opts: { maxEvalOps?: number; requestTimeoutMs?: number; clock?: () => number; metrics?: typeof NO_METRICS } = {}) {
  const errors: Logged[] = [];
  const log = (obj: object, msg?: string) => void errors.push({ obj: obj as Record<string, unknown>, msg });
  const service = new RuleService(
    {
      version: '0.0.0-test',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 100,
      maxBatchSize: 10_000,
      budget: { maxEvalOps: opts.maxEvalOps ?? 100_000, maxValueBytes: 1000 },
      requestTimeoutMs: opts.requestTimeoutMs ?? 0,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store: new MemoryStore(),
      metrics: opts.metrics ?? NO_METRICS,
      audit: { write: () => {} },
      sampler: { rate: 0, shouldSample: () => false },
      logger: { error: log, warn: () => {}, info: () => {}, debug: () => {} },
      clock: opts.clock ?? (() => performance.now()),
      now: Date.now,
    },
  );
  await service.putRuleset(ctx, {
    config: { name: 'heavy', entry_step: 'check' },
    steps: {
      check: { type: 'decision', branches: [{ condition: PAIRS(10), next_step: 'same' }], default_next: 'other' },
      same: { type: 'terminal', result: { code: 'SAME' } },
      other: { type: 'terminal', result: { code: 'OTHER' } },
    },
  });
  return { service, errors };
}

const big = { a: new Array(20_000).fill(0), b: new Array(20_000).fill(0) }; // 200k operations: over 100k
const light = { a: [1, 2], b: [1, 2] };

function rejects(fn: () => unknown, code: string, http: number, grpc: number, pattern?: RegExp): ServiceError {
  let caught: ServiceError | undefined;
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ServiceError, String(err));
    assert.equal(err.code, code);
    assert.equal(err.httpStatus, http);
    assert.equal(err.grpcStatus, grpc);
    if (pattern) assert.match(err.message, pattern);
    caught = err;
    return true;
  });
  return caught!;
}

describe('LIMIT_EXCEEDED answers', () => {
  it('execute: 500, RESOURCE_EXHAUSTED, naming the limit', async () => {
    const { service } = await makeService();
    rejects(() => service.execute(ctx, 'heavy', big, false), 'LIMIT_EXCEEDED', 500, GrpcStatus.RESOURCE_EXHAUSTED, /--max-eval-ops/);
    assert.equal(service.execute(ctx, 'heavy', light, false).code, 'SAME');
  });

  it('/eval: 400, RESOURCE_EXHAUSTED, for operations and for string bytes', async () => {
    const { service } = await makeService();
    rejects(() => service.evaluate(ctx, PAIRS(10), big), 'LIMIT_EXCEEDED', 400, GrpcStatus.RESOURCE_EXHAUSTED, /--max-eval-ops/);
    rejects(() => service.evaluate(ctx, 'upper(s + s)', { s: 'x'.repeat(600) }), 'LIMIT_EXCEEDED', 400, GrpcStatus.RESOURCE_EXHAUSTED, /--max-value-bytes/);
    assert.equal(service.evaluate(ctx, PAIRS(10), light).result, true);
  });

  it('/eval: a result that is not a finite number is a 400 evaluation error, never null', async () => {
    const { service } = await makeService();
    rejects(() => service.evaluate(ctx, 'x * 10', { x: 1e308 }), 'BAD_REQUEST', 400, GrpcStatus.INVALID_ARGUMENT, /evaluation error/);
  });

  it('/eval: the deadline is --execution-timeout-ms (TIMEOUT)', async () => {
    let now = 0;
    const { service } = await makeService({ maxEvalOps: 1e12, clock: () => (now += 1000) });
    const a = new Array(100_000).fill(0);
    rejects(() => service.evaluate(ctx, PAIRS(1000), { a, b: [...a] }), 'TIMEOUT', 500, GrpcStatus.DEADLINE_EXCEEDED, /5000 ms/);
  });
});

describe('batches', () => {
  it('an item over the budget answers LIMIT_EXCEEDED in its item (and has spent the batch budget)', async () => {
    const { service } = await makeService();
    const r = service.executeBatch(ctx, 'heavy', [light, big, light], false);
    assert.deepEqual(
      r.results.map((x) => ('code' in x ? x.code : null)),
      ['SAME', 'LIMIT_EXCEEDED', 'LIMIT_EXCEEDED'],
    );
    assert.match((r.results[1] as { error: string }).error, /^step 'check' branch 0: .*--max-eval-ops/);
    assert.match((r.results[2] as { error: string }).error, /item not run/);
    assert.deepEqual(r.summary.failed, 2);
  });

  it('stops once its items together have spent --max-eval-ops: the rest are not run', async () => {
    const { service } = await makeService();
    const item = { a: new Array(3000).fill(0), b: new Array(3000).fill(0) }; // 30,001 each
    const r = service.executeBatch(ctx, 'heavy', new Array(10).fill(item), false);
    const codes = r.results.map((x) => x.code);
    assert.deepEqual(codes, ['SAME', 'SAME', 'SAME', 'SAME', ...new Array(6).fill('LIMIT_EXCEEDED')]);
    assert.match((r.results[4] as { error: string }).error, /batch stopped: .*--max-eval-ops.*item not run/);
    assert.equal(r.summary.failed, 6);
  });

  it('stops at the request timeout: the rest answer TIMEOUT', async () => {
    let now = 0;
    const { service } = await makeService({ requestTimeoutMs: 10, clock: () => (now += 1) });
    const r = service.executeBatch(ctx, 'heavy', new Array(20).fill(light), false);
    const codes = r.results.map((x) => x.code);
    const firstStopped = codes.indexOf('TIMEOUT');
    assert.ok(firstStopped > 0 && firstStopped < 20, codes.join(','));
    assert.ok(codes.slice(0, firstStopped).every((c) => c === 'SAME'));
    assert.ok(codes.slice(firstStopped).every((c) => c === 'TIMEOUT'));
    assert.match((r.results[firstStopped] as { error: string }).error, /request timeout of 10 ms/);
  });
});

describe('unexpected errors', () => {
  it('toServiceError keeps the original error as cause; execution errors map by their code', () => {
    const boom = new RangeError('Invalid string length');
    const e = toServiceError(boom);
    assert.equal(e.code, 'INTERNAL_ERROR');
    assert.equal(e.cause, boom);
    assert.equal(e.unexpected, boom);
    assert.equal(toServiceError(new ExecutionError('LIMIT_EXCEEDED', 'x')).code, 'LIMIT_EXCEEDED');
    assert.equal(toServiceError(new ExecutionError('TIMEOUT', 'x', 's', 5)).code, 'TIMEOUT');
    assert.equal(toServiceError(new ExecutionError('STEP_LIMIT', 'x')).unexpected, undefined);
  });

  it('an unexpected failure in /eval is INTERNAL_ERROR keeping its cause for the transport to log (the service does not log it twice)', async () => {
    const { service, errors } = await makeService();
    const context = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new RangeError('getter failed');
      },
    });
    const e = rejects(() => service.evaluate(ctx, 'x + 1', context), 'INTERNAL_ERROR', 500, GrpcStatus.INTERNAL, /getter failed/);
    assert.match(String(e.unexpected?.stack), /RangeError: getter failed\n\s+at /);
    assert.equal(errors.length, 0);
  });

  it('an unexpected failure of a batch item is answered in the item and logged once, with its stack', async () => {
    let calls = 0;
    const metrics = {
      ...NO_METRICS,
      recordExecution() {
        if (++calls === 2) throw new RangeError('metrics failed');
      },
    };
    const { service, errors } = await makeService({ metrics });
    const batch = service.executeBatch(ctx, 'heavy', [light, light, light], false);
    assert.deepEqual(
      batch.results.map((r) => ('code' in r ? r.code : null)),
      ['SAME', 'INTERNAL_ERROR', 'SAME'],
    );
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.msg, 'unexpected error');
    assert.equal(errors[0]!.obj['item'], 1);
    assert.match(String(errors[0]!.obj['stack']), /RangeError: metrics failed\n\s+at /);
  });
});
