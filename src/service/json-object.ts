/** The façade's test for a JSON object argument (bodies, inputs, contexts). */

/** True for a JSON object (not an array, not null). Parsed JSON has no other objects. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
