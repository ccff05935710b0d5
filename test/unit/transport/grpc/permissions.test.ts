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
import { GRPC_PERMISSIONS } from '../../../../src/transport/grpc/handlers.js';
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

  it('the permissions follow EXTENSIONS.md 1: execute for Execute/BatchExecute/Eval, read for List/Get', () => {
    assert.deepEqual(
      { ...GRPC_PERMISSIONS },
      { Execute: 'execute', BatchExecute: 'execute', Eval: 'execute', ListRuleSets: 'read', GetRuleSet: 'read', Health: 'public' },
    );
  });
});
