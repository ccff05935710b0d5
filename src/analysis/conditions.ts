/**
 * The branch conditions of a compiled ruleset as the filter's predicates (src/filter): each
 * condition partially evaluated with nothing known, then turned into the rows on which it is true
 * and the rows on which it is false. Reusing the filter's representation means the analysis
 * decides exactly what the filter decides (field-reduce.ts, simplify.ts), and says nothing about
 * the forms the filter cannot write (`unsupported` stays opaque).
 *
 * NOTE (soundness): `whenTrue` / `whenFalse` are exact or supersets (condition.ts), never subsets,
 * so "this conjunction cannot hold" proved on them holds for the engine too.
 */
import { toCondition, type Condition } from '../filter/condition.js';
import { newExprMemo, partialEval, type KnownInput } from '../filter/partial-eval.js';
import type { CompiledRuleset, DecisionInfo } from '../ruleset/index.js';

/** The conditions of one decision step's branches, in order. */
export function decisionConditions(compiled: CompiledRuleset, step: DecisionInfo, known: KnownInput): Condition[] {
  return step.branches.map((b) => toCondition(partialEval(b.ast, known)));
}

/** Nothing known: every input field is a column; reference data (`@name`) is not known either. */
export function nothingKnown(compiled: CompiledRuleset): KnownInput {
  return { root: {}, fieldMissing: compiled.fieldMissing, memo: newExprMemo(), opaqueData: true };
}
