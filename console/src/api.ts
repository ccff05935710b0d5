/**
 * A small fetch wrapper over svc's public HTTP API. The API key the user typed lives in this
 * tab's sessionStorage only (`Authorization: Bearer`), and the tenant picked in `X-Tenant-ID`.
 */

const KEY = 'svc.console.key';
const TENANT = 'svc.console.tenant';

/** An answer that was not 2xx: the catalog body's `code`, its message and the whole body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The key typed in this tab, or null. */
export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Keeps `key` for this tab (null forgets it). */
export function setApiKey(key: string | null): void {
  if (key === null || key === '') sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, key);
}

/** The tenant picked in this tab ('' for none). */
export function tenant(): string {
  return sessionStorage.getItem(TENANT) ?? '';
}

/** Picks the tenant of the following calls ('' for none). */
export function setTenant(id: string): void {
  if (id === '') sessionStorage.removeItem(TENANT);
  else sessionStorage.setItem(TENANT, id);
}

/** Listeners told when a call is refused for want of a key (401). */
const unauthorized = new Set<() => void>();

/** Calls `fn` on each 401 answer; returns the function that stops it. */
export function onUnauthorized(fn: () => void): () => void {
  unauthorized.add(fn);
  return () => unauthorized.delete(fn);
}

/** Calls `method path` with a JSON body; resolves to the parsed answer (null for 204). */
export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const key = apiKey();
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  const t = tenant();
  if (t !== '') headers['x-tenant-id'] = t;
  const res = await fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (res.status === 204) return null as T;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = { error: text };
  }
  if (!res.ok) {
    const b = (parsed ?? {}) as Record<string, unknown>;
    if (res.status === 401) unauthorized.forEach((fn) => fn());
    throw new ApiError(
      res.status,
      String(b['code'] ?? res.status),
      String(b['error'] ?? res.statusText) + (b['message'] ? `: ${String(b['message'])}` : ''),
      b,
    );
  }
  return parsed as T;
}

/** `encodeURIComponent` of a ruleset name for a path. */
export const enc = encodeURIComponent;

/** The text of anything a call threw. */
export function errorText(e: unknown): string {
  return e instanceof ApiError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}
