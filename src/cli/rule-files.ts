/**
 * Rule files named on the `svc` command line: files as given, directories walked (sorted, so
 * runs are repeatable) for `.json`, `.yaml`, `.yml` and `.svc` files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../signing/cli-support.js';
import { decodeRuleFile, ruleFileFormat, RuleFileError } from '../signing/rule-file.js';
import { DATA_DIR } from '../store/data-files.js';
import { SHADOWS_DIR } from '../store/shadow-store.js';

/** A decoded rule file. */
export interface RuleFile {
  readonly path: string;
  readonly doc: Record<string, unknown>;
}

/**
 * Every rule file under `paths` (a file, or a directory walked recursively, but for the `data/`
 * and `shadows/` directories of a rules dir), sorted by path.
 */
export function findRuleFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      const p = join(dir, entry.name);
      // `data/` holds datasets and `shadows/` shadow runs in a rules dir: not rule files.
      if (entry.isDirectory()) {
        if (entry.name !== DATA_DIR && entry.name !== SHADOWS_DIR) walk(p);
      } else if (entry.isFile() && ruleFileFormat(p) !== undefined) out.push(p);
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new CliError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) walk(p);
    else out.push(p);
  }
  return out;
}

/** Reads and decodes one rule file; a bad file is a CliError naming it (exit 1). */
export function readRuleFile(path: string): RuleFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new CliError(`${path}: cannot read: ${(err as Error).message}`, 1);
  }
  try {
    return { path, doc: decodeRuleFile(path, bytes) };
  } catch (err) {
    if (err instanceof RuleFileError) throw new CliError(err.message, 1);
    throw err;
  }
}

/** `JSON` or `@file` (the file's text) parsed as JSON; `what` names the option in errors. */
export function jsonArgument(text: string, what: string): unknown {
  let source = text;
  if (text.startsWith('@')) {
    try {
      source = readFileSync(text.slice(1), 'utf8');
    } catch (err) {
      throw new CliError(`${what} ${text}: cannot read the file: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (err) {
    throw new CliError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}
