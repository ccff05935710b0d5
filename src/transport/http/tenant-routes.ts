/**
 * The tenant management routes of the route table (multi-tenancy mode only; without it they
 * do not exist and answer 404). Decode, call one `TenantManager` method, encode:
 *
 * | route | answer |
 * |---|---|
 * | GET /api/v1/tenants | 200, array of tenant records sorted by id (`default` included) |
 * | POST /api/v1/tenants | 201, the created record; 409 CONFLICT when the id exists |
 * | GET /api/v1/tenants/:id | 200, the record; 404 TENANT_NOT_FOUND |
 * | PUT /api/v1/tenants/:id | 200, the new record (whole-record replace); 404 TENANT_NOT_FOUND |
 * | DELETE /api/v1/tenants/:id | 204; 409 CONFLICT while it owns rulesets, or for `default` |
 *
 * Writes are 409 READ_ONLY on a reader. The `X-Tenant-ID` header plays no part here.
 */
import { ServiceError } from '../../service/errors.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { Route, RouteDeps } from './route.js';
import * as S from './route-schemas.js';

const hasTenants = (d: RouteDeps): boolean => d.tenants !== undefined;

/** The tenant routes, in `Allow` order; they exist only with a tenant manager. */
export const TENANT_ROUTES: readonly Route[] = [
  {
    id: 'listTenants',
    doc: { summary: 'List the tenants', response: { type: 'array', items: S.TENANT }, errors: [] },
    method: 'GET',
    path: '/api/v1/tenants',
    permission: 'admin',
    scope: 'global',
    requestSchema: 'none',
    when: hasTenants,
    reply: 'json',
    handle: (d) => tenantsOf(d).list(),
  },
  {
    id: 'createTenant',
    doc: { summary: 'Create a tenant', response: S.TENANT, errors: ['CONFLICT'] },
    method: 'POST',
    path: '/api/v1/tenants',
    permission: 'admin',
    scope: 'global',
    requestSchema: { ...S.TENANT_INPUT, required: ['id'] },
    when: hasTenants,
    reply: 'json',
    status: 201,
    handle: (d, ctx, _id, body) => tenantsOf(d).create(ctx, body),
  },
  {
    id: 'getTenant',
    doc: { summary: 'Get a tenant', response: S.TENANT, errors: ['TENANT_NOT_FOUND'] },
    method: 'GET',
    path: '/api/v1/tenants/:id',
    permission: 'admin',
    scope: 'global',
    requestSchema: 'none',
    when: hasTenants,
    reply: 'json',
    handle: (d, _ctx, id) => tenantsOf(d).get(id),
  },
  {
    id: 'updateTenant',
    doc: { summary: 'Replace a tenant record', response: S.TENANT, errors: ['TENANT_NOT_FOUND'] },
    method: 'PUT',
    path: '/api/v1/tenants/:id',
    permission: 'admin',
    scope: 'global',
    requestSchema: S.TENANT_INPUT,
    when: hasTenants,
    reply: 'json',
    handle: (d, ctx, id, body) => tenantsOf(d).update(ctx, id, body),
  },
  {
    id: 'deleteTenant',
    doc: {
      summary: 'Delete a tenant',
      description: 'Refused (409) while the tenant owns rulesets, and for `default`.',
      errors: ['TENANT_NOT_FOUND', 'CONFLICT'],
    },
    method: 'DELETE',
    path: '/api/v1/tenants/:id',
    permission: 'admin',
    scope: 'global',
    requestSchema: 'none',
    when: hasTenants,
    reply: 'empty',
    handle: (d, ctx, id) => tenantsOf(d).delete(ctx, id),
  },
];

/** The tenant manager of a tenant route (which exists only with one). */
function tenantsOf(d: RouteDeps): TenantManagerApi {
  if (d.tenants === undefined) throw new ServiceError('NOT_FOUND', 'multi-tenancy is disabled');
  return d.tenants;
}
