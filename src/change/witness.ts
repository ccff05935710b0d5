/**
 * Witnesses of the behavioural diff (EXTENSIONS.md 4): an input built from a region's leaves
 * (the literals of a conjunction without disjunctions solved field by field, analysis/witness.ts)
 * and kept only when executing both versions on it gives the region's two codes.
 */
import type { CalleeResolver } from '../filter/index.js';
import { collectPaths } from '../analysis/analyze.js';
import { inputFor, setPath, type Input } from '../analysis/witness.js';
import type { JsonValue } from '../expr/ast.js';
import type { Path } from '../filter/simplify.js';
import { ExecutionError, execute, stepExpressions, type CompiledRuleset } from '../ruleset/index.js';
import { moreLeaves, type PairRegion } from './pairs.js';

/** Candidate inputs tried per region (each is at most two executions). */
const MAX_TRIES = 16;
/** Pairs whose first leaf is tried, then pairs searched for more leaves, per region. */
const FIRST_LEAF_PAIRS = 8;
const MORE_LEAF_PAIRS = 2;

/** Values given, in turn, to the fields a leaf leaves open (opaque conditions), after null. */
const FILLERS: readonly JsonValue[] = Object.freeze([0, '', false, 1, 'x', true]);

const EXEC = Object.freeze({ clock: () => 0, timeoutMs: 0, maxSteps: 10_000 });

/** The code `compiled` gives for `input`, or null when the execution fails. */
export function codeOf(compiled: CompiledRuleset, input: Input, calls?: CalleeResolver): string | null {
  // NOTE (speed): failed candidates are common; their stack traces are never read.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return execute(compiled, input, calls === undefined ? EXEC : { ...EXEC, calls }).code;
  } catch (err) {
    if (err instanceof ExecutionError) return null;
    throw err;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** What the witness search of one diff shares: both versions and the fields they read. */
export class WitnessSearch {
  /** Every input path either version reads, deepest first (a filler never blocks a deeper path). */
  private readonly fields: readonly string[];
  /** Fields present in every candidate: all of them when a version is strict (a missing field fails there). */
  private readonly fill: readonly string[];

  constructor(
    private readonly from: CompiledRuleset,
    private readonly to: CompiledRuleset,
    /** Call steps run the tenant's rulesets (EXTENSIONS.md 3). */
    private readonly calls?: CalleeResolver,
  ) {
    const set = new Set<string>();
    for (const c of [from, to]) for (const step of c.steps.values()) for (const e of stepExpressions(step)) collectPaths(e.ast, set);
    this.fields = [...set].sort((a, b) => b.length - a.length);
    this.fill = from.fieldMissing === 'strict' || to.fieldMissing === 'strict' ? this.fields : [];
  }

  /**
   * An input on which the old version gives `fromCode` and the new one `toCode`, or null: the
   * first leaf of the region's first pairs, then more leaves of its first two pairs.
   */
  find(pairs: readonly PairRegion[], fromCode: string, toCode: string): Input | null {
    const budget = { tries: MAX_TRIES };
    for (const pair of pairs.slice(0, FIRST_LEAF_PAIRS)) {
      const leaf = pair.leaves[0];
      const found = leaf === undefined ? null : this.tryLeaf(leaf, fromCode, toCode, budget);
      if (found !== null || budget.tries <= 0) return found;
    }
    for (const pair of pairs.slice(0, MORE_LEAF_PAIRS)) {
      if (pair.searched) continue;
      moreLeaves(pair);
      for (const leaf of pair.leaves.slice(1)) {
        const found = this.tryLeaf(leaf, fromCode, toCode, budget);
        if (found !== null || budget.tries <= 0) return found;
      }
    }
    return null;
  }

  private tryLeaf(leaf: Path, fromCode: string, toCode: string, budget: { tries: number }): Input | null {
    const base = inputFor(leaf, this.fill);
    if (base === undefined) return null;
    for (const candidate of this.variants(base)) {
      if (--budget.tries < 0) return null;
      if (codeOf(this.from, candidate, this.calls) === fromCode && codeOf(this.to, candidate, this.calls) === toCode) return candidate;
    }
    return null;
  }

  /** The leaf's input, then the same with the fields it leaves open set to a few plain values. */
  private *variants(base: Input): Generator<Input> {
    yield base;
    for (const v of FILLERS) {
      const input = structuredClone(base);
      for (const f of this.fields) setPath(input, f, v, true);
      yield input;
    }
  }
}
