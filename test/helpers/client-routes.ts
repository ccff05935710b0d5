/**
 * The client method of every route of the HTTP route table (src/transport/http/routes.ts and
 * the tables it joins), by route id. test/unit/client/routes.test.ts fails when a route has no
 * entry here or the client lacks the method; the integration tests call each method once.
 */
import type { SvcClient } from '../../client/src/index.js';

/** Route id → method of `SvcClient`. */
export const CLIENT_METHOD_OF_ROUTE: Readonly<Record<string, keyof SvcClient>> = {
  listRulesets: 'listRulesets',
  putRuleset: 'putRuleset',
  getRuleset: 'getRuleset',
  deleteRuleset: 'deleteRuleset',
  listVersions: 'listVersions',
  getAnalysis: 'getAnalysis',
  rollback: 'rollback',
  filter: 'filter',
  getInputSchema: 'getInputSchema',
  testRuleset: 'testRuleset',
  diffRuleset: 'diff',
  impact: 'impact',
  draftValidate: 'draftValidate',
  draftExecute: 'draftExecute',
  draftFilter: 'draftFilter',
  draftTest: 'draftTest',
  execute: 'execute',
  executeBatch: 'executeBatch',
  eval: 'evaluate',
  getAuditSampleRate: 'getAuditSampleRate',
  setAuditSampleRate: 'setAuditSampleRate',
  health: 'health',
  live: 'live',
  ready: 'ready',
  metrics: 'metrics',
  openapi: 'openapi',
  putShadow: 'putShadow',
  getShadow: 'getShadow',
  deleteShadow: 'deleteShadow',
  promoteShadow: 'promoteShadow',
  listData: 'listData',
  getData: 'getData',
  putData: 'putData',
  deleteData: 'deleteData',
  listTenants: 'listTenants',
  createTenant: 'createTenant',
  getTenant: 'getTenant',
  updateTenant: 'updateTenant',
  deleteTenant: 'deleteTenant',
  debugRuleset: 'debugRuleset',
};
