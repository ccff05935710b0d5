/**
 * Analysis warnings (EXTENSIONS.md 2 "Analysis"): what a create/update answer and
 * `GET /api/v1/rulesets/:name/analysis` carry.
 */
import type { JsonValue } from '../expr/ast.js';

/** Every warning code, in the order the docs list them. */
export const WARNING_CODES = Object.freeze(['UNREACHABLE_STEP', 'DEAD_BRANCH', 'SHADOWED_DEFAULT', 'NO_MATCH_POSSIBLE', 'TYPE_MISMATCH', 'CYCLE'] as const);

/** A warning code. */
export type WarningCode = (typeof WARNING_CODES)[number];

/** One warning: where (a validation-problem path), what, and where one exists an input that shows it. */
export interface AnalysisWarning {
  readonly code: WarningCode;
  readonly path: string;
  readonly message: string;
  /** An input that shows the warning (proved by executing it). */
  readonly witness?: { [key: string]: JsonValue };
}
