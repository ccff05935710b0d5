/**
 * Every route of the svc HTTP API, by the server's route id: method and path (`:name` or `:id`
 * is the one parameter). A test compares this table with the server's route table.
 */
export const ENDPOINTS = {
  listRulesets: { method: 'GET', path: '/api/v1/rulesets' },
  putRuleset: { method: 'POST', path: '/api/v1/rulesets' },
  getRuleset: { method: 'GET', path: '/api/v1/rulesets/:name' },
  deleteRuleset: { method: 'DELETE', path: '/api/v1/rulesets/:name' },
  listVersions: { method: 'GET', path: '/api/v1/rulesets/:name/versions' },
  getAnalysis: { method: 'GET', path: '/api/v1/rulesets/:name/analysis' },
  rollback: { method: 'POST', path: '/api/v1/rulesets/:name/rollback' },
  filter: { method: 'POST', path: '/api/v1/rulesets/:name/filter' },
  getInputSchema: { method: 'GET', path: '/api/v1/rulesets/:name/schema' },
  testRuleset: { method: 'POST', path: '/api/v1/rulesets/:name/test' },
  diffRuleset: { method: 'POST', path: '/api/v1/rulesets/:name/diff' },
  impact: { method: 'POST', path: '/api/v1/rulesets/:name/impact' },
  draftValidate: { method: 'POST', path: '/api/v1/draft/validate' },
  draftExecute: { method: 'POST', path: '/api/v1/draft/execute' },
  draftFilter: { method: 'POST', path: '/api/v1/draft/filter' },
  draftTest: { method: 'POST', path: '/api/v1/draft/test' },
  execute: { method: 'POST', path: '/api/v1/execute/:name' },
  executeBatch: { method: 'POST', path: '/api/v1/execute/:name/batch' },
  eval: { method: 'POST', path: '/api/v1/eval' },
  getAuditSampleRate: { method: 'GET', path: '/api/v1/config/audit-sample-rate' },
  setAuditSampleRate: { method: 'PUT', path: '/api/v1/config/audit-sample-rate' },
  health: { method: 'GET', path: '/health' },
  live: { method: 'GET', path: '/healthz/live' },
  ready: { method: 'GET', path: '/healthz/ready' },
  metrics: { method: 'GET', path: '/metrics' },
  openapi: { method: 'GET', path: '/api/v1/openapi.json' },
  putShadow: { method: 'PUT', path: '/api/v1/rulesets/:name/shadow' },
  getShadow: { method: 'GET', path: '/api/v1/rulesets/:name/shadow' },
  deleteShadow: { method: 'DELETE', path: '/api/v1/rulesets/:name/shadow' },
  promoteShadow: { method: 'POST', path: '/api/v1/rulesets/:name/shadow/promote' },
  listData: { method: 'GET', path: '/api/v1/data' },
  getData: { method: 'GET', path: '/api/v1/data/:name' },
  putData: { method: 'PUT', path: '/api/v1/data/:name' },
  deleteData: { method: 'DELETE', path: '/api/v1/data/:name' },
  listTenants: { method: 'GET', path: '/api/v1/tenants' },
  createTenant: { method: 'POST', path: '/api/v1/tenants' },
  getTenant: { method: 'GET', path: '/api/v1/tenants/:id' },
  updateTenant: { method: 'PUT', path: '/api/v1/tenants/:id' },
  deleteTenant: { method: 'DELETE', path: '/api/v1/tenants/:id' },
  debugRuleset: { method: 'GET', path: '/api/v1/debug/rulesets/:name' },
} as const satisfies Record<string, { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string }>;

/** A route id. */
export type EndpointId = keyof typeof ENDPOINTS;

/** The path of `id` with its parameter (URL-encoded). */
export function endpointPath(id: EndpointId, param?: string): string {
  const path: string = ENDPOINTS[id].path;
  const i = path.indexOf('/:');
  if (i < 0) return path;
  if (param === undefined || param === '') throw new TypeError(`${id}: the path parameter must be a non-empty string`);
  const end = path.indexOf('/', i + 2);
  return path.slice(0, i + 1) + encodeURIComponent(param) + (end < 0 ? '' : path.slice(end));
}
