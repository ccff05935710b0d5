/**
 * The record of one shadow run (EXTENSIONS.md 4 "Shadow runs", ./shadow-store.ts): the candidate
 * document of a ruleset, the share of live executions that also run it, and since when. Kept
 * apart from the store so the one change stream (./change.ts) can name it without a cycle.
 * Counters are not part of it: each instance counts its own traffic (src/service/shadow-registry.ts).
 */
import { createHash } from 'node:crypto';

/** One stored shadow of a ruleset. */
export interface ShadowRecord {
  readonly tenant: string;
  /** The live ruleset's name (the candidate has the same `config.name`). */
  readonly name: string;
  /** The candidate ruleset document (deep-frozen JSON). */
  readonly candidate: Readonly<Record<string, unknown>>;
  /** Percent of the live executions that also run the candidate (0 < rate <= 100). */
  readonly sampleRate: number;
  /** When the shadow was put (ISO 8601). */
  readonly since: string;
  /** First 16 hex digits of the SHA-256 of `shadowJson(record)`. */
  readonly version: string;
}

/** The persisted (and synchronized) JSON of a shadow: `{candidate, sample_rate, since}`. */
export function shadowJson(r: Pick<ShadowRecord, 'candidate' | 'sampleRate' | 'since'>): string {
  return JSON.stringify({ candidate: r.candidate, sample_rate: r.sampleRate, since: r.since });
}

/** Builds the record (the candidate is deep-frozen; no check beyond the shape: the service validates). */
export function shadowRecord(tenant: string, name: string, candidate: Record<string, unknown>, sampleRate: number, since: string): ShadowRecord {
  const frozen = deepFreeze(candidate) as Record<string, unknown>;
  const version = createHash('sha256')
    .update(shadowJson({ candidate: frozen, sampleRate, since }))
    .digest('hex')
    .slice(0, 16);
  return Object.freeze({ tenant, name, candidate: frozen, sampleRate, since, version });
}

/**
 * Reads the persisted / synchronized JSON value of a shadow; throws an Error saying what is wrong
 * with its shape (the candidate itself is checked by the service when it compiles it).
 */
export function parseShadowValue(value: unknown): { candidate: Record<string, unknown>; sampleRate: number; since: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('a shadow must be a JSON object');
  const v = value as Record<string, unknown>;
  const { candidate, sample_rate, since } = v;
  if (typeof candidate !== 'object' || candidate === null || Array.isArray(candidate)) throw new Error('shadow.candidate must be a ruleset document');
  if (!isSampleRate(sample_rate)) throw new Error('shadow.sample_rate must be a number above 0 and at most 100');
  if (typeof since !== 'string' || Number.isNaN(Date.parse(since))) throw new Error('shadow.since must be an ISO 8601 time');
  return { candidate: candidate as Record<string, unknown>, sampleRate: sample_rate, since };
}

/** True for a valid sample rate: a percent above 0 and at most 100. */
export function isSampleRate(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 100;
}

function deepFreeze(v: unknown): unknown {
  if (typeof v === 'object' && v !== null) {
    for (const x of Array.isArray(v) ? v : Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
