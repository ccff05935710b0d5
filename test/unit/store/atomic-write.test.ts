import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { atomicWrite, isTempFileName, tempPathFor } from '../../../src/store/atomic-write.js';
import { makeTempDir } from '../../contract/store-fixtures.js';

describe('atomicWrite', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  it('creates and replaces a file, leaving no temp file', async () => {
    const target = join(dir, 'a.json');
    await atomicWrite(target, 'one');
    await atomicWrite(target, Buffer.from('two'));
    assert.equal(await readFile(target, 'utf8'), 'two');
    assert.deepEqual(await readdir(dir), ['a.json']);
  });

  it('on failure leaves the target untouched and removes the temp file', async () => {
    const target = join(dir, 'a.json');
    await mkdir(target);
    await writeFile(join(target, 'inside'), 'old');
    await assert.rejects(atomicWrite(target, 'new'));
    assert.equal(await readFile(join(target, 'inside'), 'utf8'), 'old');
    assert.deepEqual(await readdir(dir), ['a.json']);
  });

  it('rejects when the directory does not exist', async () => {
    await assert.rejects(atomicWrite(join(dir, 'missing', 'a.json'), 'x'), { code: 'ENOENT' });
  });

  it('temp names start with a dot, end with .tmp and live next to the target', () => {
    const tmp = tempPathFor(join(dir, 'a.json'));
    assert.ok(tmp.startsWith(join(dir, '.a.json.')));
    assert.ok(isTempFileName(tmp.slice(dir.length + 1)));
    assert.notEqual(tempPathFor(join(dir, 'a.json')), tmp);
    assert.equal(isTempFileName('a.json'), false);
  });
});
