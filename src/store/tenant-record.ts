/**
 * The tenant record (DECISIONS.md 8) and its validation: what `POST/PUT /api/v1/tenants`
 * accept, what `tenants.json` holds and what `TenantConfigChanged` carries. Tenants are the
 * store's second collection (beside rulesets), so the record lives with the store; the façade's
 * 400 for an invalid body is `parseTenantRecord` in service/tenant-model.ts.
 *
 * ```
 * {id, name, enabled, qps_limit: number|null, burst: number|null,
 *  execution_timeout_ms: number|null, max_rulesets: number|null}
 * ```
 *
 * Tenant ids follow the ruleset name rule (DECISIONS.md 1: 1-128 of `A-Z a-z 0-9 _ - .`, not
 * starting with `.`), because an id becomes the directory `<rules-dir>/tenants/<id>/`.
 * Validation reports every problem at once (`problems: [{path, message}]`, like rulesets).
 */
import { isValidRulesetName } from '../ruleset/model.js';
import { DEFAULT_TENANT } from './record.js';

/** One tenant. `null` limits mean "no tenant limit" (the server or ruleset setting applies). */
export interface TenantRecord {
  readonly id: string;
  /** Display name; defaults to the id. */
  readonly name: string;
  /** A disabled tenant answers 404 TENANT_NOT_FOUND on every tenant-scoped request. */
  readonly enabled: boolean;
  /** Sustained requests per second (token refill rate); null: no rate limit. */
  readonly qps_limit: number | null;
  /** Bucket capacity (requests that may arrive at once); null: `qps_limit` (at least 1). */
  readonly burst: number | null;
  /** Execution timeout between a ruleset's `timeout_ms` and the server default; 0 disables. */
  readonly execution_timeout_ms: number | null;
  /** Most rulesets the tenant may hold; creating one more is 400. */
  readonly max_rulesets: number | null;
}

/** One validation problem, located like ruleset problems. */
export interface TenantProblem {
  readonly path: string;
  readonly message: string;
}

/** The record of the `default` tenant until someone changes it: always present, no limits. */
export const DEFAULT_TENANT_RECORD: TenantRecord = Object.freeze({
  id: DEFAULT_TENANT,
  name: DEFAULT_TENANT,
  enabled: true,
  qps_limit: null,
  burst: null,
  execution_timeout_ms: null,
  max_rulesets: null,
});

/** The fields of a record, in the order they are written. */
export const TENANT_FIELDS = ['id', 'name', 'enabled', 'qps_limit', 'burst', 'execution_timeout_ms', 'max_rulesets'] as const;

/** Largest accepted `qps_limit`, `burst` and `max_rulesets`. */
const MAX_LIMIT = 1_000_000_000;
/** Longest accepted display name. */
const MAX_NAME_LENGTH = 256;

/** True for a valid tenant id (the ruleset name rule). */
export function isValidTenantId(id: unknown): id is string {
  return isValidRulesetName(id);
}

/** The message of an invalid tenant id. */
export function invalidTenantIdMessage(id: unknown): string {
  return `invalid tenant id ${JSON.stringify(clip(printable(id)))}: use 1-128 of A-Z a-z 0-9 _ - . not starting with '.'`;
}

/**
 * Checks a record body and returns the record with defaults applied, or the problems.
 * `id` is required in the body unless `pathId` is given (PUT), in which case a body id must
 * equal it. Unknown fields are problems (a typo such as `qps` must not silently do nothing).
 */
export function checkTenantRecord(body: unknown, pathId?: string, at = ''): { ok: true; record: TenantRecord } | { ok: false; problems: TenantProblem[] } {
  const problems: TenantProblem[] = [];
  const p = (field: string) => (at === '' ? field : `${at}.${field}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, problems: [{ path: at === '' ? 'tenant' : at, message: 'must be a JSON object' }] };
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!(TENANT_FIELDS as readonly string[]).includes(key)) {
      problems.push({ path: p(key), message: `unknown field (fields: ${TENANT_FIELDS.join(', ')})` });
    }
  }
  let id: string = pathId ?? '';
  if (pathId === undefined || b['id'] !== undefined) {
    if (b['id'] === undefined) problems.push({ path: p('id'), message: 'is required' });
    else if (!isValidTenantId(b['id'])) problems.push({ path: p('id'), message: invalidTenantIdMessage(b['id']) });
    else if (pathId !== undefined && b['id'] !== pathId) problems.push({ path: p('id'), message: `must equal the id in the path ('${pathId}')` });
    else id = b['id'];
  }
  let name = id;
  if (b['name'] !== undefined) {
    if (typeof b['name'] !== 'string' || b['name'].trim() === '' || b['name'].length > MAX_NAME_LENGTH) {
      problems.push({ path: p('name'), message: `must be a non-empty string of at most ${MAX_NAME_LENGTH} characters` });
    } else name = b['name'];
  }
  let enabled = true;
  if (b['enabled'] !== undefined) {
    if (typeof b['enabled'] !== 'boolean') problems.push({ path: p('enabled'), message: 'must be true or false' });
    else enabled = b['enabled'];
  }
  const qps = limit(b, 'qps_limit', 'a positive number (requests per second)', (v) => v > 0 && v <= MAX_LIMIT, p, problems);
  const burst = limit(b, 'burst', 'a positive integer', (v) => Number.isInteger(v) && v >= 1 && v <= MAX_LIMIT, p, problems);
  const timeout = limit(b, 'execution_timeout_ms', 'a non-negative integer (0 disables the timeout)', (v) => Number.isSafeInteger(v) && v >= 0, p, problems);
  const maxRulesets = limit(b, 'max_rulesets', 'a non-negative integer', (v) => Number.isInteger(v) && v >= 0 && v <= MAX_LIMIT, p, problems);
  if (burst !== null && (b['qps_limit'] === undefined || b['qps_limit'] === null)) {
    problems.push({ path: p('burst'), message: 'needs qps_limit (a burst without a rate limit means nothing)' });
  }
  if (id === DEFAULT_TENANT && enabled === false) {
    problems.push({ path: p('enabled'), message: `the '${DEFAULT_TENANT}' tenant cannot be disabled` });
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    record: Object.freeze({ id, name, enabled, qps_limit: qps, burst, execution_timeout_ms: timeout, max_rulesets: maxRulesets }),
  };
}

/**
 * Parses the content of `tenants.json` (`{"tenants": [record, ...]}`). Throws an Error that
 * lists every problem (all or nothing: a registry is never half loaded).
 */
export function parseTenantsDocument(value: unknown): TenantRecord[] {
  const problems: TenantProblem[] = [];
  const list = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)['tenants'] : undefined;
  if (!Array.isArray(list)) throw new Error('must be a JSON object {"tenants": [record, ...]}');
  const seen = new Set<string>();
  const records: TenantRecord[] = [];
  list.forEach((item, i) => {
    const out = checkTenantRecord(item, undefined, `tenants[${i}]`);
    if (!out.ok) {
      problems.push(...out.problems);
    } else if (seen.has(out.record.id)) {
      problems.push({ path: `tenants[${i}].id`, message: `duplicate id '${out.record.id}'` });
    } else {
      seen.add(out.record.id);
      records.push(out.record);
    }
  });
  if (problems.length > 0) throw new Error(problems.map((x) => `${x.path}: ${x.message}`).join('; '));
  return records;
}

/** The `tenants.json` document of a set of records (sorted by id, fields in record order). */
export function tenantsDocument(records: Iterable<TenantRecord>): { tenants: TenantRecord[] } {
  const tenants = [...records].map(canonicalRecord).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { tenants };
}

/** A copy of a record with the fields in the documented order (for stable JSON). */
export function canonicalRecord(r: TenantRecord): TenantRecord {
  return {
    id: r.id,
    name: r.name,
    enabled: r.enabled,
    qps_limit: r.qps_limit,
    burst: r.burst,
    execution_timeout_ms: r.execution_timeout_ms,
    max_rulesets: r.max_rulesets,
  };
}

/** True when two records are equal field by field. */
export function sameRecord(a: TenantRecord, b: TenantRecord): boolean {
  return TENANT_FIELDS.every((f) => a[f] === b[f]);
}

/** Reads an optional number-or-null field; pushes a problem when it is anything else. */
function limit(
  b: Record<string, unknown>,
  field: string,
  what: string,
  valid: (v: number) => boolean,
  p: (f: string) => string,
  problems: TenantProblem[],
): number | null {
  const v = b[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || !valid(v)) {
    problems.push({ path: p(field), message: `must be ${what}, or null` });
    return null;
  }
  return v;
}

/**
 * `String(value)`, or `[object Object]`-style text when the value cannot be converted.
 * NOTE: a JSON body can carry an object whose `toString` is not a function (`{"toString": null}`),
 * and `String()` of it throws; an invalid id must still be a 400 that names it, not a 500.
 */
function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function clip(s: string): string {
  const clean = s.replace(/[\u0000-\u001f]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
