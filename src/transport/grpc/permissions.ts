/**
 * The gRPC column of the route table: the permission of every method of `rules.RuleService`.
 */
import type { RoutePermission } from '../../auth/index.js';

/**
 * The permission each method of `rules.RuleService` needs with authentication on (the gRPC
 * column of the route table; test/unit/transport/grpc/permissions.test.ts checks every method of the
 * proto has one, and test/integration/grpc-route-parity.test.ts that each equals its HTTP route's).
 * `Health` stays open, like HTTP `/health`.
 */
export const GRPC_PERMISSIONS = {
  Execute: 'execute',
  BatchExecute: 'execute',
  Eval: 'execute',
  ListRuleSets: 'read',
  GetRuleSet: 'read',
  Health: 'public',
  PutRuleset: 'write',
  DeleteRuleset: 'write',
  ListVersions: 'read',
  Rollback: 'write',
  GetAnalysis: 'read',
  GetInputSchema: 'read',
  Filter: 'execute',
  TestRuleset: 'read',
  Diff: 'read',
  Impact: 'read',
  DraftValidate: 'execute',
  DraftExecute: 'execute',
  DraftFilter: 'execute',
  DraftTest: 'execute',
  GetAuditSampleRate: 'read',
  SetAuditSampleRate: 'admin',
  ListData: 'read',
  GetData: 'read',
  PutData: 'write',
  DeleteData: 'write',
  ListTenants: 'admin',
  CreateTenant: 'admin',
  GetTenant: 'admin',
  UpdateTenant: 'admin',
  DeleteTenant: 'admin',
  DebugRuleset: 'read',
  PutShadow: 'write',
  GetShadow: 'read',
  DeleteShadow: 'write',
  PromoteShadow: 'write',
} as const satisfies Record<string, RoutePermission>;

/**
 * Methods about no single tenant (the route table's `scope: 'global'`): with authentication on,
 * the credential must cover every tenant (`*`), as on HTTP.
 */
export const GRPC_GLOBAL_METHODS: ReadonlySet<GrpcMethod> = new Set<GrpcMethod>([
  'GetAuditSampleRate',
  'SetAuditSampleRate',
  'ListTenants',
  'CreateTenant',
  'GetTenant',
  'UpdateTenant',
  'DeleteTenant',
]);

/** A method of `rules.RuleService`. */
export type GrpcMethod = keyof typeof GRPC_PERMISSIONS;
