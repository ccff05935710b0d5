/**
 * Version history of one ruleset on disk: `<history-dir>/v<seq>_<unix-seconds>.json`
 * (SPEC.md "Versioning" 4-6). The directory itself is the source of truth: the next seq is the
 * highest seq present + 1, so numbering survives restarts without any index file. Pruning removes
 * the lowest seqs first and always keeps the highest, so the numbering never goes backwards.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_VERSION, type RulesetDoc } from '../ruleset/model.js';
import { atomicWrite } from './atomic-write.js';
import { historyFileName, parseHistoryFileName } from './layout.js';

/** One history file. */
export interface HistoryFile {
  readonly seq: number;
  readonly unixSeconds: number;
  readonly path: string;
}

/** History files of a directory sorted by seq ascending; empty when the directory is missing. */
export async function listHistory(dir: string): Promise<HistoryFile[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: HistoryFile[] = [];
  for (const fileName of names) {
    const parsed = parseHistoryFileName(fileName);
    if (parsed) files.push({ ...parsed, path: join(dir, fileName) });
  }
  return files.sort((a, b) => a.seq - b.seq);
}

/** Serialized form of a stored document: pretty JSON, 2-space indent, trailing newline. */
export function serializeDoc(doc: RulesetDoc): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * Saves `doc` as the next history entry (creating the directory when needed) and returns it.
 * The caller holds the store's write lock, so two appends never race for one seq.
 */
export async function appendHistory(dir: string, doc: RulesetDoc, unixSeconds: number): Promise<HistoryFile> {
  await mkdir(dir, { recursive: true });
  const existing = await listHistory(dir);
  const seq = (existing.at(-1)?.seq ?? 0) + 1;
  const path = join(dir, historyFileName(seq, unixSeconds));
  await atomicWrite(path, serializeDoc(doc));
  return { seq, unixSeconds, path };
}

/** Deletes the oldest entries (lowest seq first) until at most `keep` remain. */
export async function pruneHistory(dir: string, keep: number): Promise<void> {
  const files = await listHistory(dir);
  const excess = files.length - keep;
  for (const file of files.slice(0, Math.max(0, excess))) {
    await rm(file.path, { force: true });
  }
}

/** Reads and parses one history file. Rejects when it is unreadable or not a JSON object. */
export async function readHistoryDoc(file: HistoryFile): Promise<RulesetDoc> {
  const value: unknown = JSON.parse(await readFile(file.path, 'utf8'));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('not a JSON object');
  }
  return value as RulesetDoc;
}

/** `config.version` of a stored document, default "1.0.0" (DECISIONS.md 1). */
export function versionLabel(doc: RulesetDoc): string {
  const version: unknown = doc.config?.version;
  return typeof version === 'string' ? version : DEFAULT_VERSION;
}
