/** Authentication and authorization (EXTENSIONS.md 1); see ./guard.ts. */
export { API_KEY_PREFIX, hashApiKey, newApiKey } from './api-key.js';
export { ALL_TENANTS, AuthGuard, authorize, type AuthFailure, type FailureReason } from './guard.js';
export { JwtVerifier, parseJwks } from './jwt.js';
export { KeysFileError, parseKeysFile } from './keys-file.js';
export { AUTH_ROLES, ROLE_PERMISSIONS, isAuthRole, type AuthRole, type Permission, type Principal, type RoutePermission } from './permissions.js';
export { AuthConfigError, authEnabled, startAuth, type AuthConfig, type AuthRuntime } from './sources.js';
export { makeKeyRecord, type KeyRequest } from './key-record.js';
