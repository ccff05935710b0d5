/**
 * README.md's documentation table is how a newcomer finds a page: every page of docs/ must be
 * in it, and every link of the table must lead to a page that exists.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

it("README.md's documentation table lists every page of docs/, and only pages that exist", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const listed = new Set([...readme.matchAll(/^\| \[docs\/([^\]]+\.md)\]\(docs\/\1\) \|/gm)].map((m) => m[1] as string));
  const pages = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  for (const page of pages) assert.ok(listed.has(page), `docs/${page} is not in README.md's documentation table`);
  for (const page of listed) assert.ok(existsSync(join(ROOT, 'docs', page)), `README.md lists docs/${page}, which does not exist`);
});
