/**
 * Filters: partial evaluation of a ruleset into a database filter (SPEC.md "POST
 * /rulesets/:name/filter", docs/filter.md). Pure: no `node:*` imports. The RuleService calls
 * `parseFilterRequest(body)` then `generateFilter(doc, request)`; both throw `ServiceError`
 * (400 for a bad request or an unsafe column name, 500 for what a format cannot express).
 */
export { parseFilterRequest } from './request.js';
export { generateFilter, filterTree } from './generate.js';
export { MAX_DEPTH, MAX_VISITS } from './planner.js';
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
