/**
 * The service side of the analysis (EXTENSIONS.md 2 "Analysis"): at create/update, the warnings
 * of the new compiled version become the answer's `warnings` (no key when there are none, so a
 * clean ruleset's answer stays SPEC's), or, with `config.strict: true`, a 400 listing them as
 * problems before anything is stored.
 */
import { analyzeRuleset, type AnalysisWarning } from '../analysis/index.js';
import type { CompiledRuleset } from '../ruleset/compile.js';
import { ServiceError } from './errors.js';
import type { AnalysisResult } from './types.js';

/** `{warnings}` to spread into a create/update answer (`{}` when clean); throws 400 in strict mode. */
export function analysisGate(compiled: CompiledRuleset): { warnings?: AnalysisWarning[] } {
  const warnings = analyzeRuleset(compiled);
  if (warnings.length === 0) return {};
  if (compiled.doc.config.strict === true) {
    const problems = warnings.map((w) => ({ path: w.path, message: `${w.code}: ${w.message}` }));
    const text = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
    throw new ServiceError('BAD_REQUEST', `invalid ruleset (config.strict: analysis warnings are problems): ${text}`, { problems });
  }
  return { warnings: [...warnings] };
}

/** The warnings of a stored compiled version (computed once per version). */
export function analysisOf(compiled: CompiledRuleset): AnalysisResult {
  return { warnings: [...analyzeRuleset(compiled)] };
}
