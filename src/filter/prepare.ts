/**
 * What the filter needs from a ruleset, prepared once per document object: the compiled ruleset
 * (validated, every expression parsed) and the reverse edges of the step graph. Cached in a
 * WeakMap keyed by the document, so repeated filter calls on a stored ruleset parse nothing and
 * the cache entry goes away with the document.
 */
import { ServiceError } from '../service/errors.js';
import { RulesetValidationError, compileRuleset, type CompiledRuleset, type RulesetDoc, type StepInfo } from '../ruleset/index.js';

/** A ruleset prepared for filter generation. */
export interface PreparedRuleset {
  readonly compiled: CompiledRuleset;
  /** Step id → ids of the steps that lead to it. */
  readonly predecessors: ReadonlyMap<string, readonly string[]>;
  /** Terminal code → ids of the terminal steps with that code. */
  readonly terminalsByCode: ReadonlyMap<string, readonly string[]>;
}

const CACHE = new WeakMap<object, PreparedRuleset>();

/** The prepared form of `doc` (computed on first use, then cached for that object). */
export function prepare(doc: RulesetDoc): PreparedRuleset {
  let prepared = CACHE.get(doc);
  if (prepared === undefined) {
    prepared = build(doc);
    CACHE.set(doc, prepared);
  }
  return prepared;
}

function build(doc: RulesetDoc): PreparedRuleset {
  let compiled: CompiledRuleset;
  try {
    compiled = compileRuleset(doc);
  } catch (err) {
    if (err instanceof RulesetValidationError) {
      throw new ServiceError('INTERNAL_ERROR', `filter compilation failed: the ruleset is not valid: ${err.message}`);
    }
    throw err;
  }
  const predecessors = new Map<string, string[]>();
  const terminalsByCode = new Map<string, string[]>();
  const edge = (from: string, to: string): void => {
    const list = predecessors.get(to);
    if (list === undefined) predecessors.set(to, [from]);
    else if (!list.includes(from)) list.push(from);
  };
  for (const step of compiled.steps.values()) {
    for (const next of successors(step)) edge(step.id, next);
    if (step.type === 'terminal') {
      const list = terminalsByCode.get(step.code);
      if (list === undefined) terminalsByCode.set(step.code, [step.id]);
      else list.push(step.id);
    }
  }
  return { compiled, predecessors, terminalsByCode };
}

/** The steps a step can go to next. */
export function successors(step: StepInfo): string[] {
  switch (step.type) {
    case 'decision':
      return [...step.branches.map((b) => b.nextStep), ...(step.defaultNext === null ? [] : [step.defaultNext])];
    case 'action':
      return [step.nextStep];
    case 'terminal':
      return [];
  }
}

/** Ids of the steps from which a terminal with one of `codes` can be reached. */
export function liveSteps(prepared: PreparedRuleset, codes: ReadonlySet<string>): Set<string> {
  const live = new Set<string>();
  const queue: string[] = [];
  for (const code of codes) {
    for (const id of prepared.terminalsByCode.get(code) ?? []) {
      if (!live.has(id)) {
        live.add(id);
        queue.push(id);
      }
    }
  }
  while (queue.length > 0) {
    const id = queue.pop()!;
    for (const p of prepared.predecessors.get(id) ?? []) {
      if (!live.has(p)) {
        live.add(p);
        queue.push(p);
      }
    }
  }
  return live;
}
