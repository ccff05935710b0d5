/**
 * The Prometheus metrics of SPEC.md "GET /metrics", exactly those, on a private prom-client
 * Registry (no default process metrics, nothing global). Recording is on the execution hot
 * path: each ruleset has a cached handle (`ruleset(name)`) of plain counters and bucket
 * arrays, exported at scrape time (see metric-families.ts).
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { HistogramData, observeInto, registerCounterFamily, registerHistogramFamily } from './metric-families.js';

/** Buckets for executions and evaluations: 1 µs to 1 s (seconds). */
export const EXECUTION_BUCKETS: readonly number[] = [
  0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** Buckets for rule compilation: 10 µs to 5 s (seconds). */
export const COMPILATION_BUCKETS: readonly number[] = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** Options of `Metrics`. */
export interface MetricsOptions {
  /** Server version, the `version` label of `svc_info`. */
  readonly version: string;
  /** Clock in epoch milliseconds; default `Date.now`. */
  readonly now?: () => number;
  /** Process start in epoch milliseconds (for `svc_uptime_seconds`); default `now()` at construction. */
  readonly startTime?: number;
  /** Number of loaded rules, read at every scrape; default 0 until `setRulesCount` is called. */
  readonly rulesCount?: () => number;
  /**
   * Multi-tenancy mode: the per-ruleset series (executions, execution duration, terminal
   * results, compilation duration) carry a `tenant` label, so equal names of two tenants stay
   * apart (docs/tenancy.md). Off: no `tenant` label, exactly the spec'd labels.
   */
  readonly tenantLabel?: boolean;
}

/** The tenant of rulesets recorded without one. */
const DEFAULT_TENANT = 'default';

/** Where `RulesetMetrics` keeps its numbers in its block (offsets from the block's start). */
const SUCCESS = 0;
const ERROR = 1;
/** The first terminal code's count. */
const CODES = 2;
/** Terminal codes counted in the block; a ruleset's further codes are counted in a map. */
const CODE_SLOTS = 6;
/**
 * The execution duration histogram (count, sum, buckets), after the codes: what one execution
 * updates (a count, a code, the histogram's count and sum, a bucket of the short durations) is
 * then in the block's first two cache lines.
 */
const DURATION = CODES + CODE_SLOTS;
/** The compilation duration histogram, last (written once per compile, read at scrape time). */
const COMPILATION = DURATION + 3 + EXECUTION_BUCKETS.length;
/** Numbers per ruleset, rounded up to whole 64-byte cache lines. */
const BLOCK = Math.ceil((COMPILATION + 3 + COMPILATION_BUCKETS.length) / 8) * 8;
/** Blocks per shared chunk. */
const CHUNK_BLOCKS = 128;

/**
 * The numbers of many rulesets: blocks of `BLOCK` numbers in shared chunks of `CHUNK_BLOCKS`
 * blocks, handed out in order and reused once given back.
 *
 * NOTE (speed, bench/NOTES.md "Eighth session"): an array of its own per ruleset is one more
 * object per execution to fetch from memory when traffic spreads over thousands of rulesets
 * (the typed array object before its numbers), and an ArrayBuffer each to allocate and track at
 * start; a chunk's typed array is shared by 128 rulesets and stays in the CPU caches.
 */
class MetricsSlab {
  private chunk: Float64Array | null = null;
  private used = CHUNK_BLOCKS;
  private readonly free: { data: Float64Array; at: number }[] = [];

  /** A zeroed block: its chunk and its first index there. */
  take(): { data: Float64Array; at: number } {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    if (this.used === CHUNK_BLOCKS) {
      this.chunk = new Float64Array(CHUNK_BLOCKS * BLOCK);
      this.used = 0;
    }
    return { data: this.chunk as Float64Array, at: BLOCK * this.used++ };
  }

  /** Takes back a block (zeroed here) for a later `take`. */
  give(data: Float64Array, at: number): void {
    data.fill(0, at, at + BLOCK);
    this.free.push({ data, at });
  }
}

/** Accumulated numbers of one ruleset; `record` is the cheap hot-path call. */
export class RulesetMetrics {
  // NOTE (speed, bench/NOTES.md "Eighth session"): the fields `record` reads (and the runner's
  // owner check) first, so that a handle fetched from memory serves them from one cache line.
  /** The `Metrics` that exports it (a holder checks it before reusing the handle). */
  readonly owner: unknown;
  /**
   * Where its numbers are, from `at`: success and error counts, the counts of the first
   * `CODE_SLOTS` terminal codes, the execution and the compilation duration histograms
   * (`BLOCK` numbers). NOTE (speed, bench/NOTES.md "Seventh session"): an execution updates
   * three or four numbers of one ruleset; kept together they are one or two cache lines to fetch
   * when traffic spreads over many rulesets, instead of a histogram object, its array and a box
   * per code. A block of its owner's shared chunks, or an array of its own once detached.
   */
  private data: Float64Array;
  private at: number;
  /** The terminal code recorded last and its offset in the block (-1: counted in `overflow`). */
  private lastCode: string | undefined = undefined;
  private lastSlot = -1;
  readonly name: string;
  readonly tenant: string;
  /** Terminal code → its offset in the block, in the order first seen. */
  private readonly slots = new Map<string, number>();
  /** Counts of the codes past the first `CODE_SLOTS`, in the order first seen (rare). */
  private overflow: Map<string, number> | null = null;
  /** The shared chunks its block is in (null: an array of its own). */
  private slab: MetricsSlab | null;

  /** @internal Made by `Metrics.ruleset`. */
  constructor(name: string, tenant: string = DEFAULT_TENANT, owner: unknown = null, slab: MetricsSlab | null = null) {
    this.owner = owner;
    const block = slab === null ? { data: new Float64Array(BLOCK), at: 0 } : slab.take();
    this.data = block.data;
    this.at = block.at;
    this.name = name;
    this.tenant = tenant;
    this.slab = slab;
  }

  /** Successful executions. */
  get success(): number {
    return this.data[this.at + SUCCESS] as number;
  }

  /** Failed executions. */
  get error(): number {
    return this.data[this.at + ERROR] as number;
  }

  /** The execution duration histogram (a view of its numbers, read at scrape time). */
  get duration(): HistogramData {
    return new HistogramData(EXECUTION_BUCKETS, this.data, this.at + DURATION);
  }

  /** The compilation duration histogram (a view of its numbers, read at scrape time). */
  get compilation(): HistogramData {
    return new HistogramData(COMPILATION_BUCKETS, this.data, this.at + COMPILATION);
  }

  /** Count per terminal code, in the order the codes were first recorded. */
  *codes(): IterableIterator<[string, number]> {
    for (const [code, slot] of this.slots) yield [code, this.data[this.at + slot] as number];
    if (this.overflow !== null) yield* this.overflow;
  }

  /** Records one execution: its duration in seconds, its outcome and (on success) its terminal code. */
  record(seconds: number, ok: boolean, code?: string): void {
    const data = this.data;
    const at = this.at;
    if (ok) data[at + SUCCESS] = (data[at + SUCCESS] as number) + 1;
    else data[at + ERROR] = (data[at + ERROR] as number) + 1;
    observeInto(data, at + DURATION, EXECUTION_BUCKETS, seconds);
    if (ok && code !== undefined) {
      // NOTE (speed, bench/NOTES.md "Many rulesets"): the code of the previous execution is
      // checked first; the map (and its table, a memory fetch when the ruleset ran long ago) only
      // when the code differs.
      if (code === this.lastCode && this.lastSlot >= 0) {
        data[at + this.lastSlot] = (data[at + this.lastSlot] as number) + 1;
        return;
      }
      this.countCode(code);
    }
  }

  /** Counts one more `code` (not the last one recorded). */
  private countCode(code: string): void {
    let slot = this.slots.get(code);
    if (slot === undefined && this.slots.size < CODE_SLOTS) {
      slot = CODES + this.slots.size;
      this.slots.set(code, slot);
    }
    this.lastCode = code;
    if (slot !== undefined) {
      this.data[this.at + slot] = (this.data[this.at + slot] as number) + 1;
      this.lastSlot = slot;
      return;
    }
    const overflow = (this.overflow ??= new Map());
    overflow.set(code, (overflow.get(code) ?? 0) + 1);
    this.lastSlot = -1;
  }

  /** Records how long compiling this ruleset took, in seconds. */
  compiled(seconds: number): void {
    observeInto(this.data, this.at + COMPILATION, COMPILATION_BUCKETS, seconds);
  }

  /**
   * @internal Called by `Metrics` when it stops exporting this handle: its numbers move to an
   * array of its own (a holder may still record into it) and its block goes back for reuse.
   */
  detach(): void {
    const slab = this.slab;
    if (slab === null) return;
    const own = this.data.slice(this.at, this.at + BLOCK);
    slab.give(this.data, this.at);
    this.data = own;
    this.at = 0;
    this.slab = null;
  }
}

/** Every metric of the service, rendered by `GET /metrics`. */
export class Metrics {
  /** The private registry (exposed for tests and for adding a metric in one place). */
  readonly registry = new Registry();
  /** Content-Type of `render()`'s text. */
  readonly contentType: string = this.registry.contentType;

  private readonly now: () => number;
  private readonly startTime: number;
  private rulesCount: () => number;
  private active = 0;
  private readonly rulesets = new Map<string, RulesetMetrics>();
  /** Where the rulesets' numbers are kept (see `MetricsSlab`). */
  private readonly slab = new MetricsSlab();
  /** Handles of tenants other than `default`: tenant → name → handle (multi-tenancy mode). */
  private readonly tenantRulesets = new Map<string, Map<string, RulesetMetrics>>();
  private readonly tenantLabel: boolean;
  private evalSuccess = 0;
  private evalError = 0;
  private readonly evalDuration = new HistogramData(EXECUTION_BUCKETS);

  constructor(options: MetricsOptions) {
    this.now = options.now ?? Date.now;
    this.startTime = options.startTime ?? this.now();
    this.rulesCount = options.rulesCount ?? (() => 0);
    this.tenantLabel = options.tenantLabel === true;
    const registry = this.registry;
    const registers = [registry];
    // NOTE: prom-client calls collect() with the metric as `this`, so the registry is reached
    // through this alias.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;

    // Spec order: info, uptime, rules, executions, execution duration, terminal results,
    // eval total, eval duration, active executions, compilation duration.
    new Gauge({ name: 'svc_info', help: 'Server information, value 1', labelNames: ['version'], registers }).set({ version: options.version }, 1);
    new Counter({
      name: 'svc_uptime_seconds',
      help: 'Uptime in seconds',
      registers,
      collect() {
        this.reset();
        this.inc(Math.max(0, (self.now() - self.startTime) / 1000));
      },
    });
    new Gauge({
      name: 'svc_rules_total',
      help: 'Number of loaded rules',
      registers,
      collect() {
        this.set(self.rulesCount());
      },
    });
    registerCounterFamily(registry, 'svc_executions_total', 'Executions', function* () {
      for (const r of self.handles()) {
        yield [{ ...self.labelsOf(r), result: 'success' }, r.success];
        yield [{ ...self.labelsOf(r), result: 'error' }, r.error];
      }
    });
    registerHistogramFamily(registry, 'svc_execution_duration_seconds', 'Execution duration', function* () {
      for (const r of self.handles()) {
        const duration = r.duration;
        if (duration.count > 0) yield [{ ...self.labelsOf(r) }, duration];
      }
    });
    registerCounterFamily(registry, 'svc_terminal_results_total', 'Terminal result distribution', function* () {
      for (const r of self.handles()) {
        for (const [code, n] of r.codes()) yield [{ ...self.labelsOf(r), code }, n];
      }
    });
    registerCounterFamily(registry, 'svc_eval_total', 'Expression evaluations', function* () {
      yield [{ result: 'success' }, self.evalSuccess];
      yield [{ result: 'error' }, self.evalError];
    });
    registerHistogramFamily(registry, 'svc_eval_duration_seconds', 'Evaluation duration', function* () {
      yield [{}, self.evalDuration];
    });
    new Gauge({
      name: 'svc_active_executions',
      help: 'Executions currently running',
      registers,
      collect() {
        this.set(self.active);
      },
    });
    registerHistogramFamily(registry, 'svc_compilation_duration_seconds', 'Rule compilation duration', function* () {
      for (const r of self.handles()) {
        const compilation = r.compilation;
        if (compilation.count > 0) yield [{ ...self.labelsOf(r) }, compilation];
      }
    });
    // Shadow runs (EXTENSIONS.md 4): candidate runs by agreement with the live answer.
    registerCounterFamily(registry, 'svc_shadow_executions_total', 'Shadow candidate executions by agreement with the live result', function* () {
      for (const [, s] of self.shadowCounts) {
        const labels: Record<string, string> = self.tenantLabel ? { ruleset: s.ruleset, tenant: s.tenant } : { ruleset: s.ruleset };
        yield [{ ...labels, agreement: 'agree' }, s.agree];
        yield [{ ...labels, agreement: 'disagree' }, s.disagree];
        yield [{ ...labels, agreement: 'error' }, s.error];
      }
    });
  }

  /** Shadow candidate runs per tenant and ruleset (`svc_shadow_executions_total`). */
  private readonly shadowCounts = new Map<string, { ruleset: string; tenant: string; agree: number; disagree: number; error: number }>();

  /** Records one candidate run of a shadow (EXTENSIONS.md 4). */
  recordShadow(ruleset: string, agreement: 'agree' | 'disagree' | 'error', tenant: string = DEFAULT_TENANT): void {
    const key = `${tenant}\u0000${ruleset}`;
    let s = this.shadowCounts.get(key);
    if (s === undefined) this.shadowCounts.set(key, (s = { ruleset, tenant, agree: 0, disagree: 0, error: 0 }));
    s[agreement]++;
  }

  /** Replaces the source of `svc_rules_total` (the store exists after the metrics). */
  setRulesCount(count: () => number): void {
    this.rulesCount = count;
  }

  /**
   * The handle of one ruleset, created on first use (its success and error execution
   * counters then show 0). Hold it, or call `recordExecution`, which looks it up.
   */
  ruleset(name: string, tenant?: string): RulesetMetrics {
    if (tenant !== undefined && tenant !== DEFAULT_TENANT) return this.tenantRuleset(name, tenant);
    let handle = this.rulesets.get(name);
    if (handle === undefined) {
      handle = new RulesetMetrics(name, DEFAULT_TENANT, this, this.slab);
      this.rulesets.set(name, handle);
    }
    return handle;
  }

  /** Records one execution of `ruleset` (seconds; `code` is the terminal code when ok). */
  recordExecution(ruleset: string, seconds: number, ok: boolean, code?: string, tenant?: string): void {
    this.ruleset(ruleset, tenant).record(seconds, ok, code);
  }

  /** Records one `/eval` evaluation (seconds). */
  recordEval(seconds: number, ok: boolean): void {
    if (ok) this.evalSuccess++;
    else this.evalError++;
    this.evalDuration.observe(seconds);
  }

  /** One more execution running (`svc_active_executions`). */
  activeInc(): void {
    this.active++;
  }

  /** One execution fewer running (never below 0). */
  activeDec(): void {
    if (this.active > 0) this.active--;
  }

  /** Records how long compiling `ruleset` took (seconds). */
  observeCompilation(ruleset: string, seconds: number, tenant?: string): void {
    this.ruleset(ruleset, tenant).compiled(seconds);
  }

  /**
   * Drops every series of a deleted ruleset, so deleted names do not linger in scrapes.
   * A handle held elsewhere keeps counting but is no longer exported.
   */
  forgetRuleset(name: string, tenant?: string): void {
    if (tenant !== undefined && tenant !== DEFAULT_TENANT) {
      const names = this.tenantRulesets.get(tenant);
      names?.get(name)?.detach();
      names?.delete(name);
      if (names?.size === 0) this.tenantRulesets.delete(tenant);
      return;
    }
    this.rulesets.get(name)?.detach();
    this.rulesets.delete(name);
  }

  /** The handle of a ruleset of a tenant other than `default` (see `ruleset`). */
  private tenantRuleset(name: string, tenant: string): RulesetMetrics {
    let names = this.tenantRulesets.get(tenant);
    if (names === undefined) {
      names = new Map();
      this.tenantRulesets.set(tenant, names);
    }
    let handle = names.get(name);
    if (handle === undefined) {
      handle = new RulesetMetrics(name, tenant, this, this.slab);
      names.set(name, handle);
    }
    return handle;
  }

  /** Every ruleset handle: `default` first, then the other tenants (scrape time only). */
  private *handles(): Generator<RulesetMetrics> {
    yield* this.rulesets.values();
    for (const names of this.tenantRulesets.values()) yield* names.values();
  }

  /** The identifying labels of a handle's series: `ruleset`, plus `tenant` in multi-tenancy mode. */
  private labelsOf(r: RulesetMetrics): Record<string, string> {
    return this.tenantLabel ? { ruleset: r.name, tenant: r.tenant } : { ruleset: r.name };
  }

  /** The exposition text of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
