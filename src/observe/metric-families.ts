/**
 * Hot-path metric storage: plain numbers and bucket arrays updated in a few nanoseconds, and
 * metric families that prom-client's Registry reads at scrape time.
 *
 * NOTE: prom-client's own `labels(...).inc()` / `.observe()` rebuild a label-hash string and
 * validate labels on every call (~200-300 ns each here); executions record a counter, a
 * histogram and a code counter, so they accumulate here instead and are exported only when
 * `/metrics` is scraped. The families implement the `get()` shape prom-client's Registry
 * formats (name, help, type, values with optional metricName); the exposition tests parse the
 * rendered text, so a change of that shape in prom-client fails them.
 */
import type { Metric, Registry } from 'prom-client';

/** Label name → value of one series. */
export type Labels = Readonly<Record<string, string>>;

/** One histogram series: per-bucket counts (the last is +Inf), sum and count. */
export class HistogramData {
  /**
   * @param data where the series is kept, from `at`: its count, its sum, then the non-cumulative
   *   count per bucket (`bounds.length + 1` of them, the last is +Inf). Default: an array of its own.
   *   NOTE (speed, bench/NOTES.md "Many rulesets" and "Seventh session"): one typed array, so an
   *   observation touches no separately allocated number; an owner that records more numbers per
   *   event (a ruleset's counters) keeps the series inside its own array, one object fewer to
   *   fetch from memory when traffic spreads over many rulesets.
   */
  constructor(
    readonly bounds: readonly number[],
    private readonly data: Float64Array = new Float64Array(bounds.length + 3),
    private readonly at = 0,
  ) {}

  /** Number of observations. */
  get count(): number {
    return this.data[this.at] as number;
  }

  /** Non-cumulative count per bucket; index `bounds.length` is the +Inf bucket (a view: read at scrape time). */
  get counts(): Float64Array {
    return this.data.subarray(this.at + 2, this.at + 3 + this.bounds.length);
  }

  /** Sum of the observations. */
  get sum(): number {
    return this.data[this.at + 1] as number;
  }

  /** Adds one observation (seconds). NaN is ignored; negatives count as 0. */
  observe(value: number): void {
    observeInto(this.data, this.at, this.bounds, value);
  }
}

/**
 * Adds one observation to the histogram series kept in `data` from `at` (`HistogramData`'s
 * layout: count, sum, buckets). NaN is ignored; negatives count as 0.
 */
export function observeInto(data: Float64Array, at: number, bounds: readonly number[], value: number): void {
  if (!(value >= 0)) {
    if (Number.isNaN(value)) return;
    value = 0;
  }
  let i = 0;
  while (i < bounds.length && value > (bounds[i] as number)) i++;
  data[at + 2 + i] = (data[at + 2 + i] as number) + 1;
  data[at + 1] = (data[at + 1] as number) + value;
  data[at] = (data[at] as number) + 1;
}

/** One exported sample, in the shape prom-client's Registry formats. */
interface Sample {
  readonly value: number;
  readonly labels: Labels;
  readonly metricName?: string;
}

/** A metric family read at scrape time from a snapshot function. */
class SnapshotFamily {
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly samples: () => Sample[],
  ) {}

  /** Called by the Registry at every scrape. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() };
  }

  reset(): void {}
}

/** Registers a family object with a prom-client Registry. */
function register(registry: Registry, family: SnapshotFamily): void {
  // NOTE: the Registry only calls `get()` and reads `name`/`type`; its TypeScript type lists
  // prom-client's own classes, hence the cast.
  registry.registerMetric(family as unknown as Metric);
}

/** Registers a counter family whose series come from `series()` at each scrape. */
export function registerCounterFamily(registry: Registry, name: string, help: string, series: () => Iterable<readonly [Labels, number]>): void {
  register(registry, new SnapshotFamily(name, help, 'counter', () => Array.from(series(), ([labels, value]) => ({ labels, value }))));
}

/** Registers a histogram family whose series come from `series()` at each scrape. */
export function registerHistogramFamily(registry: Registry, name: string, help: string, series: () => Iterable<readonly [Labels, HistogramData]>): void {
  const bucketName = `${name}_bucket`;
  register(
    registry,
    new SnapshotFamily(name, help, 'histogram', () => {
      const out: Sample[] = [];
      for (const [labels, data] of series()) {
        let cumulative = 0;
        data.bounds.forEach((bound, i) => {
          cumulative += data.counts[i] as number;
          out.push({ metricName: bucketName, labels: { ...labels, le: String(bound) }, value: cumulative });
        });
        out.push({ metricName: bucketName, labels: { ...labels, le: '+Inf' }, value: data.count });
        out.push({ metricName: `${name}_sum`, labels, value: data.sum });
        out.push({ metricName: `${name}_count`, labels, value: data.count });
      }
      return out;
    }),
  );
}
