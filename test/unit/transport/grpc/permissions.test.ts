/**
 * The gRPC column of the route table (EXTENSIONS.md 1): every method of `rules.RuleService`,
 * read from the proto the server loads (src/transport/grpc/proto.ts), has an entry in
 * GRPC_PERMISSIONS, and the table names no method the proto lacks. A method added to the proto
 * without a permission fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { ROLE_PERMISSIONS } from '../../../../src/auth/index.js';
import { GRPC_GLOBAL_METHODS, GRPC_PERMISSIONS } from '../../../../src/transport/grpc/handlers.js';
import { loadRulesPackage, ruleServiceDefinition, SERVICE_NAME } from '../../../../src/transport/grpc/proto.js';

const PERMISSIONS = new Set(['public', ...ROLE_PERMISSIONS.admin]);

describe('GRPC_PERMISSIONS', () => {
  const loaded = loadRulesPackage()[SERVICE_NAME] as unknown as ServiceDefinition;
  const protoMethods = Object.keys(loaded).sort();

  it('the proto defines rules.RuleService with methods', () => {
    assert.ok(protoMethods.length >= 6, `methods: ${protoMethods.join(', ')}`);
    assert.ok(protoMethods.includes('Execute'));
  });

  it('every method of rules.RuleService has a permission, and no entry names a method the proto lacks', () => {
    const table = GRPC_PERMISSIONS as Record<string, string>;
    const missing = protoMethods.filter((m) => !Object.hasOwn(table, m));
    assert.deepEqual(missing, [], `methods of ${SERVICE_NAME} without an entry in GRPC_PERMISSIONS`);
    assert.deepEqual(Object.keys(table).sort(), protoMethods);
    // The server serves the same methods (the wrapped definition).
    assert.deepEqual(Object.keys(ruleServiceDefinition()).sort(), protoMethods);
  });

  it('each entry is a permission or public; only Health is public (like HTTP /health)', () => {
    for (const [method, permission] of Object.entries(GRPC_PERMISSIONS)) {
      assert.ok(PERMISSIONS.has(permission), `${method}: ${permission}`);
    }
    assert.deepEqual(
      Object.entries(GRPC_PERMISSIONS)
        .filter(([, p]) => p === 'public')
        .map(([m]) => m),
      ['Health'],
    );
  });

  it('the permissions follow EXTENSIONS.md 1 for the spec methods (each other one equals its HTTP route: grpc-route-parity.test.ts)', () => {
    const spec = ['Execute', 'BatchExecute', 'Eval', 'ListRuleSets', 'GetRuleSet', 'Health'] as const;
    assert.deepEqual(Object.fromEntries(spec.map((m) => [m, GRPC_PERMISSIONS[m]])), {
      Execute: 'execute',
      BatchExecute: 'execute',
      Eval: 'execute',
      ListRuleSets: 'read',
      GetRuleSet: 'read',
      Health: 'public',
    });
    // Writes need write; tenant management and the sample rate change need admin.
    for (const m of ['PutRuleset', 'DeleteRuleset', 'Rollback', 'PutData', 'DeleteData', 'PutShadow', 'DeleteShadow', 'PromoteShadow'] as const) {
      assert.equal(GRPC_PERMISSIONS[m], 'write', m);
    }
    for (const m of ['SetAuditSampleRate', 'ListTenants', 'CreateTenant', 'GetTenant', 'UpdateTenant', 'DeleteTenant'] as const) {
      assert.equal(GRPC_PERMISSIONS[m], 'admin', m);
    }
  });

  it('the global methods are the tenant management and audit sample rate ones (HTTP scope "global")', () => {
    assert.deepEqual([...GRPC_GLOBAL_METHODS].sort(), [
      'CreateTenant',
      'DeleteTenant',
      'GetAuditSampleRate',
      'GetTenant',
      'ListTenants',
      'SetAuditSampleRate',
      'UpdateTenant',
    ]);
  });
});
