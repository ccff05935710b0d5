/**
 * Test fixtures for the store tests: small ruleset documents, records with an opaque `compiled`
 * placeholder (the store never looks inside it), and temp directories.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import YAML from 'yaml';
import type { RulesetDoc } from '../../src/ruleset/model.js';
import { DEFAULT_TENANT, type PrepareFile, type RuleRecord } from '../../src/store/types.js';

/** A minimal valid ruleset document named `name`; `code` makes contents distinguishable. */
export function makeDoc(name: string, options: { version?: string; code?: string } = {}): RulesetDoc {
  return {
    config: { name, ...(options.version !== undefined ? { version: options.version } : {}), entry_step: 'end' },
    steps: { end: { type: 'terminal', result: { code: options.code ?? 'OK' } } },
  };
}

/** A record for `doc`; `compiled` is an opaque placeholder. */
export function makeRecord(doc: RulesetDoc, tenant: string = DEFAULT_TENANT): RuleRecord {
  const compiled = { placeholder: doc.config.name } as unknown as RuleRecord['compiled'];
  return { tenant, name: doc.config.name, version: doc.config.version ?? '1.0.0', doc, compiled };
}

/** Shorthand: record of `makeDoc(name, options)` in `tenant`. */
export function rec(name: string, options: { version?: string; code?: string; tenant?: string } = {}): RuleRecord {
  return makeRecord(makeDoc(name, options), options.tenant);
}

/** Creates a fresh temp dir; `cleanup` removes it. */
export async function makeTempDir(prefix = 'svc-store-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A `PrepareFile` for load tests: JSON via JSON.parse, YAML via the `yaml` package; `.svc`
 * throws (the real decoder lives elsewhere). Builds the record from the decoded document.
 */
export const testPrepare: PrepareFile = ({ tenant, path, bytes }) => {
  const text = bytes.toString('utf8');
  let doc: RulesetDoc;
  if (path.endsWith('.json')) doc = JSON.parse(text) as RulesetDoc;
  else if (path.endsWith('.yaml') || path.endsWith('.yml')) doc = YAML.parse(text) as RulesetDoc;
  else throw new Error('unsupported in this test');
  return makeRecord(doc, tenant);
};

/** Every file under `dir` (recursively) as sorted relative paths with `/` separators. */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) =>
      relative(dir, join(e.parentPath ?? e.path, e.name))
        .split(sep)
        .join('/'),
    )
    .sort();
}
