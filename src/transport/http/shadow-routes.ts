/**
 * The shadow run routes of the route table (EXTENSIONS.md 4 "Shadow runs"). Decode, call one
 * façade method (src/service/rule-service.ts), encode:
 *
 * | route | permission | answer |
 * |---|---|---|
 * | PUT /api/v1/rulesets/:name/shadow | write | 200, `{status, name, candidate_version, sample_rate, since, warnings?}`; 400 invalid candidate; 422 TESTS_FAILED |
 * | GET /api/v1/rulesets/:name/shadow | read | 200, the shadow and this instance's counts; 404 without one |
 * | POST /api/v1/rulesets/:name/shadow/promote | write | 200, `{status: promoted, name, from_version, to_version}`; 422 TESTS_FAILED |
 * | DELETE /api/v1/rulesets/:name/shadow | write | 204; 404 without one |
 *
 * All act for the request's tenant (`X-Tenant-ID`). Writes are 409 READ_ONLY on a reader.
 */
import type { Route } from './route.js';
import * as S from './route-schemas.js';

const OBJECT = S.OBJECT;

/** The shadow routes, in `Allow` order. */
export const SHADOW_ROUTES: readonly Route[] = [
  {
    id: 'putShadow',
    doc: { summary: 'Start or replace a shadow run', response: S.SHADOW_PUT_RESULT, errors: ['NOT_FOUND', 'FORBIDDEN', 'TESTS_FAILED'] },
    method: 'PUT',
    path: '/api/v1/rulesets/:name/shadow',
    permission: 'write',
    requestSchema: {
      type: 'object',
      properties: {
        candidate: { ...OBJECT, description: 'the candidate ruleset document (same config.name)' },
        sample_rate: { type: 'number', description: 'percent of the live executions that also run the candidate (above 0, at most 100)' },
      },
      required: ['candidate', 'sample_rate'],
    },
    reply: 'json',
    handle: (d, ctx, name, body) => d.service.putShadow(ctx, name, body),
  },
  {
    id: 'getShadow',
    doc: { summary: "A shadow run and this instance's counts", response: S.SHADOW_RESULT, errors: ['NOT_FOUND'] },
    method: 'GET',
    path: '/api/v1/rulesets/:name/shadow',
    permission: 'read',
    requestSchema: 'none',
    reply: 'json',
    handle: (d, ctx, name) => d.service.getShadow(ctx, name),
  },
  {
    id: 'deleteShadow',
    doc: { summary: 'End a shadow run', errors: ['NOT_FOUND'] },
    method: 'DELETE',
    path: '/api/v1/rulesets/:name/shadow',
    permission: 'write',
    requestSchema: 'none',
    reply: 'empty',
    handle: (d, ctx, name) => d.service.deleteShadow(ctx, name),
  },
  {
    id: 'promoteShadow',
    doc: { summary: 'Promote the candidate of a shadow run', response: S.SHADOW_PROMOTE_RESULT, errors: ['NOT_FOUND', 'TESTS_FAILED'] },
    method: 'POST',
    path: '/api/v1/rulesets/:name/shadow/promote',
    permission: 'write',
    requestSchema: { type: 'object', description: 'empty: nothing is read (the stored candidate is promoted)' },
    reply: 'json',
    handle: (d, ctx, name) => d.service.promoteShadow(ctx, name),
  },
];
