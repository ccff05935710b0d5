/**
 * The route table of the HTTP adapter: every route of SPEC.md "Endpoints" as one entry (see
 * ./route.ts). fastify registers the active entries (./fastify-routes.ts), the hot dispatcher
 * serves the entries marked `hot` (./hot-dispatch.ts), and the 405/404 answers are derived
 * from it (./route-match.ts). Handlers decode, call one façade method and hand back the answer.
 *
 * NOTE: the order of the entries is the order of the methods in a 405's `Allow` header.
 */
import { ServiceError } from '../../service/errors.js';
import { headerValue } from './call-context.js';
import { batchAnswer, draftExecuteAnswer, evalAnswer, executeAnswer, objectBody } from './execution-answers.js';
import { toHttpError } from './errors.js';
import type { Route, RouteDeps, SchemaNode } from './route.js';
import { DATA_ROUTES } from './data-routes.js';
import { SHADOW_ROUTES } from './shadow-routes.js';
import { TENANT_ROUTES } from './tenant-routes.js';

const OBJECT: SchemaNode = { type: 'object', description: 'any JSON object' };

const EXECUTE_BODY: SchemaNode = {
  type: 'object',
  properties: { input: { ...OBJECT, description: 'the input the ruleset runs on' }, trace: { type: 'boolean', description: 'return the steps taken' } },
  required: ['input'],
};

/** The `ruleset` of a draft body. */
const DRAFT_PROPERTIES: Readonly<Record<string, SchemaNode>> = { ruleset: { ...OBJECT, description: 'a ruleset document (not stored)' } };

const DRAFT_BODY: SchemaNode = { type: 'object', properties: DRAFT_PROPERTIES, required: ['ruleset'] };

/** The routes of the rule service itself (every mode). */
const SERVICE_ROUTES: readonly Route[] = [
  // ------------------------------------------------------------- rulesets
  {
    id: 'listRulesets',
    method: 'GET',
    path: '/api/v1/rulesets',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx) => d.service.listRulesets(ctx),
  },
  {
    id: 'putRuleset',
    method: 'POST',
    path: '/api/v1/rulesets',
    permission: 'write',
    requestSchema: {
      type: 'object',
      description: 'a ruleset document (SPEC.md "Ruleset format")',
      properties: { config: OBJECT, steps: OBJECT },
      required: ['config', 'steps'],
    },
    reply: 'json',
    handle: (d, ctx, _param, body, raw) =>
      d.service.putRuleset(ctx, body, { signature: headerValue(raw, 'x-svc-signature'), publicKey: headerValue(raw, 'x-svc-public-key') }),
  },
  {
    id: 'getRuleset',
    method: 'GET',
    path: '/api/v1/rulesets/:name',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.getRuleset(ctx, name),
  },
  {
    id: 'deleteRuleset',
    method: 'DELETE',
    path: '/api/v1/rulesets/:name',
    permission: 'write',
    requestSchema: 'none',
    reply: 'empty',
    handle: (d, ctx, name) => d.service.deleteRuleset(ctx, name),
  },
  {
    id: 'listVersions',
    method: 'GET',
    path: '/api/v1/rulesets/:name/versions',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.versions(ctx, name),
  },
  // EXTENSIONS.md 2 "Analysis": the warnings of the stored version.
  {
    id: 'getAnalysis',
    method: 'GET',
    path: '/api/v1/rulesets/:name/analysis',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.analysis(ctx, name),
  },
  {
    id: 'rollback',
    method: 'POST',
    path: '/api/v1/rulesets/:name/rollback',
    permission: 'write',
    requestSchema: { type: 'object', properties: { seq: { type: 'integer', description: 'the version to restore' } }, required: ['seq'] },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.rollback(ctx, name, objectBody(body, 'a JSON object with "seq"')['seq']),
  },
  {
    id: 'filter',
    method: 'POST',
    path: '/api/v1/rulesets/:name/filter',
    permission: 'execute',
    requestSchema: { type: 'object', description: 'a filter request (SPEC.md "POST /rulesets/:name/filter")' },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.filter(ctx, name, body),
  },
  // Input schema (EXTENSIONS.md 2): the schema, or one inferred from the paths read.
  {
    id: 'getInputSchema',
    method: 'GET',
    path: '/api/v1/rulesets/:name/schema',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.inputSchema(ctx, name),
  },
  // Stored tests with coverage (EXTENSIONS.md 2 "Tests"): reads and executes, so `execute`.
  {
    id: 'testRuleset',
    method: 'POST',
    path: '/api/v1/rulesets/:name/test',
    permission: 'read',
    requestSchema: {
      type: 'object',
      description: 'empty (run the stored tests), or {"tests": [...]} to run against the stored version',
      properties: { tests: { type: 'array', items: OBJECT, description: 'tests {name, input, expect}' } },
    },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.testRuleset(ctx, name, body),
  },
  // ------------------------------------------------------------- changes (EXTENSIONS.md 4)
  // The structural diff shows stored versions, so `read`; impact executes, so `execute`.
  {
    id: 'diffRuleset',
    method: 'POST',
    path: '/api/v1/rulesets/:name/diff',
    permission: 'read',
    requestSchema: {
      type: 'object',
      properties: {
        from: { ...OBJECT, description: 'a version seq (integer), "current", or a ruleset document' },
        to: { ...OBJECT, description: 'a version seq (integer), "current", or a ruleset document' },
      },
      required: ['from', 'to'],
    },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.diff(ctx, name, body),
  },
  {
    id: 'impact',
    method: 'POST',
    path: '/api/v1/rulesets/:name/impact',
    permission: 'read',
    requestSchema: {
      type: 'object',
      properties: {
        candidate: { ...OBJECT, description: 'a ruleset document, or {"seq": N} of the history' },
        inputs: { type: 'array', items: OBJECT, description: 'inputs run on both versions (at most --max-batch-size)' },
      },
      required: ['candidate', 'inputs'],
    },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.impact(ctx, name, body),
  },
  // Drafts: a document validated, executed, filtered or tested without being stored.
  {
    id: 'draftValidate',
    method: 'POST',
    path: '/api/v1/draft/validate',
    permission: 'execute',
    requestSchema: DRAFT_BODY,
    reply: 'json',
    handle: (d, ctx, _param, body) => d.service.draftValidate(ctx, body),
  },
  {
    id: 'draftExecute',
    method: 'POST',
    path: '/api/v1/draft/execute',
    permission: 'execute',
    requestSchema: {
      type: 'object',
      properties: { ...DRAFT_PROPERTIES, ...(EXECUTE_BODY.properties ?? {}), now: { type: 'string', description: 'the time now() reads (ISO 8601)' } },
      required: ['ruleset', 'input'],
    },
    reply: 'text',
    handle: (d, ctx, _param, body) => draftExecuteAnswer(d.service, ctx, body),
  },
  {
    id: 'draftFilter',
    method: 'POST',
    path: '/api/v1/draft/filter',
    permission: 'execute',
    requestSchema: { type: 'object', description: 'a filter request with the document as "ruleset"', properties: DRAFT_PROPERTIES, required: ['ruleset'] },
    reply: 'json',
    handle: (d, ctx, _param, body) => d.service.draftFilter(ctx, body),
  },
  {
    id: 'draftTest',
    method: 'POST',
    path: '/api/v1/draft/test',
    permission: 'execute',
    requestSchema: {
      type: 'object',
      properties: { ...DRAFT_PROPERTIES, tests: { type: 'array', items: OBJECT, description: "tests to run instead of the document's own" } },
      required: ['ruleset'],
    },
    reply: 'json',
    handle: (d, ctx, _param, body) => d.service.draftTest(ctx, body),
  },
  // ------------------------------------------------------------- execution
  // NOTE (speed): execute and eval are hot: their plain requests are answered by the hot
  // dispatcher, about 10 us of CPU less per request than through fastify (bench/NOTES.md).
  {
    id: 'execute',
    method: 'POST',
    path: '/api/v1/execute/:name',
    permission: 'execute',
    hot: true,
    requestSchema: EXECUTE_BODY,
    reply: 'text',
    handle: (d, ctx, name, body) => executeAnswer(d.service, ctx, name, body),
    headers: decisionHeader,
  },
  {
    id: 'executeBatch',
    method: 'POST',
    path: '/api/v1/execute/:name/batch',
    permission: 'execute',
    requestSchema: {
      type: 'object',
      properties: { inputs: { type: 'array', items: OBJECT, description: 'one input per execution' }, trace: { type: 'boolean' } },
      required: ['inputs'],
    },
    reply: 'text',
    handle: (d, ctx, name, body) => batchAnswer(d.service, ctx, name, body, d.maxResponseBytes),
    headers: decisionHeader,
  },
  {
    id: 'eval',
    method: 'POST',
    path: '/api/v1/eval',
    permission: 'execute',
    hot: true,
    requestSchema: { type: 'object', properties: { expression: { type: 'string' }, context: OBJECT }, required: ['expression'] },
    reply: 'text',
    handle: (d, ctx, _param, body) => evalAnswer(d.service, ctx, body),
  },
  // ------------------------------------------------------------- config
  {
    id: 'getAuditSampleRate',
    method: 'GET',
    path: '/api/v1/config/audit-sample-rate',
    permission: 'read',
    scope: 'global',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx) => d.service.getAuditSampleRate(ctx),
  },
  {
    id: 'setAuditSampleRate',
    method: 'PUT',
    path: '/api/v1/config/audit-sample-rate',
    permission: 'admin',
    scope: 'global',
    requestSchema: {
      type: 'object',
      properties: { sample_rate: { type: 'number', description: 'percent of executions audited, 0-100' } },
      required: ['sample_rate'],
    },
    reply: 'json',
    handle: (d, ctx, _param, body) => d.service.setAuditSampleRate(ctx, objectBody(body, 'a JSON object with "sample_rate"')['sample_rate']),
  },
  // ------------------------------------------------------------- health and metrics
  { id: 'health', method: 'GET', path: '/health', permission: 'public', requestSchema: 'none', reply: 'json', handle: readiness },
  { id: 'live', method: 'GET', path: '/healthz/live', permission: 'public', requestSchema: 'none', reply: 'json', handle: () => LIVE },
  { id: 'ready', method: 'GET', path: '/healthz/ready', permission: 'public', requestSchema: 'none', reply: 'json', handle: readiness },
  {
    id: 'metrics',
    method: 'GET',
    path: '/metrics',
    // NOTE: `--auth-public-metrics` makes it open (./auth.ts).
    permission: 'read',
    scope: 'global',
    requestSchema: 'none',
    reply: 'raw',
    handle: async (d) => {
      if (!d.metrics) throw new ServiceError('NOT_FOUND', 'metrics are disabled (--metrics-enabled=false)');
      return d.metrics();
    },
  },
];

/**
 * The debug route (`--debug-mode`). Permission `read`: it shows a ruleset's conditions, which
 * `GET /api/v1/rulesets/:name` shows too.
 */
const DEBUG_ROUTE: Route = {
  id: 'debugRuleset',
  method: 'GET',
  path: '/api/v1/debug/rulesets/:name',
  permission: 'read',
  requestSchema: 'none',
  reply: 'json',
  when: (d) => d.debugMode && d.debugRuleset !== undefined,
  // NOTE: a wrong method on the debug path has always been 404, not 405.
  allowHeader: false,
  handle: (d, ctx, name) => (d.debugRuleset as NonNullable<RouteDeps['debugRuleset']>)(ctx, name),
};

/** Every route of the HTTP adapter, in `Allow` order. */
export const ROUTES: readonly Route[] = [...SERVICE_ROUTES, ...SHADOW_ROUTES, ...DATA_ROUTES, ...TENANT_ROUTES, DEBUG_ROUTE];

const LIVE = { status: 'alive' } as const;

/**
 * `/health` and `/healthz/ready`: the façade's readiness, or its catalog error as the answer.
 * NOTE: returned, not thrown: a failed readiness check is an answer, not a request error (no
 * error hook, no unexpected-error log line).
 */
async function readiness(d: RouteDeps): Promise<unknown> {
  try {
    return await d.service.ready();
  } catch (err) {
    return toHttpError(err);
  }
}

/**
 * `X-Svc-Decision-Id` (EXTENSIONS.md 4 "Decision records"): the id of the execution just
 * answered, or of the batch (its items are `<id>.<index>`), when it was recorded. With the
 * decision log off, one field test.
 */
function decisionHeader(d: RouteDeps): Readonly<Record<string, string>> | null {
  const decisionId = d.service.decisionId;
  if (decisionId === undefined) return null;
  const id = decisionId();
  return id === null ? null : { 'x-svc-decision-id': id };
}
