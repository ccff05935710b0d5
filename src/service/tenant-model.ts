/**
 * The tenant record as the façade sees it: the record and its validation live with the store
 * (store/tenant-record.ts, re-exported here); this module adds the 400 BAD_REQUEST of an invalid
 * `POST/PUT /api/v1/tenants` body.
 */
import { checkTenantRecord, type TenantRecord } from '../store/tenant-record.js';
import { ServiceError } from './errors.js';

export {
  DEFAULT_TENANT_RECORD,
  TENANT_FIELDS,
  canonicalRecord,
  checkTenantRecord,
  invalidTenantIdMessage,
  isValidTenantId,
  parseTenantsDocument,
  sameRecord,
  tenantsDocument,
  type TenantProblem,
  type TenantRecord,
} from '../store/tenant-record.js';

/** Like `checkTenantRecord`, but throws 400 BAD_REQUEST listing every problem. */
export function parseTenantRecord(body: unknown, pathId?: string): TenantRecord {
  const out = checkTenantRecord(body, pathId);
  if (out.ok) return out.record;
  throw new ServiceError('BAD_REQUEST', `invalid tenant: ${out.problems.map((x) => `${x.path}: ${x.message}`).join('; ')}`, {
    problems: out.problems,
  });
}
