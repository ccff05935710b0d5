/** The façade's helpers for JSON object arguments (bodies, inputs, contexts) and the text of their values in messages. */

/** True for a JSON object (not an array, not null). Parsed JSON has no other objects. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The document without its `_signature` block (what is compiled and hashed). */
export function stripSignature(body: unknown): unknown {
  if (!isPlainObject(body) || !Object.hasOwn(body, '_signature')) return body;
  const { _signature: _, ...rest } = body as Record<string, unknown>;
  return rest;
}

/** A value for a message: control characters replaced, at most 64 characters. */
export function truncate(s: string): string {
  const clean = String(s).replace(/[\u0000-\u001f]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
