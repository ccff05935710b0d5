/**
 * Roles, permissions and the principal a verified credential stands for (EXTENSIONS.md 1
 * "Roles → permissions", "Tenants"). Pure: no I/O.
 */

/** What a route or a gRPC method needs (the route table's `permission` column). */
export type Permission = 'execute' | 'read' | 'write' | 'admin';

/** A route's permission column: a permission, or `public` for the routes that stay open. */
export type RoutePermission = Permission | 'public';

/** The roles a credential may carry. */
export const AUTH_ROLES = ['executor', 'viewer', 'editor', 'admin'] as const;

/** One of `AUTH_ROLES`. */
export type AuthRole = (typeof AUTH_ROLES)[number];

/** The permissions of each role: each role has those of the one before it and one more. */
export const ROLE_PERMISSIONS: Readonly<Record<AuthRole, readonly Permission[]>> = {
  executor: ['execute'],
  viewer: ['execute', 'read'],
  editor: ['execute', 'read', 'write'],
  admin: ['execute', 'read', 'write', 'admin'],
};

/** True when `value` names a role. */
export function isAuthRole(value: unknown): value is AuthRole {
  return typeof value === 'string' && (AUTH_ROLES as readonly string[]).includes(value);
}

/**
 * Who a verified credential stands for. NOTE: built once per credential and cached
 * (./guard.ts); the request path only reads it.
 */
export interface Principal {
  /** The key id (API key) or the `sub` claim (JWT): what audit lines call `principal`. */
  readonly id: string;
  readonly source: 'api_key' | 'jwt';
  /** null: a JWT whose role claim names no role (authenticated, allowed nothing). */
  readonly role: AuthRole | null;
  /** Bit set of the role's permissions (`PERMISSION_BITS`). */
  readonly permissions: number;
  /** True for `*`: every tenant, and the routes that are not about one tenant. */
  readonly allTenants: boolean;
  readonly tenants: ReadonlySet<string>;
  /** Epoch milliseconds after which the credential is refused (Infinity: never). */
  readonly expiresAt: number;
}

/** One bit per permission (a principal's `permissions`). */
export const PERMISSION_BITS: Readonly<Record<Permission, number>> = { execute: 1, read: 2, write: 4, admin: 8 };

/** Builds a principal from a role and a tenant list (`*` anywhere in it means all tenants). */
export function makePrincipal(id: string, source: Principal['source'], role: AuthRole | null, tenants: readonly string[], expiresAt: number): Principal {
  let permissions = 0;
  if (role !== null) for (const p of ROLE_PERMISSIONS[role]) permissions |= PERMISSION_BITS[p];
  const allTenants = tenants.includes('*');
  return { id, source, role, permissions, allTenants, tenants: new Set(allTenants ? [] : tenants), expiresAt };
}
