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
import type { Route, RouteDeps, RouteDoc, SchemaNode } from './route.js';
import * as S from './route-schemas.js';
import { DATA_ROUTES } from './data-routes.js';
import { SHADOW_ROUTES } from './shadow-routes.js';
import { TENANT_ROUTES } from './tenant-routes.js';

const OBJECT = S.OBJECT;

/** The headers of a signature sent beside the document (docs/signing.md). */
const SIGNATURE_HEADERS: RouteDoc['headers'] = [
  { name: 'X-Svc-Signature', description: 'the Ed25519 signature of the document (base64), instead of `_signature` in the body' },
  { name: 'X-Svc-Public-Key', description: 'the public key of the signature (base64)' },
];

const EXECUTE_BODY: SchemaNode = {
  type: 'object',
  properties: { input: { ...OBJECT, description: 'the input the ruleset runs on' }, trace: { type: 'boolean', description: 'return the steps taken' } },
  required: ['input'],
};

/** The `ruleset` of a draft body. */
const DRAFT_PROPERTIES: Readonly<Record<string, SchemaNode>> = { ruleset: { ...OBJECT, description: 'a ruleset document (not stored)' } };

/** A filter request (docs/filter.md); optional fields that are null take their default. */
const FILTER_PROPERTIES: Readonly<Record<string, SchemaNode>> = {
  known_input: { ...OBJECT, description: 'the fields known at query time' },
  target_results: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'result codes that count as a match' },
  format: { enum: ['sql', 'json', 'mongo', null], description: 'default sql' },
  field_mapping: { type: ['object', 'null'], additionalProperties: { type: 'string' }, description: 'rule field path -> column name' },
  max_paths: { type: ['integer', 'null'], minimum: 0, description: 'paths collected before stopping (default 100; 0: unlimited)' },
  now: { type: ['string', 'null'], description: 'the time now() reads (ISO 8601)' },
};

const FILTER_BODY: SchemaNode = { type: 'object', description: 'a filter request', properties: FILTER_PROPERTIES, required: ['known_input', 'target_results'] };

const DRAFT_BODY: SchemaNode = { type: 'object', properties: DRAFT_PROPERTIES, required: ['ruleset'] };

/** The routes of the rule service itself (every mode). */
const SERVICE_ROUTES: readonly Route[] = [
  // ------------------------------------------------------------- rulesets
  {
    id: 'listRulesets',
    doc: { summary: 'List the rulesets', response: S.RULESET_LIST, errors: [] },
    method: 'GET',
    path: '/api/v1/rulesets',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx) => d.service.listRulesets(ctx),
  },
  {
    id: 'putRuleset',
    doc: {
      summary: 'Create or update a ruleset',
      description:
        'The document is validated, analysed and its own tests run before it is stored. A signature may come in the body (`_signature`) or in the `X-Svc-Signature` and `X-Svc-Public-Key` headers.',
      response: S.PUT_RESULT,
      errors: ['FORBIDDEN', 'TESTS_FAILED'],
      headers: SIGNATURE_HEADERS,
    },
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
    doc: { summary: 'Get a ruleset document', response: S.RULESET_DOC, errors: ['NOT_FOUND'] },
    method: 'GET',
    path: '/api/v1/rulesets/:name',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.getRuleset(ctx, name),
  },
  {
    id: 'deleteRuleset',
    doc: { summary: 'Delete a ruleset', errors: ['NOT_FOUND'] },
    method: 'DELETE',
    path: '/api/v1/rulesets/:name',
    permission: 'write',
    requestSchema: 'none',
    reply: 'empty',
    handle: (d, ctx, name) => d.service.deleteRuleset(ctx, name),
  },
  {
    id: 'listVersions',
    doc: { summary: "List a ruleset's versions", response: S.VERSIONS_RESULT, errors: ['NOT_FOUND'] },
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
    doc: { summary: 'Analysis warnings of the stored version', response: S.ANALYSIS_RESULT, errors: ['NOT_FOUND'] },
    method: 'GET',
    path: '/api/v1/rulesets/:name/analysis',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.analysis(ctx, name),
  },
  {
    id: 'rollback',
    doc: { summary: 'Restore a version of the history', response: S.ROLLBACK_RESULT, errors: ['NOT_FOUND'] },
    method: 'POST',
    path: '/api/v1/rulesets/:name/rollback',
    permission: 'write',
    requestSchema: { type: 'object', properties: { seq: { type: 'integer', description: 'the version to restore' } }, required: ['seq'] },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.rollback(ctx, name, objectBody(body, 'a JSON object with "seq"')['seq']),
  },
  {
    id: 'filter',
    doc: { summary: 'Build a query filter of the inputs that reach target results', response: S.FILTER_RESULT, errors: ['NOT_FOUND', 'INPUT_INVALID'] },
    method: 'POST',
    path: '/api/v1/rulesets/:name/filter',
    permission: 'execute',
    requestSchema: FILTER_BODY,
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.filter(ctx, name, body),
  },
  // Input schema (EXTENSIONS.md 2): the schema, or one inferred from the paths read.
  {
    id: 'getInputSchema',
    doc: { summary: 'The input schema of a ruleset (inferred when it has none)', response: S.INPUT_SCHEMA_RESULT, errors: ['NOT_FOUND'] },
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
    doc: { summary: "Run a ruleset's tests with coverage", response: S.TEST_REPORT, errors: ['NOT_FOUND'] },
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
    doc: { summary: 'Structural (and behavioural) diff of two versions', response: S.DIFF_RESULT, errors: ['NOT_FOUND'] },
    method: 'POST',
    path: '/api/v1/rulesets/:name/diff',
    permission: 'read',
    requestSchema: {
      type: 'object',
      properties: {
        from: S.VERSION_REF,
        to: S.VERSION_REF,
      },
      required: ['from', 'to'],
    },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.diff(ctx, name, body),
  },
  {
    id: 'impact',
    doc: { summary: 'Run inputs on the stored version and a candidate and count what changes', response: S.IMPACT_RESULT, errors: ['NOT_FOUND'] },
    method: 'POST',
    path: '/api/v1/rulesets/:name/impact',
    permission: 'read',
    requestSchema: {
      type: 'object',
      properties: {
        candidate: {
          description: 'a ruleset document, or {"seq": N} of the history',
          anyOf: [
            { type: 'object', properties: { seq: { type: 'integer', minimum: 1 } }, required: ['seq'], additionalProperties: false },
            { type: 'object', description: 'a ruleset document' },
          ],
        },
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
    doc: {
      summary: 'Validate and analyse a document without storing it',
      description: 'Answers 200 with `valid: false` and the problems when the document is invalid.',
      response: S.DRAFT_VALIDATION,
      errors: [],
    },
    method: 'POST',
    path: '/api/v1/draft/validate',
    permission: 'execute',
    requestSchema: DRAFT_BODY,
    reply: 'json',
    handle: (d, ctx, _param, body) => d.service.draftValidate(ctx, body),
  },
  {
    id: 'draftExecute',
    doc: { summary: 'Execute a document without storing it', response: S.EXECUTION_RESULT, errors: ['INPUT_INVALID', 'TIMEOUT', 'CALL_FAILED'] },
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
    doc: { summary: 'Build a filter from a document without storing it', response: S.FILTER_RESULT, errors: ['INPUT_INVALID'] },
    method: 'POST',
    path: '/api/v1/draft/filter',
    permission: 'execute',
    requestSchema: {
      type: 'object',
      description: 'a filter request with the document as "ruleset"',
      properties: { ...DRAFT_PROPERTIES, ...FILTER_PROPERTIES },
      required: ['ruleset', 'known_input', 'target_results'],
    },
    reply: 'json',
    handle: (d, ctx, _param, body) => d.service.draftFilter(ctx, body),
  },
  {
    id: 'draftTest',
    doc: { summary: "Run a document's tests without storing it", response: S.TEST_REPORT, errors: [] },
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
    doc: { summary: 'Execute a ruleset on one input', response: S.EXECUTION_RESULT, errors: ['NOT_FOUND', 'INPUT_INVALID', 'TIMEOUT', 'CALL_FAILED'] },
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
    doc: {
      summary: 'Execute a ruleset on many inputs',
      description: 'A failed item is `{error, code}` in its place; the other items still run.',
      response: S.BATCH_RESULT,
      errors: ['NOT_FOUND'],
    },
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
    doc: {
      summary: 'Evaluate one expression',
      response: S.EVAL_RESULT,
      errors: [
        { code: 'LIMIT_EXCEEDED', status: 400 },
        { code: 'TIMEOUT', status: 500 },
      ],
    },
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
    doc: { summary: 'The audit sample rate', response: S.SAMPLE_RATE, errors: [] },
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
    doc: { summary: 'Set the audit sample rate', response: S.SAMPLE_RATE_SET, errors: [] },
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
  {
    id: 'health',
    doc: {
      summary: 'Readiness with server details',
      description: '503 NOT_READY (with the same fields) when a readiness check fails.',
      response: S.HEALTH,
      errors: ['NOT_READY'],
    },
    method: 'GET',
    path: '/health',
    permission: 'public',
    requestSchema: 'none',
    reply: 'json',
    handle: readiness,
  },
  {
    id: 'live',
    doc: { summary: 'Liveness', response: S.LIVE, errors: [] },
    method: 'GET',
    path: '/healthz/live',
    permission: 'public',
    requestSchema: 'none',
    reply: 'json',
    handle: () => LIVE,
  },
  {
    id: 'ready',
    doc: { summary: 'Readiness', description: '503 NOT_READY when a readiness check fails.', response: S.HEALTH, errors: ['NOT_READY'] },
    method: 'GET',
    path: '/healthz/ready',
    permission: 'public',
    requestSchema: 'none',
    reply: 'json',
    handle: readiness,
  },
  // The OpenAPI document of this server's routes (docs/openapi.md): public like /health (it
  // describes the API, not any tenant's data); built once, at the first request.
  {
    id: 'openapi',
    doc: { summary: 'This OpenAPI document', response: S.OPENAPI_DOCUMENT, errors: [] },
    method: 'GET',
    path: '/api/v1/openapi.json',
    permission: 'public',
    requestSchema: 'none',
    reply: 'text',
    handle: (d) => {
      if (d.openApi === undefined) throw new ServiceError('NOT_FOUND', 'the OpenAPI document is not available on this server');
      return d.openApi();
    },
  },
  {
    id: 'metrics',
    doc: {
      summary: 'Prometheus metrics',
      description: 'Prometheus text format. Without a credential when the server runs with `--auth-public-metrics`.',
      errors: ['NOT_FOUND'],
    },
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
  doc: { summary: "A ruleset's steps with their conditions rendered (debug mode)", response: S.DEBUG_VIEW, errors: ['NOT_FOUND'] },
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
