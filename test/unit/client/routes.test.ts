/**
 * The client covers the route table: every route of the server's table has a client method
 * (test/helpers/client-routes.ts), and the client's endpoint of that route has the table's
 * method and path. A route added to the server without a client method fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENDPOINTS, SvcClient, endpointPath } from '../../../client/src/index.js';
import { ROUTES } from '../../../src/transport/http/routes.js';
import { CLIENT_METHOD_OF_ROUTE } from '../../helpers/client-routes.js';

describe('svc-client route coverage', () => {
  it('every route of the table has a client method and the same method and path', () => {
    assert.ok(ROUTES.length >= 39, `the route table has ${ROUTES.length} routes`);
    for (const route of ROUTES) {
      const method = CLIENT_METHOD_OF_ROUTE[route.id];
      assert.ok(method !== undefined, `route ${route.id} (${route.method} ${route.path}) has no client method in test/helpers/client-routes.ts`);
      assert.equal(typeof SvcClient.prototype[method], 'function', `SvcClient has no method ${method} (route ${route.id})`);
      const endpoint = (ENDPOINTS as Record<string, { method: string; path: string }>)[route.id];
      assert.ok(endpoint !== undefined, `client/src/endpoints.ts has no entry ${route.id}`);
      assert.deepEqual({ method: endpoint.method, path: endpoint.path }, { method: route.method, path: route.path }, route.id);
    }
  });

  it('the client has no endpoint the server does not serve', () => {
    const ids = new Set(ROUTES.map((r) => r.id));
    for (const id of Object.keys(ENDPOINTS)) assert.ok(ids.has(id), `client endpoint ${id} is not a route of the server`);
    for (const id of Object.keys(CLIENT_METHOD_OF_ROUTE)) assert.ok(ids.has(id), `test map entry ${id} is not a route of the server`);
  });

  it('path parameters are URL-encoded and required', () => {
    assert.equal(endpointPath('getRuleset', 'a b/c'), '/api/v1/rulesets/a%20b%2Fc');
    assert.equal(endpointPath('promoteShadow', 'loan'), '/api/v1/rulesets/loan/shadow/promote');
    assert.equal(endpointPath('listRulesets'), '/api/v1/rulesets');
    assert.throws(() => endpointPath('getRuleset', ''), /non-empty/);
    assert.throws(() => endpointPath('getTenant'), /non-empty/);
  });
});
