/**
 * Paths of the rules directory (SPEC.md "Versioning" 5, DECISIONS.md 4 and 8):
 *
 * ```
 * <dir>/<name>.json                          current ruleset of the default tenant
 * <dir>/<name>.yaml|.yml|.svc                 other formats, loaded at start
 * <dir>/.versions/<name>/v<seq>_<secs>.json   history of the default tenant
 * <dir>/tenants.json                          tenant registry (not a ruleset)
 * <dir>/tenants/<id>/...                      any other tenant, same layout inside
 * <dir>/.health_probe                         readiness probe file
 * ```
 *
 * Every function validates the names it joins: a name or tenant id that fails the ruleset name
 * rule (DECISIONS.md 1) throws before any path is built, so no path ever leaves the rules dir.
 */
import { join } from 'node:path';
import { isValidRulesetName } from '../ruleset/model.js';
import { reservedNameReason } from '../ruleset/reserved-names.js';
import { DEFAULT_TENANT } from './types.js';

/** Directory of every tenant except the default one. */
export const TENANTS_DIR = 'tenants';
/** Tenant registry file at the rules dir root (DECISIONS.md 8). */
export const TENANTS_FILE = 'tenants.json';
/** History directory name inside a tenant directory. */
export const VERSIONS_DIR = '.versions';
/** Readiness probe file at the rules dir root (SPEC.md "GET /health"). */
export const HEALTH_PROBE_FILE = '.health_probe';

/** Rule file extensions in load precedence order: the first one present wins. */
export const RULE_FILE_EXTENSIONS = ['.json', '.yaml', '.yml', '.svc'] as const;
/** A rule file extension. */
export type RuleFileExtension = (typeof RULE_FILE_EXTENSIONS)[number];

/** Throws unless `name` is a valid ruleset name. */
export function assertValidName(name: unknown): asserts name is string {
  if (!isValidRulesetName(name)) throw new Error(`invalid ruleset name: ${JSON.stringify(String(name))}`);
}

/** Throws unless `tenant` is a valid tenant id (same rule as ruleset names). */
export function assertValidTenant(tenant: unknown): asserts tenant is string {
  if (!isValidRulesetName(tenant)) throw new Error(`invalid tenant id: ${JSON.stringify(String(tenant))}`);
}

/**
 * True when `(tenant, name)` is a reserved name (src/ruleset/reserved-names.ts, the one list
 * validation refuses too).
 * NOTE: the default tenant lives at the root, so its ruleset `tenants` would be `<dir>/tenants.json`,
 * which is the tenant registry (DECISIONS.md 8). Validation refuses the names in every tenant; the
 * file store only needs to skip them at the root (another tenant's `tenants.json` collides with nothing).
 */
export function isReservedName(tenant: string, name: string): boolean {
  return tenant === DEFAULT_TENANT && reservedNameReason(name) !== undefined;
}

/** Directory holding a tenant's rule files. */
export function tenantDir(rulesDir: string, tenant: string): string {
  assertValidTenant(tenant);
  return tenant === DEFAULT_TENANT ? rulesDir : join(rulesDir, TENANTS_DIR, tenant);
}

/** Path of a rule file of `name` with extension `ext` (default `.json`, the format the store writes). */
export function rulePath(rulesDir: string, tenant: string, name: string, ext: RuleFileExtension = '.json'): string {
  assertValidName(name);
  return join(tenantDir(rulesDir, tenant), `${name}${ext}`);
}

/** History directory of a ruleset. */
export function historyDir(rulesDir: string, tenant: string, name: string): string {
  assertValidName(name);
  return join(tenantDir(rulesDir, tenant), VERSIONS_DIR, name);
}

/** File name of a history entry: `v<seq>_<unix-seconds>.json`. */
export function historyFileName(seq: number, unixSeconds: number): string {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`invalid history seq: ${seq}`);
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) throw new Error(`invalid history time: ${unixSeconds}`);
  return `v${seq}_${unixSeconds}.json`;
}

const HISTORY_FILE_RE = /^v([1-9][0-9]{0,15})_([0-9]{1,16})\.json$/;

/** Parses a history file name; undefined for anything else (temp files, strays). */
export function parseHistoryFileName(fileName: string): { seq: number; unixSeconds: number } | undefined {
  const m = HISTORY_FILE_RE.exec(fileName);
  if (!m) return undefined;
  const seq = Number(m[1]);
  const unixSeconds = Number(m[2]);
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(unixSeconds)) return undefined;
  return { seq, unixSeconds };
}

/** ISO 8601 UTC time of a unix-seconds value, without fractional seconds (e.g. `2024-05-01T12:00:00Z`). */
export function isoFromUnixSeconds(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Splits a directory entry name into ruleset name and rule extension.
 * Undefined when the extension is not a rule format. The name is NOT validated here.
 */
export function parseRuleFileName(fileName: string): { name: string; ext: RuleFileExtension } | undefined {
  for (const ext of RULE_FILE_EXTENSIONS) {
    if (fileName.length > ext.length && fileName.endsWith(ext)) {
      return { name: fileName.slice(0, -ext.length), ext };
    }
  }
  return undefined;
}
