/**
 * Static analysis of rulesets (EXTENSIONS.md 2 "Analysis"): warnings with witnesses, computed
 * once per compiled version. Pure: no `node:*` imports.
 */
export { analyzeRuleset } from './analyze.js';
export { WARNING_CODES, type AnalysisWarning, type WarningCode } from './types.js';
