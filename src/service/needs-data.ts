import type { CompiledRuleset } from '../ruleset/index.js';

/**
 * True when executing `compiled` may read reference data (EXTENSIONS.md 3): it reads `@name`,
 * or it calls other rulesets (which may). Other executions skip the tenant's data snapshot.
 */
export function needsData(compiled: CompiledRuleset): boolean {
  return compiled.datasets.length > 0 || compiled.calls.length > 0;
}
