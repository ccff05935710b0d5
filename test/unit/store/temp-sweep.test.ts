/**
 * EXTENSIONS.md 6 "Files": temp files left by an interrupted atomic write are removed at the
 * next start (the first FileStore load), at the root, in tenant directories and in history
 * directories, with one log line counting them. Real files in a temp dir.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempPathFor } from '../../../src/store/atomic-write.js';
import { FileStore } from '../../../src/store/file-store.js';
import { isAtomicTempName, removeStaleTempFiles } from '../../../src/store/temp-sweep.js';
import { makeTempDir, rec, testPrepare } from '../../contract/store-fixtures.js';

describe('stale temp files of atomic writes', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  /** Leaves what a write killed before its rename leaves: a temp file beside `target`. */
  async function interrupted(target: string): Promise<string> {
    const tmp = tempPathFor(target);
    await writeFile(tmp, '{"config":');
    return tmp;
  }

  it('recognizes only the names atomicWrite gives', () => {
    assert.equal(isAtomicTempName('.loan.json.4242.0123456789ab.tmp'), true);
    assert.equal(isAtomicTempName('.tenants.json.1.abcdefabcdef.tmp'), true);
    assert.equal(isAtomicTempName('.notes.tmp'), false);
    assert.equal(isAtomicTempName('loan.json.1.abcdefabcdef.tmp'), false);
    assert.equal(isAtomicTempName('.loan.json.1.ABCDEFABCDEF.tmp'), false);
  });

  it('the first load removes them everywhere, logs the count, and keeps everything else', async () => {
    const store0 = new FileStore({ rulesDir: dir });
    await store0.load(testPrepare);
    await store0.put(rec('loan'), { origin: 'api' });
    await store0.put(rec('loan', { version: '2' }), { origin: 'api' });
    await mkdir(join(dir, 'tenants', 'acme', '.versions', 'r'), { recursive: true });
    const temps = [
      await interrupted(join(dir, 'loan.json')),
      await interrupted(join(dir, 'loan.json')),
      await interrupted(join(dir, 'tenants.json')),
      await interrupted(join(dir, '.versions', 'loan', 'v3_1700000000.json')),
      await interrupted(join(dir, 'tenants', 'acme', 'r.json')),
      await interrupted(join(dir, 'tenants', 'acme', '.versions', 'r', 'v1_1700000000.json')),
    ];
    await writeFile(join(dir, '.notes.tmp'), 'mine');
    for (const t of temps) assert.ok(existsSync(t));

    const lines: Array<[object, string]> = [];
    const store = new FileStore({ rulesDir: dir, logger: { warn: (o: object, m: string) => lines.push([o, m]) } as never });
    const report = await store.load(testPrepare);
    assert.equal(report.loaded, 1);
    for (const t of temps) assert.equal(existsSync(t), false, t);
    assert.ok(existsSync(join(dir, '.notes.tmp')));
    assert.deepEqual(lines, [[{ removed: 6, rules_dir: dir }, 'removed temp files left by interrupted writes']]);
    assert.equal((await readdir(join(dir, '.versions', 'loan'))).length, 1);
  });

  it('a store that does not own the dir (a reader) leaves them', async () => {
    const tmp = await interrupted(join(dir, 'loan.json'));
    const store = new FileStore({ rulesDir: dir, sweepTempFiles: false });
    await store.load(testPrepare);
    assert.ok(existsSync(tmp));
  });

  it('a dir without temp files: nothing removed, no log line', async () => {
    assert.deepEqual(await removeStaleTempFiles(join(dir, 'missing')), []);
    const lines: unknown[] = [];
    const store = new FileStore({ rulesDir: dir, logger: { warn: (o: object) => lines.push(o) } as never });
    await store.load(testPrepare);
    assert.deepEqual(lines, []);
  });
});
