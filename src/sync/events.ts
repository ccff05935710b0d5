/**
 * Sync events on the wire (SPEC.md "Sync events", DECISIONS.md 7, EXTENSIONS.md 3 "Reference
 * data", 4 "Shadow runs"): the envelope `{instance_id, event, timestamp_ms}` and the events
 * `RulePut`, `RuleDeleted`, `TenantConfigChanged`, `DataPut`, `DataDeleted`, `ShadowPut` and
 * `ShadowDeleted`, their subjects, and strict decoding of what a reader receives.
 *
 * Subjects: `{prefix}.{tenant_id}.{name}` for rules, `{prefix}.{tenant_id}.data.{name}` for
 * datasets (one token more than a rule's, so a dataset and a ruleset of the same name never
 * share a subject, and `{prefix}.{tenant_id}.>` covers everything of one tenant),
 * `{prefix}.{tenant_id}.shadow.{name}` for the shadow run of a ruleset (the same reasoning) and
 * `{prefix}.tenants` for tenant events.
 * NOTE: a ruleset name or tenant id may contain `.` (DECISIONS.md 1), which separates NATS
 * subject tokens, and may even end with one (an invalid subject). Inside a token `.` is
 * written `%2E`; `%` never occurs in a name, so the mapping stays one-to-one and a name
 * without dots gets exactly the subject of the spec.
 */
import { isValidRulesetName } from '../ruleset/model.js';
import { shadowJson, type ShadowRecord } from '../store/shadow-record.js';
import type { RuleRecord } from '../store/types.js';

/** A rule was created, updated or rolled back. */
export interface RulePutEvent {
  readonly type: 'RulePut';
  readonly tenant_id: string;
  readonly name: string;
  /** JSON text of the ruleset (with `_signature` when it was stored with one). */
  readonly ruleset_json: string;
  readonly version: string;
}

/** A rule was deleted. */
export interface RuleDeletedEvent {
  readonly type: 'RuleDeleted';
  readonly tenant_id: string;
  readonly name: string;
}

/** A tenant record was created, updated (record) or deleted (null). */
export interface TenantConfigChangedEvent {
  readonly type: 'TenantConfigChanged';
  readonly tenant_id: string;
  readonly tenant: Record<string, unknown> | null;
}

/** A dataset (reference data) was created or replaced. */
export interface DataPutEvent {
  readonly type: 'DataPut';
  readonly tenant_id: string;
  readonly name: string;
  /** Compact JSON text of the dataset. */
  readonly data_json: string;
  /** The dataset's version (first 16 hex digits of the SHA-256 of `data_json`). */
  readonly version: string;
}

/** A dataset was deleted. */
export interface DataDeletedEvent {
  readonly type: 'DataDeleted';
  readonly tenant_id: string;
  readonly name: string;
}

/** A shadow run of a ruleset (EXTENSIONS.md 4) was started or replaced. */
export interface ShadowPutEvent {
  readonly type: 'ShadowPut';
  readonly tenant_id: string;
  /** The ruleset's name. */
  readonly name: string;
  /** JSON text `{candidate, sample_rate, since}` (store/shadow-record.ts). */
  readonly shadow_json: string;
  readonly version: string;
}

/** A shadow run ended (deleted or promoted). */
export interface ShadowDeletedEvent {
  readonly type: 'ShadowDeleted';
  readonly tenant_id: string;
  readonly name: string;
}

/** Any sync event. */
export type SyncEvent = RulePutEvent | RuleDeletedEvent | TenantConfigChangedEvent | DataPutEvent | DataDeletedEvent | ShadowPutEvent | ShadowDeletedEvent;

/** The events about one named resource of a tenant (a ruleset or a dataset). */
export type NamedSyncEvent = Exclude<SyncEvent, TenantConfigChangedEvent>;

/** The collections of named events. */
export type ResourceKind = 'ruleset' | 'data' | 'shadow';

/** Which collection a named event belongs to. */
export function resourceKind(event: NamedSyncEvent): ResourceKind {
  if (event.type === 'DataPut' || event.type === 'DataDeleted') return 'data';
  return event.type === 'ShadowPut' || event.type === 'ShadowDeleted' ? 'shadow' : 'ruleset';
}

/** The content a put carries (null for a deletion), to compare with what the stream shows. */
export function eventContent(event: NamedSyncEvent): string | null {
  switch (event.type) {
    case 'RulePut':
      return event.ruleset_json;
    case 'DataPut':
      return event.data_json;
    case 'ShadowPut':
      return event.shadow_json;
    default:
      return null;
  }
}

/** True for the events that put a resource (not deletions). */
export function isPutEvent(event: NamedSyncEvent): boolean {
  return event.type === 'RulePut' || event.type === 'DataPut' || event.type === 'ShadowPut';
}

/** What travels in a message body. */
export interface SyncEnvelope {
  readonly instance_id: string;
  readonly event: SyncEvent;
  readonly timestamp_ms: number;
}

/** The stream of sync events (SPEC.md "Sync events"). */
export const STREAM_NAME = 'svc-rules';
/** Retention of the stream: 7 days (SPEC.md "Limits"). */
export const STREAM_MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/** Escapes one subject token (see the module comment). */
export function subjectToken(value: string): string {
  return value.replaceAll('.', '%2E');
}

/** Subject of the events of one rule: `{prefix}.{tenant_id}.{name}`. */
export function ruleSubject(prefix: string, tenant: string, name: string): string {
  return `${prefix}.${subjectToken(tenant)}.${subjectToken(name)}`;
}

/** Subject of the events of one dataset: `{prefix}.{tenant_id}.data.{name}`. */
export function dataSubject(prefix: string, tenant: string, name: string): string {
  return `${prefix}.${subjectToken(tenant)}.data.${subjectToken(name)}`;
}

/** Subject of the events of one ruleset's shadow run: `{prefix}.{tenant_id}.shadow.{name}`. */
export function shadowSubject(prefix: string, tenant: string, name: string): string {
  return `${prefix}.${subjectToken(tenant)}.shadow.${subjectToken(name)}`;
}

/** Subject of tenant events: `{prefix}.tenants`. */
export function tenantsSubject(prefix: string): string {
  return `${prefix}.tenants`;
}

/** Subject filter that covers every sync subject: `{prefix}.>`. */
export function allSubjects(prefix: string): string {
  return `${prefix}.>`;
}

/** Subject of any event. */
export function eventSubject(prefix: string, event: SyncEvent): string {
  if (event.type === 'TenantConfigChanged') return tenantsSubject(prefix);
  const kind = resourceKind(event);
  if (kind === 'shadow') return shadowSubject(prefix, event.tenant_id, event.name);
  return kind === 'data' ? dataSubject(prefix, event.tenant_id, event.name) : ruleSubject(prefix, event.tenant_id, event.name);
}

/** The `RulePut` of a stored record. */
export function rulePutOf(record: RuleRecord): RulePutEvent {
  const doc = record.signature ? { ...record.doc, _signature: record.signature } : record.doc;
  return { type: 'RulePut', tenant_id: record.tenant, name: record.name, ruleset_json: JSON.stringify(doc), version: record.version };
}

/** The `RuleDeleted` of a rule. */
export function ruleDeletedOf(tenant: string, name: string): RuleDeletedEvent {
  return { type: 'RuleDeleted', tenant_id: tenant, name };
}

/** The `DataPut` of a stored dataset. */
export function dataPutOf(record: { readonly tenant: string; readonly name: string; readonly value: unknown; readonly version: string }): DataPutEvent {
  return { type: 'DataPut', tenant_id: record.tenant, name: record.name, data_json: JSON.stringify(record.value), version: record.version };
}

/** The `DataDeleted` of a dataset. */
export function dataDeletedOf(tenant: string, name: string): DataDeletedEvent {
  return { type: 'DataDeleted', tenant_id: tenant, name };
}

/** The `ShadowPut` of a stored shadow. */
export function shadowPutOf(record: ShadowRecord): ShadowPutEvent {
  return { type: 'ShadowPut', tenant_id: record.tenant, name: record.name, shadow_json: shadowJson(record), version: record.version };
}

/** The `ShadowDeleted` of a ruleset's shadow. */
export function shadowDeletedOf(tenant: string, name: string): ShadowDeletedEvent {
  return { type: 'ShadowDeleted', tenant_id: tenant, name };
}

/** The deletion event of a named resource of collection `kind`. */
export function deletedOf(kind: ResourceKind, tenant: string, name: string): NamedSyncEvent {
  return kind === 'data' ? dataDeletedOf(tenant, name) : kind === 'shadow' ? shadowDeletedOf(tenant, name) : ruleDeletedOf(tenant, name);
}

/** Serializes an envelope to the message body. */
export function encodeEnvelope(envelope: SyncEnvelope): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(envelope));
}

/** A message body that is not a valid envelope. */
export class EnvelopeError extends Error {}

/** Parses and validates a message body; throws `EnvelopeError` with the reason. */
export function decodeEnvelope(bytes: Uint8Array): SyncEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new EnvelopeError(`body is not JSON: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw new EnvelopeError('body is not a JSON object');
  const { instance_id, event, timestamp_ms } = value;
  if (typeof instance_id !== 'string' || instance_id === '') throw new EnvelopeError('instance_id must be a non-empty string');
  if (typeof timestamp_ms !== 'number' || !Number.isFinite(timestamp_ms)) throw new EnvelopeError('timestamp_ms must be a number');
  return { instance_id, timestamp_ms, event: decodeEvent(event) };
}

function decodeEvent(event: unknown): SyncEvent {
  if (!isObject(event)) throw new EnvelopeError('event must be an object');
  const { type, tenant_id } = event;
  if (!isValidRulesetName(tenant_id)) throw new EnvelopeError('event.tenant_id must be a valid tenant id');
  switch (type) {
    case 'RulePut': {
      const { name, ruleset_json, version } = event;
      if (!isValidRulesetName(name)) throw new EnvelopeError('event.name must be a valid ruleset name');
      if (typeof ruleset_json !== 'string') throw new EnvelopeError('event.ruleset_json must be a string');
      if (typeof version !== 'string') throw new EnvelopeError('event.version must be a string');
      return { type, tenant_id, name, ruleset_json, version };
    }
    case 'RuleDeleted': {
      const { name } = event;
      if (!isValidRulesetName(name)) throw new EnvelopeError('event.name must be a valid ruleset name');
      return { type, tenant_id, name };
    }
    case 'DataPut': {
      const { name, data_json, version } = event;
      if (!isValidRulesetName(name)) throw new EnvelopeError('event.name must be a valid dataset name');
      if (typeof data_json !== 'string') throw new EnvelopeError('event.data_json must be a string');
      if (typeof version !== 'string') throw new EnvelopeError('event.version must be a string');
      return { type, tenant_id, name, data_json, version };
    }
    case 'DataDeleted': {
      const { name } = event;
      if (!isValidRulesetName(name)) throw new EnvelopeError('event.name must be a valid dataset name');
      return { type, tenant_id, name };
    }
    case 'ShadowPut': {
      const { name, shadow_json, version } = event;
      if (!isValidRulesetName(name)) throw new EnvelopeError('event.name must be a valid ruleset name');
      if (typeof shadow_json !== 'string') throw new EnvelopeError('event.shadow_json must be a string');
      if (typeof version !== 'string') throw new EnvelopeError('event.version must be a string');
      return { type, tenant_id, name, shadow_json, version };
    }
    case 'ShadowDeleted': {
      const { name } = event;
      if (!isValidRulesetName(name)) throw new EnvelopeError('event.name must be a valid ruleset name');
      return { type, tenant_id, name };
    }
    case 'TenantConfigChanged': {
      const tenant = event['tenant'];
      if (tenant !== null && !isObject(tenant)) throw new EnvelopeError('event.tenant must be an object or null');
      return { type, tenant_id, tenant };
    }
    default:
      throw new EnvelopeError(`unknown event type ${JSON.stringify(type)}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
