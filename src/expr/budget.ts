/**
 * The work budget of one evaluation (EXTENSIONS.md 6 "Work budget", docs/expressions.md
 * "Limits at run time"): a string an expression builds is at most `maxValueBytes` UTF-8 bytes,
 * an array at most MAX_ARRAY_ELEMENTS elements, and element-wise work (deep equality,
 * membership, `sum`, string scans...) counts operations toward `maxOps`. The deadline of the
 * execution is checked inside that counting, so one step cannot outrun its timeout.
 *
 * NOTE (speed): evaluation is synchronous, so the budget is one module-level meter that the
 * caller arms at the start of an execution (`armBudget`) and disarms at its end
 * (`disarmBudget`); nothing is counted per node, only where work is proportional to data size,
 * and the clock is read once every CHECK_PERIOD operations. The engine never reads a clock of
 * its own: the caller's clock comes in through `armBudget`.
 */
import { BudgetError } from './errors.js';

/** Default `--max-value-bytes`: the largest string an evaluation may build (1 MiB). */
export const DEFAULT_MAX_VALUE_BYTES = 1_048_576;
/** Default `--max-eval-ops`: element-wise operations per execution. */
export const DEFAULT_MAX_EVAL_OPS = 10_000_000;
/** Most elements of an array an evaluation builds (EXTENSIONS.md 6, fixed). */
export const MAX_ARRAY_ELEMENTS = 100_000;
/** Operations between two deadline checks (one clock read each). */
const CHECK_PERIOD = 1 << 16;

/** The limits one execution or `/eval` runs under. */
export interface BudgetLimits {
  /** Element-wise operations allowed (`--max-eval-ops`). */
  readonly maxEvalOps: number;
  /** Largest string built, in UTF-8 bytes (`--max-value-bytes`). */
  readonly maxValueBytes: number;
}

/** The default limits (the flags' defaults). */
export const DEFAULT_BUDGET: BudgetLimits = Object.freeze({ maxEvalOps: DEFAULT_MAX_EVAL_OPS, maxValueBytes: DEFAULT_MAX_VALUE_BYTES });

/** The meter's state. Read `ops` after an execution to learn what it spent. */
interface Meter {
  /** Operations counted since the meter was armed. */
  ops: number;
  /** When `ops` passes this, `checkBudget` runs (the smaller of the next clock check and maxOps). */
  nextCheck: number;
  maxOps: number;
  maxValueBytes: number;
  /** Strings up to this length fit whatever their content (3 bytes per UTF-16 unit at most). */
  safeLength: number;
  /** Absolute deadline on `clock`, or Infinity. */
  deadline: number;
  /** The timeout the deadline stands for (ms), for the error. */
  timeoutMs: number;
  started: number;
  clock: (() => number) | null;
}

/**
 * The one meter. Disarmed (no operation limit, no deadline, the default string limit) outside
 * an execution, e.g. while constants are folded at compile time.
 */
export const meter: Meter = {
  ops: 0,
  nextCheck: Infinity,
  maxOps: Infinity,
  maxValueBytes: DEFAULT_MAX_VALUE_BYTES,
  safeLength: Math.floor(DEFAULT_MAX_VALUE_BYTES / 3),
  deadline: Infinity,
  timeoutMs: 0,
  started: 0,
  clock: null,
};

/**
 * Arms the meter for one execution started at `started` (a reading of `clock`); `timeoutMs`
 * 0 or less means no deadline. Counting starts from zero.
 */
export function armBudget(limits: BudgetLimits, clock: () => number, started: number, timeoutMs: number): void {
  const m = meter;
  m.ops = 0;
  m.maxOps = limits.maxEvalOps;
  if (m.maxValueBytes !== limits.maxValueBytes) {
    m.maxValueBytes = limits.maxValueBytes;
    m.safeLength = Math.floor(limits.maxValueBytes / 3);
  }
  if (timeoutMs > 0) {
    m.clock = clock;
    m.started = started;
    m.timeoutMs = timeoutMs;
    m.deadline = started + timeoutMs;
    m.nextCheck = CHECK_PERIOD < m.maxOps ? CHECK_PERIOD : m.maxOps;
  } else {
    m.clock = null;
    m.deadline = Infinity;
    m.nextCheck = m.maxOps;
  }
}

/** Disarms the meter (end of an execution): no operation limit, no deadline. `ops` is kept. */
export function disarmBudget(): void {
  const m = meter;
  m.maxOps = Infinity;
  m.nextCheck = Infinity;
  m.deadline = Infinity;
  m.clock = null;
}

/** Counts `n` element-wise operations; throws BudgetError when the budget or the deadline is passed. */
export function charge(n: number): void {
  if ((meter.ops += n) > meter.nextCheck) checkBudget();
}

/** The slow part of `charge`: the operation limit, then the deadline (one clock read). */
function checkBudget(): void {
  const m = meter;
  if (m.ops > m.maxOps) {
    throw new BudgetError('ops', `evaluation exceeded the work budget of ${m.maxOps} operations (--max-eval-ops)`);
  }
  if (m.clock !== null) {
    const now = m.clock();
    if (now >= m.deadline) {
      throw new BudgetError('deadline', `execution timed out after ${m.timeoutMs} ms`, m.timeoutMs, now - m.started);
    }
  }
  const next = m.ops + CHECK_PERIOD;
  m.nextCheck = next < m.maxOps ? next : m.maxOps;
}

/**
 * Checks a string the evaluation built against `--max-value-bytes` and returns it. NOTE
 * (speed): a string of at most a third of the limit in UTF-16 units fits whatever it holds, so
 * the exact UTF-8 length is only computed near the limit.
 */
export function checkString(s: string): string {
  if (s.length <= meter.safeLength) return s;
  if (s.length > meter.maxValueBytes || Buffer.byteLength(s, 'utf8') > meter.maxValueBytes) {
    throw new BudgetError('bytes', `a string of more than ${meter.maxValueBytes} bytes was built (--max-value-bytes)`);
  }
  return s;
}

/** Checks the element count of an array the evaluation builds (MAX_ARRAY_ELEMENTS). */
export function checkArrayLength(n: number): void {
  if (n > MAX_ARRAY_ELEMENTS) {
    throw new BudgetError('elements', `an array of more than ${MAX_ARRAY_ELEMENTS} elements was built`);
  }
}
