/**
 * Timing helpers for the benchmark suites: calibrate a batch size, warm up, then time several
 * rounds and report nanoseconds per operation (median, min, max). Sync and async variants.
 */

/** Timing of one contender. */
export interface Timing {
  /** Median ns per operation over the rounds. */
  readonly nsMedian: number;
  readonly nsMin: number;
  readonly nsMax: number;
  readonly rounds: number;
  /** Operations per round. */
  readonly batch: number;
}

/** How long to measure. */
export interface MeasureOptions {
  /** Target duration of one round in ms (the batch size is calibrated to it). */
  readonly roundMs: number;
  readonly rounds: number;
  /** Warm-up duration in ms before timing starts. */
  readonly warmupMs: number;
}

/** Defaults: 15 rounds of ~100 ms after 500 ms of warm-up. */
export const DEFAULT_MEASURE: MeasureOptions = { roundMs: 100, rounds: 15, warmupMs: 500 };

/** Keeps results alive so the optimizer cannot drop the work. */
export let blackhole = 0;

function nowNs(): bigint {
  return process.hrtime.bigint();
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function summarize(perOp: number[], batch: number): Timing {
  return { nsMedian: median(perOp), nsMin: Math.min(...perOp), nsMax: Math.max(...perOp), rounds: perOp.length, batch };
}

/** Times a synchronous operation. `op` returns something derived from its result (kept alive). */
export function measureSync(op: () => number, options: MeasureOptions = DEFAULT_MEASURE): Timing {
  const runBatch = (n: number): number => {
    let sink = 0;
    const t0 = nowNs();
    for (let i = 0; i < n; i++) sink += op();
    const ns = Number(nowNs() - t0);
    blackhole += sink;
    return ns;
  };
  let batch = 1000;
  const warmupEnd = Date.now() + options.warmupMs;
  // Calibrate during warm-up: grow the batch until one takes ~ roundMs.
  while (Date.now() < warmupEnd) {
    const ns = runBatch(batch);
    if (ns < options.roundMs * 1e6 * 0.5) batch *= 2;
  }
  const perOp: number[] = [];
  for (let r = 0; r < options.rounds; r++) perOp.push(runBatch(batch) / batch);
  return summarize(perOp, batch);
}

/** Times an asynchronous operation awaited one at a time (its API is async: that is its cost). */
export async function measureAsync(op: () => Promise<number>, options: MeasureOptions = DEFAULT_MEASURE): Promise<Timing> {
  const runBatch = async (n: number): Promise<number> => {
    let sink = 0;
    const t0 = nowNs();
    for (let i = 0; i < n; i++) sink += await op();
    const ns = Number(nowNs() - t0);
    blackhole += sink;
    return ns;
  };
  let batch = 100;
  const warmupEnd = Date.now() + options.warmupMs;
  while (Date.now() < warmupEnd) {
    const ns = await runBatch(batch);
    if (ns < options.roundMs * 1e6 * 0.5) batch *= 2;
  }
  const perOp: number[] = [];
  for (let r = 0; r < options.rounds; r++) perOp.push((await runBatch(batch)) / batch);
  return summarize(perOp, batch);
}
