/**
 * Satisfiability of a conjunction of the filter's predicates, by case split on its disjunctions.
 * Every step is the filter's own exact simplification (simplify.ts `conjoin` / `finishPath`,
 * which decide the literals of one field with the engine's semantics), so `unsat` is a proof:
 * no input satisfies the conjunction. A leaf (a conjunction with no disjunction left) is only a
 * candidate: opaque (`unsupported`) conditions and literals the reduction does not relate may
 * still contradict; witnesses built from leaves are therefore checked by executing them.
 */
import type { Pred } from '../filter/predicate.js';
import { conjoin, finishPath, type Path } from '../filter/simplify.js';

/** What the search found. */
export interface Solution {
  /** True when no input satisfies the conjunction (proved). */
  readonly unsat: boolean;
  /** Candidate conjunctions without disjunctions, in search order (at most `maxLeaves`). */
  readonly leaves: readonly Path[];
  /**
   * True when `leaves` are all the leaves of the conjunction: the search ended neither at
   * `maxLeaves` nor at the budget (the behavioural diff reads it to drop a region whose every
   * leaf contradicts itself, change/behavior.ts).
   */
  readonly complete: boolean;
}

/** Default bound on the paths the case split visits. */
const DEFAULT_BUDGET = 512;

/** Searches `preds` (a conjunction) for leaves; stops after `maxLeaves` of them or `budget` visits. */
export function solve(preds: readonly Pred[], maxLeaves = 1, budget = DEFAULT_BUDGET): Solution {
  let start: Path | null = [];
  for (const p of preds) {
    start = conjoin(start, p);
    if (start === null) return UNSAT;
  }
  const stack: Path[] = [start];
  const leaves: Path[] = [];
  let visits = 0;
  while (stack.length > 0) {
    if (++visits > budget) return { unsat: false, leaves, complete: false };
    const path = finishPath(stack.pop()!);
    if (path === null) continue;
    const i = path.findIndex((c) => c.type === 'or');
    if (i < 0) {
      leaves.push(path);
      if (leaves.length >= maxLeaves && stack.length > 0) return { unsat: false, leaves, complete: false };
      continue;
    }
    const split = path[i]!;
    const rest = [...path.slice(0, i), ...path.slice(i + 1)];
    const parts = split.type === 'or' ? split.conditions : [];
    // Pushed in reverse so the first disjunct is tried first.
    for (let k = parts.length - 1; k >= 0; k--) {
      const next = conjoin(rest, parts[k]!);
      if (next !== null) stack.push(next);
    }
  }
  return { unsat: leaves.length === 0, leaves, complete: true };
}

const UNSAT: Solution = Object.freeze({ unsat: true, leaves: Object.freeze([]), complete: true });
