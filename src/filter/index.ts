/**
 * Filters: partial evaluation of a ruleset into a database filter (SPEC.md "POST
 * /rulesets/:name/filter", docs/filter.md). Pure: no `node:*` imports. The RuleService calls
 * `parseFilterRequest(body)` then `generateFilter(compiled, request)` on the stored compiled
 * ruleset; both throw `FilterError` (`BAD_REQUEST` for a bad request or an unsafe column name,
 * `INEXPRESSIBLE` for what a format cannot express), which the service maps into its catalog.
 */
export { FilterError, type FilterErrorCode } from './errors.js';
export { parseFilterRequest } from './request.js';
export { generateFilter, filterTree } from './generate.js';
export { MAX_DEPTH, MAX_VISITS, type CalleeResolver } from './planner.js';
export type { Pred } from './predicate.js';
export {
  DEFAULT_MAX_PATHS,
  FILTER_FORMATS,
  type FilterFormat,
  type FilterRequest,
  type FilterResponse,
  type JsonFilterNode,
  type MongoFilter,
} from './types.js';
