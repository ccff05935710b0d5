/**
 * Shadow runs (EXTENSIONS.md 4 "Shadow runs"): the live shadows of this instance and what they
 * counted. A shadow is a candidate version of a ruleset that runs on about `sample_rate` percent
 * of the ruleset's live executions, after the live answer is written, never changing it.
 *
 * Hot path (bench/NOTES.md, bench/shadow.ts): the execution runner tests `size` (one field) and
 * calls `offer` only when some shadow exists. `offer` finds the ruleset's shadow (two map
 * lookups), samples it with a rate accumulator (no random number: every ⌈100/rate⌉-th execution,
 * spread evenly) and queues the input. The queue is bounded (`MAX_SHADOW_QUEUE`): past it, a
 * sampled execution is dropped and counted (`dropped`). It is drained by one `setImmediate`
 * per burst, i.e. after the request's answer was written: the candidate never runs on the
 * caller's latency.
 *
 * Counters are per instance (each reader counts the traffic it serves) and start at 0 when the
 * shadow is put or the process starts; they are not persisted or synchronized.
 */
import type { CompiledRuleset } from '../ruleset/compile.js';
import { ExecutionError, type ExecutionResult } from '../ruleset/result.js';
import type { ShadowRecord } from '../store/shadow-record.js';

/** How a candidate's outcome compares with the live one (`svc_shadow_executions_total{agreement}`). */
export type ShadowAgreement = 'agree' | 'disagree' | 'error';

/** The last examples kept per shadow (a ring). */
export const MAX_SHADOW_EXAMPLES = 20;
/** Sampled executions waiting for their candidate run, over all shadows; past it they are dropped. */
export const MAX_SHADOW_QUEUE = 1024;

/** One transition between the live code and the candidate's outcome. */
export interface ShadowTransition {
  readonly from: string;
  readonly to: string;
  count: number;
}

/** One disagreement (or candidate error) kept as an example. */
export interface ShadowExample {
  readonly input: unknown;
  readonly from: string;
  readonly to: string;
  readonly at: string;
}

/** The counting part of `GET /api/v1/rulesets/:name/shadow`. */
export interface ShadowCounts {
  readonly executed: number;
  readonly agreed: number;
  readonly disagreed: number;
  readonly errors: number;
  readonly dropped: number;
  readonly transitions: ShadowTransition[];
  readonly examples: ShadowExample[];
}

/** Runs the candidate on an input for a tenant (untraced, the live options); throws on failure. */
export type CandidateRun = (tenant: string, compiled: CompiledRuleset, input: unknown) => ExecutionResult;

/** Collaborators of the registry. */
export interface ShadowRegistryDeps {
  readonly runCandidate: CandidateRun;
  /** `svc_shadow_executions_total{ruleset, agreement}`. */
  readonly record?: (ruleset: string, agreement: ShadowAgreement, tenant: string) => void;
  /** Wall clock (ms since the epoch) for the examples' `at`. */
  readonly now: () => number;
  /** Defers the drain (tests may pass their own); default `setImmediate`. */
  readonly defer?: (fn: () => void) => void;
  readonly maxQueue?: number;
}

/** The state of one live shadow on this instance. */
export class ShadowState {
  private acc = 0;
  executed = 0;
  agreed = 0;
  disagreed = 0;
  errors = 0;
  dropped = 0;
  private readonly transitions = new Map<string, ShadowTransition>();
  private readonly ring: ShadowExample[] = [];
  private next = 0;

  constructor(
    readonly record: ShadowRecord,
    readonly compiled: CompiledRuleset,
  ) {}

  /** True for about `sampleRate` percent of the calls (an accumulator: exact over 100 calls). */
  sample(): boolean {
    this.acc += this.record.sampleRate;
    if (this.acc < 100) return false;
    this.acc -= 100;
    return true;
  }

  /** Counts one candidate outcome against the live code. */
  count(input: unknown, from: string, to: string, agreement: ShadowAgreement, at: string): void {
    this.executed++;
    if (agreement === 'agree') {
      this.agreed++;
      return;
    }
    if (agreement === 'disagree') this.disagreed++;
    else this.errors++;
    const k = `${from}\u0000${to}`;
    const t = this.transitions.get(k);
    if (t === undefined) this.transitions.set(k, { from, to, count: 1 });
    else t.count++;
    const example: ShadowExample = { input, from, to, at };
    if (this.ring.length < MAX_SHADOW_EXAMPLES) this.ring.push(example);
    else this.ring[this.next] = example;
    this.next = (this.next + 1) % MAX_SHADOW_EXAMPLES;
  }

  /** The counters, transitions (most frequent first) and examples (oldest first). */
  counts(): ShadowCounts {
    const examples = this.ring.length < MAX_SHADOW_EXAMPLES ? [...this.ring] : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    const transitions = [...this.transitions.values()].map((t) => ({ ...t })).sort((a, b) => b.count - a.count || cmp(a.from, b.from) || cmp(a.to, b.to));
    return { executed: this.executed, agreed: this.agreed, disagreed: this.disagreed, errors: this.errors, dropped: this.dropped, transitions, examples };
  }
}

interface Pending {
  readonly state: ShadowState;
  readonly input: unknown;
  readonly from: string;
}

/** Prefix of a failed candidate's outcome: `error:<REASON>` (as impact over inputs). */
export const SHADOW_ERROR_PREFIX = 'error:';

/** The live shadows of this instance (see the module comment). */
export class ShadowRegistry {
  /** How many shadows are live: the execution runner's one test on the hot path. */
  size = 0;
  private readonly byTenant = new Map<string, Map<string, ShadowState>>();
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly defer: (fn: () => void) => void;
  private readonly maxQueue: number;

  constructor(private readonly deps: ShadowRegistryDeps) {
    this.defer = deps.defer ?? ((fn) => void setImmediate(fn));
    this.maxQueue = deps.maxQueue ?? MAX_SHADOW_QUEUE;
  }

  /** The shadow of a ruleset, or undefined. */
  get(tenant: string, name: string): ShadowState | undefined {
    return this.byTenant.get(tenant)?.get(name);
  }

  /** Starts (or replaces, counters reset) the shadow of `record`'s ruleset; keeps the state when the version is the same. */
  set(record: ShadowRecord, compiled: CompiledRuleset): ShadowState {
    let names = this.byTenant.get(record.tenant);
    if (names === undefined) this.byTenant.set(record.tenant, (names = new Map()));
    const held = names.get(record.name);
    if (held !== undefined && held.record.version === record.version) return held;
    const state = new ShadowState(record, compiled);
    names.set(record.name, state);
    this.recount();
    return state;
  }

  /** Ends the shadow of a ruleset (queued runs of it are discarded). */
  remove(tenant: string, name: string): boolean {
    const names = this.byTenant.get(tenant);
    if (names === undefined || !names.delete(name)) return false;
    if (names.size === 0) this.byTenant.delete(tenant);
    this.recount();
    return true;
  }

  /**
   * A live execution of `tenant`'s ruleset `name` answered `code`: queue a candidate run of the
   * input when the ruleset has a shadow and this execution is sampled.
   */
  offer(tenant: string, name: string, input: unknown, code: string): void {
    const state = this.byTenant.get(tenant)?.get(name);
    if (state === undefined || !state.sample()) return;
    if (this.queue.length >= this.maxQueue) {
      state.dropped++;
      return;
    }
    this.queue.push({ state, input, from: code });
    if (!this.scheduled) {
      this.scheduled = true;
      this.defer(this.drain);
    }
  }

  /** Runs the queued candidate executions (see the module comment). */
  readonly drain = (): void => {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    const at = new Date(this.deps.now()).toISOString();
    for (const { state, input, from } of items) {
      const { tenant, name } = state.record;
      // A shadow replaced or ended since: its queued runs are not counted.
      if (this.get(tenant, name) !== state) continue;
      let to: string;
      let agreement: ShadowAgreement;
      try {
        to = this.deps.runCandidate(tenant, state.compiled, input).code;
        agreement = to === from ? 'agree' : 'disagree';
      } catch (err) {
        to = SHADOW_ERROR_PREFIX + errorCode(err);
        agreement = 'error';
      }
      state.count(input, from, to, agreement, at);
      this.deps.record?.(name, agreement, tenant);
    }
  };

  private recount(): void {
    let n = 0;
    for (const names of this.byTenant.values()) n += names.size;
    this.size = n;
  }
}

/** The reason of a failed candidate run: the engine's reason, else the catalog code (an input its schema refuses: INVALID_INPUT). */
function errorCode(err: unknown): string {
  if (err instanceof ExecutionError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'INTERNAL_ERROR';
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
