/**
 * Schemas of the answers of the route table (./routes.ts and the other route files), for the
 * OpenAPI document (./openapi.ts). JSON Schema 2020-12 as `SchemaNode`s: the fields every
 * answer has are required; objects stay open (a later version may add a field).
 */
import type { SchemaNode } from './route.js';

/** Any JSON object. */
export const OBJECT: SchemaNode = { type: 'object', description: 'any JSON object' };

/** Any JSON value. */
export const ANY: SchemaNode = { description: 'any JSON value' };

const STRING: SchemaNode = { type: 'string' };
const NUMBER: SchemaNode = { type: 'number' };
const INTEGER: SchemaNode = { type: 'integer' };
const BOOLEAN: SchemaNode = { type: 'boolean' };
const STRINGS: SchemaNode = { type: 'array', items: STRING };

/** A version seq of the history, "current", or a ruleset document (the diff's `from` and `to`). */
export const VERSION_REF: SchemaNode = {
  description: 'a version seq of the history (integer from 1), "current", or a ruleset document',
  oneOf: [
    { type: 'integer', minimum: 1, description: 'a version seq of the history' },
    { const: 'current', description: 'the stored version' },
    { type: 'object', description: 'a ruleset document' },
  ],
};

/** `{path, message}`: one problem of a ruleset, a body or an input. */
export const PROBLEM: SchemaNode = {
  type: 'object',
  properties: { path: STRING, message: STRING },
  required: ['path', 'message'],
};

/** One analysis warning. */
export const WARNING: SchemaNode = {
  type: 'object',
  properties: { code: STRING, path: STRING, message: STRING, witness: { ...OBJECT, description: 'an input that shows the warning' } },
  required: ['code', 'path', 'message'],
};

const WARNINGS: SchemaNode = { type: 'array', items: WARNING, description: 'analysis warnings; absent when there are none' };

/** The answer of an execution (execute, draft execute, a batch item). */
export const EXECUTION_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    code: { type: 'string', description: 'the result code of the terminal step reached' },
    message: STRING,
    output: OBJECT,
    duration_us: NUMBER,
    trace: { ...OBJECT, description: 'the steps taken (with `"trace": true`)' },
  },
  required: ['code', 'message', 'output', 'duration_us'],
};

/** A failed batch item: a catalog error in place. */
const ITEM_ERROR: SchemaNode = {
  type: 'object',
  properties: { error: STRING, code: STRING, problems: { type: 'array', items: PROBLEM } },
  required: ['error', 'code'],
};

/** The batch answer. */
export const BATCH_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    results: { type: 'array', items: { anyOf: [EXECUTION_RESULT, ITEM_ERROR] }, description: 'one per input, in input order' },
    summary: {
      type: 'object',
      properties: { total: INTEGER, success: INTEGER, failed: INTEGER, total_duration_us: NUMBER },
      required: ['total', 'success', 'failed', 'total_duration_us'],
    },
  },
  required: ['results', 'summary'],
};

/** The `/eval` answer. */
export const EVAL_RESULT: SchemaNode = {
  type: 'object',
  properties: { result: ANY, parsed: { type: 'string', description: 'the expression as parsed' } },
  required: ['result', 'parsed'],
};

/** A ruleset document as stored. */
export const RULESET_DOC: SchemaNode = {
  type: 'object',
  description: 'a ruleset document',
  properties: { config: OBJECT, steps: OBJECT, tests: { type: 'array', items: OBJECT } },
  required: ['config', 'steps'],
};

/** `GET /api/v1/rulesets`. */
export const RULESET_LIST: SchemaNode = {
  type: 'array',
  items: {
    type: 'object',
    properties: { name: STRING, version: STRING, description: { type: ['string', 'null'] } },
    required: ['name', 'version', 'description'],
  },
};

/** `POST /api/v1/rulesets`. */
export const PUT_RESULT: SchemaNode = {
  type: 'object',
  properties: { status: { enum: ['created', 'updated'] }, name: STRING, warnings: WARNINGS },
  required: ['status', 'name'],
};

/** `GET /api/v1/rulesets/:name/versions`. */
export const VERSIONS_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    name: STRING,
    current_version: STRING,
    versions: {
      type: 'array',
      items: {
        type: 'object',
        properties: { seq: INTEGER, version: STRING, timestamp: { type: 'string', format: 'date-time' } },
        required: ['seq', 'version', 'timestamp'],
      },
    },
  },
  required: ['name', 'current_version', 'versions'],
};

/** `GET /api/v1/rulesets/:name/analysis`. */
export const ANALYSIS_RESULT: SchemaNode = { type: 'object', properties: { warnings: { type: 'array', items: WARNING } }, required: ['warnings'] };

/** Rollback. */
export const ROLLBACK_RESULT: SchemaNode = {
  type: 'object',
  properties: { status: { const: 'rolled_back' }, name: STRING, from_version: STRING, to_version: STRING },
  required: ['status', 'name', 'from_version', 'to_version'],
};

/** A filter answer. */
export const FILTER_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    format: { enum: ['sql', 'json', 'mongo'] },
    filter: { description: 'SQL text, a predicate tree or a Mongo document; null when never_matches', type: ['string', 'object', 'null'] },
    always_matches: BOOLEAN,
    never_matches: BOOLEAN,
    truncated: BOOLEAN,
    unknown_fields: STRINGS,
    exact: BOOLEAN,
  },
  required: ['format', 'filter', 'always_matches', 'never_matches', 'truncated', 'exact'],
};

/** `GET /api/v1/rulesets/:name/schema`. */
export const INPUT_SCHEMA_RESULT: SchemaNode = {
  type: 'object',
  properties: { name: STRING, version: STRING, inferred: BOOLEAN, input_validation: { enum: ['reject', 'off'] }, schema: ANY },
  required: ['name', 'version', 'inferred', 'input_validation', 'schema'],
};

const COVERAGE_COUNT: SchemaNode = {
  type: 'object',
  properties: { covered: INTEGER, total: INTEGER, missing: STRINGS },
  required: ['covered', 'total', 'missing'],
};

/** A test report with coverage. */
export const TEST_REPORT: SchemaNode = {
  type: 'object',
  properties: {
    passed: INTEGER,
    failed: INTEGER,
    results: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: STRING, passed: BOOLEAN, expected: OBJECT, actual: OBJECT },
        required: ['name', 'passed', 'expected', 'actual'],
      },
    },
    coverage: {
      type: 'object',
      properties: { steps: COVERAGE_COUNT, branches: COVERAGE_COUNT, terminals: COVERAGE_COUNT },
      required: ['steps', 'branches', 'terminals'],
    },
  },
  required: ['passed', 'failed', 'results', 'coverage'],
};

/** `POST /api/v1/draft/validate`: 200 even when the document is invalid. */
export const DRAFT_VALIDATION: SchemaNode = {
  type: 'object',
  properties: { valid: BOOLEAN, problems: { type: 'array', items: PROBLEM }, warnings: { type: 'array', items: WARNING } },
  required: ['valid', 'problems', 'warnings'],
};

/** The structural (and behavioural) diff. */
export const DIFF_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    changes: {
      type: 'array',
      items: { type: 'object', properties: { op: STRING, path: STRING, from: ANY, to: ANY }, required: ['op', 'path'] },
    },
    behavior: {
      description: 'the behavioural diff; null when the server does not compute it',
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: { equivalent: BOOLEAN, exact: BOOLEAN, regions: { type: 'array' }, truncated: BOOLEAN },
          required: ['equivalent', 'exact', 'regions', 'truncated'],
        },
      ],
    },
  },
  required: ['changes', 'behavior'],
};

const TRANSITIONS: SchemaNode = {
  type: 'array',
  items: { type: 'object', properties: { from: STRING, to: STRING, count: INTEGER }, required: ['from', 'to', 'count'] },
};

/** Impact over inputs. */
export const IMPACT_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    total: INTEGER,
    changed: INTEGER,
    errors: INTEGER,
    transitions: TRANSITIONS,
    examples: { type: 'array', items: { type: 'object', properties: { input: ANY, from: STRING, to: STRING }, required: ['input', 'from', 'to'] } },
  },
  required: ['total', 'changed', 'errors', 'transitions', 'examples'],
};

/** `PUT /api/v1/rulesets/:name/shadow`. */
export const SHADOW_PUT_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    status: { enum: ['created', 'updated'] },
    name: STRING,
    candidate_version: STRING,
    sample_rate: NUMBER,
    since: { type: 'string', format: 'date-time' },
    warnings: WARNINGS,
  },
  required: ['status', 'name', 'candidate_version', 'sample_rate', 'since'],
};

/** `GET /api/v1/rulesets/:name/shadow`: this instance's counts. */
export const SHADOW_RESULT: SchemaNode = {
  type: 'object',
  properties: {
    name: STRING,
    live_version: STRING,
    candidate_version: STRING,
    sample_rate: NUMBER,
    since: { type: 'string', format: 'date-time' },
    counted_by: { const: 'instance' },
    executed: INTEGER,
    agreed: INTEGER,
    disagreed: INTEGER,
    errors: INTEGER,
    dropped: INTEGER,
    transitions: TRANSITIONS,
    examples: {
      type: 'array',
      items: { type: 'object', properties: { input: ANY, from: STRING, to: STRING, at: STRING }, required: ['input', 'from', 'to', 'at'] },
    },
  },
  required: [
    'name',
    'live_version',
    'candidate_version',
    'sample_rate',
    'since',
    'counted_by',
    'executed',
    'agreed',
    'disagreed',
    'errors',
    'dropped',
    'transitions',
    'examples',
  ],
};

/** `POST /api/v1/rulesets/:name/shadow/promote`. */
export const SHADOW_PROMOTE_RESULT: SchemaNode = {
  type: 'object',
  properties: { status: { const: 'promoted' }, name: STRING, from_version: STRING, to_version: STRING, warnings: WARNINGS },
  required: ['status', 'name', 'from_version', 'to_version'],
};

/** `GET /api/v1/config/audit-sample-rate`. */
export const SAMPLE_RATE: SchemaNode = { type: 'object', properties: { sample_rate: NUMBER }, required: ['sample_rate'] };

/** `PUT /api/v1/config/audit-sample-rate`. */
export const SAMPLE_RATE_SET: SchemaNode = { type: 'object', properties: { sample_rate: NUMBER, previous: NUMBER }, required: ['sample_rate', 'previous'] };

/** `/health` and `/healthz/ready` (200). */
export const HEALTH: SchemaNode = {
  type: 'object',
  properties: {
    status: { enum: ['healthy', 'unhealthy'] },
    version: STRING,
    uptime_seconds: NUMBER,
    role: { enum: ['standalone', 'writer', 'reader'] },
    storage: {
      type: 'object',
      properties: { mode: { enum: ['persistent', 'memory'] }, rules_dir: { type: ['string', 'null'] }, rules_count: INTEGER },
      required: ['mode', 'rules_dir', 'rules_count'],
    },
    sync: { ...OBJECT, description: 'broker sync and watcher state, when either is on' },
  },
  required: ['status', 'version', 'uptime_seconds', 'role', 'storage'],
};

/** `/healthz/live`. */
export const LIVE: SchemaNode = { type: 'object', properties: { status: { const: 'alive' } }, required: ['status'] };

/** A row of `GET /api/v1/data`. */
const DATA_INFO_PROPERTIES: Readonly<Record<string, SchemaNode>> = { name: STRING, bytes: INTEGER, version: STRING };

/** `GET /api/v1/data`. */
export const DATA_LIST: SchemaNode = { type: 'array', items: { type: 'object', properties: DATA_INFO_PROPERTIES, required: ['name', 'bytes', 'version'] } };

/** `PUT /api/v1/data/:name`. */
export const DATA_PUT_RESULT: SchemaNode = {
  type: 'object',
  properties: { status: { enum: ['created', 'updated'] }, ...DATA_INFO_PROPERTIES },
  required: ['status', 'name', 'bytes', 'version'],
};

const NULLABLE_NUMBER: SchemaNode = { type: ['number', 'null'] };
const NULLABLE_INTEGER: SchemaNode = { type: ['integer', 'null'] };

/** A tenant record as answered. */
export const TENANT: SchemaNode = {
  type: 'object',
  properties: {
    id: STRING,
    name: STRING,
    enabled: BOOLEAN,
    qps_limit: NULLABLE_NUMBER,
    burst: NULLABLE_INTEGER,
    execution_timeout_ms: NULLABLE_INTEGER,
    max_rulesets: NULLABLE_INTEGER,
  },
  required: ['id', 'name', 'enabled', 'qps_limit', 'burst', 'execution_timeout_ms', 'max_rulesets'],
};

/** A tenant record as sent (create, whole-record replace). */
export const TENANT_INPUT: SchemaNode = {
  type: 'object',
  description: 'a tenant record; absent fields take their defaults',
  properties: {
    id: STRING,
    name: { type: 'string', description: 'display name (default: the id)' },
    enabled: BOOLEAN,
    qps_limit: { ...NULLABLE_NUMBER, description: 'sustained requests per second; null: no limit' },
    burst: { ...NULLABLE_INTEGER, description: 'bucket capacity; null: qps_limit' },
    execution_timeout_ms: NULLABLE_INTEGER,
    max_rulesets: NULLABLE_INTEGER,
  },
};

/** The debug view of a ruleset. */
export const DEBUG_VIEW: SchemaNode = { ...OBJECT, description: "the ruleset's steps with their conditions rendered" };

/** The OpenAPI document itself. */
export const OPENAPI_DOCUMENT: SchemaNode = {
  type: 'object',
  description: 'an OpenAPI 3.1 document',
  properties: { openapi: STRING, info: OBJECT, paths: OBJECT },
  required: ['openapi', 'info', 'paths'],
};
