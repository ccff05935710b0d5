/**
 * The one mapping between the broker's wire events (events.ts: `RulePut`, `RuleDeleted`,
 * `TenantConfigChanged`, `DataPut`, `DataDeleted`, `ShadowPut`, `ShadowDeleted`, a format older readers must keep
 * understanding) and the internal change stream (store/change.ts). A new synchronized resource
 * adds one case to each function.
 */
import type { Change, IncomingChange, SnapshotEntry } from '../store/change.js';
import { dataDeletedOf, dataPutOf, ruleDeletedOf, rulePutOf, shadowDeletedOf, shadowPutOf, type SyncEvent } from './events.js';
import { tenantChangedOf } from './tenant-sync.js';

/** The wire event of an applied change, or of a snapshot entry. */
export function wireEventOf(change: Change | SnapshotEntry): SyncEvent {
  switch (change.kind) {
    case 'ruleset.put':
      return rulePutOf(change.record);
    case 'ruleset.delete':
      return ruleDeletedOf(change.tenant, change.name);
    case 'tenant.put':
      return tenantChangedOf(change.record.id, change.record);
    case 'tenant.delete':
      return tenantChangedOf(change.id, null);
    case 'data.put':
      return dataPutOf(change.record);
    case 'data.delete':
      return dataDeletedOf(change.tenant, change.name);
    case 'shadow.put':
      return shadowPutOf(change.record);
    case 'shadow.delete':
      return shadowDeletedOf(change.tenant, change.name);
    default:
      return assertNever(change);
  }
}

/**
 * The change a received wire event asks for. Throws a `SyntaxError` when a `RulePut`'s
 * `ruleset_json` or a `DataPut`'s `data_json` is not JSON (the caller logs and skips it).
 */
export function incomingChangeOf(event: SyncEvent): IncomingChange {
  switch (event.type) {
    case 'RulePut':
      return { kind: 'ruleset.put', tenant: event.tenant_id, doc: JSON.parse(event.ruleset_json) as unknown };
    case 'RuleDeleted':
      return { kind: 'ruleset.delete', tenant: event.tenant_id, name: event.name };
    case 'TenantConfigChanged':
      return event.tenant === null ? { kind: 'tenant.delete', id: event.tenant_id } : { kind: 'tenant.put', id: event.tenant_id, record: event.tenant };
    case 'DataPut':
      return { kind: 'data.put', tenant: event.tenant_id, name: event.name, value: JSON.parse(event.data_json) as unknown };
    case 'DataDeleted':
      return { kind: 'data.delete', tenant: event.tenant_id, name: event.name };
    case 'ShadowPut':
      return { kind: 'shadow.put', tenant: event.tenant_id, name: event.name, value: JSON.parse(event.shadow_json) as unknown };
    case 'ShadowDeleted':
      return { kind: 'shadow.delete', tenant: event.tenant_id, name: event.name };
    default:
      return assertNever(event);
  }
}

function assertNever(value: never): never {
  throw new Error(`unknown change: ${JSON.stringify(value)}`);
}
