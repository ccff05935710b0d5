/**
 * Maps a path the watcher reports to what it means for the rules dir layout (DECISIONS.md 4
 * and 8, `layout.ts`; kept with the store so the layout is known in one place): a rule file of a tenant, the tenant registry `tenants.json`, the
 * `tenants/` directory, a tenant directory, a data file of a tenant (`data/<name>.json`, `tenants/<id>/data/<name>.json`,
 * ./data-files.ts) or its data directory, a shadow file (`shadows/<name>.json`, `tenants/<id>/shadows/<name>.json`,
 * ./shadow-store.ts) or its shadows directory, or nothing of ours (dotfiles, `.versions/`, temp files of atomic writes,
 * `.health_probe`, other extensions).
 */
import { relative, sep } from 'node:path';
import { isValidRulesetName } from '../ruleset/model.js';
import { DATA_DIR, dataNameOf } from './data-files.js';
import { SHADOWS_DIR, shadowNameOf } from './shadow-store.js';
import { TENANTS_DIR, TENANTS_FILE, isReservedName, parseRuleFileName } from './layout.js';
import { DEFAULT_TENANT } from './record.js';

/** What a path is. */
export type RulePathKind =
  | { readonly kind: 'rule'; readonly tenant: string; readonly name: string }
  | { readonly kind: 'tenants-file' }
  | { readonly kind: 'tenants-root' }
  | { readonly kind: 'tenant-dir'; readonly tenant: string }
  | { readonly kind: 'data'; readonly tenant: string; readonly name: string }
  | { readonly kind: 'data-dir'; readonly tenant: string }
  | { readonly kind: 'shadow'; readonly tenant: string; readonly name: string }
  | { readonly kind: 'shadow-dir'; readonly tenant: string }
  | { readonly kind: 'other' };

const OTHER: RulePathKind = Object.freeze({ kind: 'other' });

/** Classifies `path` (absolute, or relative to the process) against `rulesDir`. */
export function classifyRulePath(rulesDir: string, path: string): RulePathKind {
  const rel = relative(rulesDir, path);
  if (rel === '' || rel.startsWith('..')) return OTHER;
  const parts = rel.split(sep);
  if (parts.some((p) => p.startsWith('.'))) return OTHER;
  if (parts.length === 1) {
    if (parts[0] === TENANTS_FILE) return { kind: 'tenants-file' };
    if (parts[0] === TENANTS_DIR) return { kind: 'tenants-root' };
    if (parts[0] === DATA_DIR) return { kind: 'data-dir', tenant: DEFAULT_TENANT };
    if (parts[0] === SHADOWS_DIR) return { kind: 'shadow-dir', tenant: DEFAULT_TENANT };
    return ruleFile(DEFAULT_TENANT, parts[0]!);
  }
  if (parts[0] === DATA_DIR) return parts.length === 2 ? dataFile(DEFAULT_TENANT, parts[1]!) : OTHER;
  if (parts[0] === SHADOWS_DIR) return parts.length === 2 ? shadowFile(DEFAULT_TENANT, parts[1]!) : OTHER;
  if (parts[0] !== TENANTS_DIR) return OTHER;
  const tenant = parts[1]!;
  if (!isValidRulesetName(tenant) || tenant === DEFAULT_TENANT) return OTHER;
  if (parts.length === 2) return { kind: 'tenant-dir', tenant };
  if (parts.length === 3) {
    if (parts[2] === DATA_DIR) return { kind: 'data-dir', tenant };
    if (parts[2] === SHADOWS_DIR) return { kind: 'shadow-dir', tenant };
    return ruleFile(tenant, parts[2]!);
  }
  if (parts.length === 4 && parts[2] === DATA_DIR) return dataFile(tenant, parts[3]!);
  if (parts.length === 4 && parts[2] === SHADOWS_DIR) return shadowFile(tenant, parts[3]!);
  return OTHER;
}

/**
 * True for paths the watcher should not even look at: anything under a dot-segment (history,
 * temp files, the readiness probe). Directories on the way to rule files stay watched.
 */
export function isIgnoredPath(rulesDir: string, path: string): boolean {
  const rel = relative(rulesDir, path);
  if (rel === '') return false;
  if (rel.startsWith('..')) return true;
  const parts = rel.split(sep);
  if (parts.some((p) => p.startsWith('.'))) return true;
  // `tenants/<id>/data/<name>.json` and `tenants/<id>/shadows/<name>.json` are the paths four deep that the watcher reads.
  return parts.length > 4 || (parts.length === 4 && (parts[0] !== TENANTS_DIR || (parts[2] !== DATA_DIR && parts[2] !== SHADOWS_DIR)));
}

function dataFile(tenant: string, fileName: string): RulePathKind {
  const name = dataNameOf(fileName);
  return name === undefined ? OTHER : { kind: 'data', tenant, name };
}

function shadowFile(tenant: string, fileName: string): RulePathKind {
  const name = shadowNameOf(fileName);
  return name === undefined ? OTHER : { kind: 'shadow', tenant, name };
}

function ruleFile(tenant: string, fileName: string): RulePathKind {
  const parsed = parseRuleFileName(fileName);
  if (!parsed || !isValidRulesetName(parsed.name) || isReservedName(tenant, parsed.name)) return OTHER;
  return { kind: 'rule', tenant, name: parsed.name };
}
