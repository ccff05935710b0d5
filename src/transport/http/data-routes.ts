/**
 * The reference data routes of the route table (EXTENSIONS.md 3 "Reference data"). Decode, call
 * one `DataService` method (src/service/data-service.ts), encode:
 *
 * | route | permission | answer |
 * |---|---|---|
 * | GET /api/v1/data | read | 200, `[{name, bytes, version}]` sorted by name |
 * | GET /api/v1/data/:name | read | 200, the document; 404 NOT_FOUND |
 * | PUT /api/v1/data/:name | write | 200, `{status: created or updated, name, bytes, version}`; 413 over `--max-data-bytes` |
 * | DELETE /api/v1/data/:name | write | 204; 404 NOT_FOUND |
 *
 * All act for the request's tenant (`X-Tenant-ID`). Writes are 409 READ_ONLY on a reader.
 */
import { ServiceError } from '../../service/errors.js';
import type { DataServiceApi } from '../../service/data-service.js';
import type { Route, RouteDeps } from './route.js';
import * as S from './route-schemas.js';

function dataOf(d: RouteDeps): DataServiceApi {
  if (d.data === undefined) throw new ServiceError('NOT_FOUND', 'reference data is not available on this server');
  return d.data;
}

/** The data routes, in `Allow` order. */
export const DATA_ROUTES: readonly Route[] = [
  {
    id: 'listData',
    doc: { summary: 'List the reference datasets', response: S.DATA_LIST, errors: ['NOT_FOUND'] },
    method: 'GET',
    path: '/api/v1/data',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx) => dataOf(d).list(ctx),
  },
  {
    id: 'getData',
    doc: { summary: 'Get a reference dataset', response: S.ANY, errors: ['NOT_FOUND'] },
    method: 'GET',
    path: '/api/v1/data/:name',
    permission: 'read',
    requestSchema: 'none',
    reply: 'text',
    handle: (d, ctx, name) => dataOf(d).getText(ctx, name),
  },
  {
    id: 'putData',
    doc: {
      summary: 'Create or replace a reference dataset',
      description: 'The body is the dataset: any JSON value. Larger than `--max-data-bytes` is 413.',
      response: S.DATA_PUT_RESULT,
      errors: ['NOT_FOUND'],
    },
    method: 'PUT',
    path: '/api/v1/data/:name',
    permission: 'write',
    requestSchema: { description: 'the dataset: any JSON value (an object or an array is usual)' },
    reply: 'json',
    handle: (d, ctx, name, body) => dataOf(d).put(ctx, name, body),
  },
  {
    id: 'deleteData',
    doc: { summary: 'Delete a reference dataset', errors: ['NOT_FOUND'] },
    method: 'DELETE',
    path: '/api/v1/data/:name',
    permission: 'write',
    requestSchema: 'none',
    reply: 'empty',
    handle: (d, ctx, name) => dataOf(d).delete(ctx, name),
  },
];
