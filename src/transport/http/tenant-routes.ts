/**
 * The tenant management routes of the HTTP adapter (multi-tenancy mode only; without it they
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
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { CallContext } from '../../service/types.js';

/** The tenant routes as [method, path] pairs, for the adapter's 405 answers. */
export const TENANT_ROUTES: ReadonlyArray<readonly [string, RegExp]> = [
  ['GET', /^\/api\/v1\/tenants$/],
  ['POST', /^\/api\/v1\/tenants$/],
  ['GET', /^\/api\/v1\/tenants\/[^/]+$/],
  ['PUT', /^\/api\/v1\/tenants\/[^/]+$/],
  ['DELETE', /^\/api\/v1\/tenants\/[^/]+$/],
];

type IdParams = { Params: { id: string } };

/** Registers the routes of the table above on `app`. */
export function registerTenantRoutes(app: FastifyInstance, tenants: TenantManagerApi, ctxOf: (req: FastifyRequest) => CallContext): void {
  app.get('/api/v1/tenants', (_req, reply) => {
    void reply.send(tenants.list());
  });
  app.post('/api/v1/tenants', async (req, reply) => {
    const record = await tenants.create(ctxOf(req), req.body);
    return reply.code(201).send(record);
  });
  app.get<IdParams>('/api/v1/tenants/:id', (req, reply) => {
    void reply.send(tenants.get(req.params.id));
  });
  app.put<IdParams>('/api/v1/tenants/:id', async (req) => tenants.update(ctxOf(req), req.params.id, req.body));
  app.delete<IdParams>('/api/v1/tenants/:id', async (req, reply) => {
    await tenants.delete(ctxOf(req), req.params.id);
    return reply.code(204).send();
  });
}
