/**
 * Calls between rulesets (EXTENSIONS.md 3 "Calling another ruleset"), checked where the stored
 * rulesets are known: a ruleset about to be stored must not close a call cycle (a 400 problem at
 * the call step's `ruleset`), and its calls must not nest deeper than the engine's limit.
 * A callee that does not exist yet is allowed (it may be created next); calling it before then
 * fails with CALL_FAILED.
 */
import type { CompiledRuleset, StepInfo } from '../ruleset/index.js';
import { MAX_CALL_DEPTH } from '../ruleset/execute.js';
import type { Problem } from '../ruleset/result.js';
import { joinKey } from '../ruleset/json.js';
import { ServiceError } from './errors.js';

/** The current version of a ruleset of the same tenant by name. */
export type CalleeLookup = (name: string) => CompiledRuleset | undefined;

/**
 * Throws BAD_REQUEST with a problem per call step of `compiled` that leads back to it (`a -> b
 * -> a`), or whose chain of calls is deeper than MAX_CALL_DEPTH. `lookup` reads the stored
 * rulesets; `compiled` stands in for its own name.
 */
export function assertCallsAcyclic(compiled: CompiledRuleset, lookup: CalleeLookup): void {
  if (compiled.calls.length === 0) return;
  const read = (name: string): CompiledRuleset | undefined => (name === compiled.name ? compiled : lookup(name));
  const problems: Problem[] = [];
  for (const step of compiled.steps.values()) {
    if (step.type !== 'call') continue;
    const cycle = findCycle(step, compiled.name, read);
    const at = joinKey(joinKey('steps', step.id), 'ruleset');
    if (cycle !== null) problems.push({ path: at, message: `calling '${step.ruleset}' makes a call cycle: ${cycle.join(' -> ')}` });
    else {
      const depth = 1 + deepest(step.ruleset, read, new Map());
      if (depth > MAX_CALL_DEPTH) problems.push({ path: at, message: `calls through '${step.ruleset}' nest ${depth} deep; the limit is ${MAX_CALL_DEPTH}` });
    }
  }
  if (problems.length > 0) {
    throw new ServiceError('BAD_REQUEST', `invalid ruleset: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, { problems });
  }
}

/** The chain `self -> ... -> self` through `step`'s callee, or null when there is none. */
function findCycle(step: Extract<StepInfo, { type: 'call' }>, self: string, read: CalleeLookup): string[] | null {
  const seen = new Set<string>();
  const walk = (name: string, chain: string[]): string[] | null => {
    if (name === self) return [...chain, name];
    if (seen.has(name)) return null;
    seen.add(name);
    const callee = read(name);
    if (callee === undefined) return null;
    for (const next of callee.calls) {
      const found = walk(next, [...chain, name]);
      if (found !== null) return found;
    }
    return null;
  };
  return walk(step.ruleset, [self]);
}

/** How many calls deep the chain below `name` goes (0: it calls nothing or does not exist). */
function deepest(name: string, read: CalleeLookup, memo: Map<string, number>): number {
  const known = memo.get(name);
  if (known !== undefined) return known;
  memo.set(name, 0); // a cycle among other rulesets (not through this one) stops here
  const callee = read(name);
  let depth = 0;
  if (callee !== undefined) for (const next of callee.calls) depth = Math.max(depth, 1 + deepest(next, read, memo));
  memo.set(name, depth);
  return depth;
}
