/**
 * The record of one stored dataset (reference data, EXTENSIONS.md 3; ./data-store.ts): kept
 * apart from the store so the one change stream (./change.ts) can name it without a cycle.
 */
import { createHash } from 'node:crypto';
import type { JsonValue } from '../expr/ast.js';

/** One stored dataset. */
export interface DataRecord {
  readonly tenant: string;
  readonly name: string;
  /** The document (deep-frozen). */
  readonly value: JsonValue;
  /** UTF-8 bytes of its compact JSON (what the file holds). */
  readonly bytes: number;
  /** First 16 hex digits of the SHA-256 of its compact JSON. */
  readonly version: string;
}

/** Builds the record of `value` (compact JSON, size, version); the value is deep-frozen. */
export function dataRecord(tenant: string, name: string, value: JsonValue): DataRecord {
  const text = JSON.stringify(value);
  return Object.freeze({ tenant, name, value: deepFreeze(value), bytes: Buffer.byteLength(text), version: dataVersionOf(text) });
}

/** The version of a dataset whose compact JSON is `text`. */
export function dataVersionOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function deepFreeze(v: JsonValue): JsonValue {
  if (typeof v === 'object' && v !== null) {
    for (const x of Array.isArray(v) ? v : Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
