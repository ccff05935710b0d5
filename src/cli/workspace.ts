/**
 * The rules a rule file is run with by the `svc` command: the other rule files of its directory
 * (the rulesets its call steps name) and the datasets of `<dir>/data/<name>.json` (what `@name`
 * reads), laid out as a server's rules directory holds them (docs/cli.md). So `svc exec`, `test`,
 * `filter` and `diff` on `rules/loan.json` call `rules/risk.json` and read `rules/data/*.json`
 * exactly as `svc-server --rules-dir rules` would.
 *
 * NOTE: a sibling file that cannot be read or is not a valid ruleset is left out here (a call to
 * it then fails as on a server that skipped it); it is reported when it is itself the command's
 * subject.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { JsonValue } from '../expr/ast.js';
import type { DataSnapshot } from '../expr/index.js';
import { compileRuleset, type CompiledRuleset } from '../ruleset/index.js';
import { decodeRuleFile, ruleFileFormat } from '../signing/rule-file.js';
import { dataNameOf, DATA_DIR } from '../store/data-files.js';

/** The rulesets and datasets next to a rule file. */
export interface Workspace {
  readonly dir: string;
  /** Every valid ruleset of the directory by `config.name` (the first file of a name wins, by file name). */
  readonly rulesets: ReadonlyMap<string, { readonly path: string; readonly doc: Record<string, unknown>; readonly compiled: CompiledRuleset }>;
  /** The datasets of `<dir>/data/`. */
  readonly data: DataSnapshot;
}

/** The workspace of the directory holding `file`. */
export function workspaceOf(file: string): Workspace {
  const dir = dirname(resolve(file));
  const rulesets = new Map<string, { path: string; doc: Record<string, unknown>; compiled: CompiledRuleset }>();
  for (const entry of entries(dir)) {
    if (!entry.isFile() || entry.name.startsWith('.') || ruleFileFormat(entry.name) === undefined) continue;
    const path = join(dir, entry.name);
    try {
      const doc = decodeRuleFile(path, readFileSync(path));
      const compiled = compileRuleset(doc);
      if (!rulesets.has(compiled.name)) rulesets.set(compiled.name, { path, doc, compiled });
    } catch {
      // Left out (see the NOTE above).
    }
  }
  const data = new Map<string, JsonValue>();
  for (const entry of entries(join(dir, DATA_DIR))) {
    const name = entry.isFile() && !entry.name.startsWith('.') ? dataNameOf(entry.name) : undefined;
    if (name === undefined) continue;
    try {
      data.set(name, JSON.parse(readFileSync(join(dir, DATA_DIR, entry.name), 'utf8')) as JsonValue);
    } catch {
      // A dataset that cannot be read is absent, as on a server that skipped its file.
    }
  }
  return { dir, rulesets, data };
}

/** The resolver of call steps over `workspace` (`ExecuteOptions.calls`). */
export function callsOf(workspace: Workspace): (name: string) => CompiledRuleset | undefined {
  return (name) => workspace.rulesets.get(name)?.compiled;
}

/** The rulesets that `compiled` calls, directly or through its callees, that `workspace` lacks. */
export function missingCallees(compiled: CompiledRuleset, workspace: Workspace): string[] {
  const missing = new Set<string>();
  const seen = new Set<string>([compiled.name]);
  const walk = (c: CompiledRuleset): void => {
    for (const name of c.calls) {
      if (seen.has(name)) continue;
      seen.add(name);
      const callee = workspace.rulesets.get(name)?.compiled;
      if (callee === undefined) missing.add(name);
      else walk(callee);
    }
  };
  walk(compiled);
  return [...missing].sort();
}

function entries(dir: string): import('node:fs').Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}
