/** FileStore: disk failures leave disk and memory as they were; readiness probe. */
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FileStore } from '../../../src/store/file-store.js';
import type { StoreEvent } from '../../../src/store/types.js';
import { listTree, makeTempDir, rec } from '../../contract/store-fixtures.js';

describe('FileStore failures', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let store: FileStore;
  let events: StoreEvent[];
  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    store = new FileStore({ rulesDir: dir });
    events = [];
    store.subscribe((e) => events.push(e));
  });
  afterEach(() => cleanup());

  const currentVersion = async (name: string) => JSON.parse(await readFile(join(dir, `${name}.json`), 'utf8')).config.version;

  it('history that cannot be written: rejects, old file and memory intact, no event', async () => {
    const v1 = rec('a', { version: '1' });
    await store.put(v1, { origin: 'api' });
    await mkdir(join(dir, '.versions'), { recursive: true });
    await writeFile(join(dir, '.versions', 'a'), 'a file where the history dir should be');
    events.length = 0;
    await assert.rejects(store.put(rec('a', { version: '2' }), { origin: 'api' }), /cannot save ruleset "a"/);
    assert.equal(store.get('default', 'a'), v1);
    assert.equal(await currentVersion('a'), '1');
    assert.deepEqual(events, []);
    assert.deepEqual(await listTree(dir), ['.versions/a', 'a.json'], 'no temp file left');
  });

  it('current file that cannot be replaced: rejects, memory intact, the new history entry is rolled back', async () => {
    const v1 = rec('a', { version: '1' });
    await store.put(v1, { origin: 'api' });
    await rm(join(dir, 'a.json'));
    await mkdir(join(dir, 'a.json'));
    await writeFile(join(dir, 'a.json', 'keep'), 'x');
    events.length = 0;
    await assert.rejects(store.put(rec('a', { version: '2' }), { origin: 'api' }), /cannot save ruleset "a"/);
    assert.equal(store.get('default', 'a'), v1);
    assert.deepEqual(events, []);
    assert.deepEqual(await listTree(dir), ['a.json/keep'], 'no history entry, no temp file');
    assert.deepEqual(await store.versions('default', 'a'), []);
  });

  it('a new rule whose target is a directory: rejects and stays absent', async () => {
    await mkdir(join(dir, 'b.json'));
    await assert.rejects(store.put(rec('b'), { origin: 'api' }), /cannot save ruleset "b"/);
    assert.equal(store.get('default', 'b'), undefined);
    assert.equal(store.count(), 0);
    assert.deepEqual(events, []);
    assert.deepEqual(await listTree(dir), []);
    await store.put(rec('c'), { origin: 'api' });
    assert.equal(store.count(), 1, 'the store keeps working after a failed write');
  });

  it('delete that cannot remove the file: rejects, record kept, no event', async () => {
    const a = rec('a');
    await store.put(a, { origin: 'api' });
    await rm(join(dir, 'a.json'));
    await mkdir(join(dir, 'a.json'));
    events.length = 0;
    await assert.rejects(store.delete('default', 'a', { origin: 'api' }), /cannot delete ruleset "a"/);
    assert.equal(store.get('default', 'a'), a);
    assert.deepEqual(events, []);
  });
});

describe('FileStore.probe', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  it('writes .health_probe in the rules dir', async () => {
    const store = new FileStore({ rulesDir: dir });
    await store.probe(2000);
    await store.probe(2000);
    assert.deepEqual(await listTree(dir), ['.health_probe']);
  });

  it('rejects, naming the failure, when the probe file cannot be written', async () => {
    const store = new FileStore({ rulesDir: dir });
    // NOTE: tests run as root, for whom chmod does not block writes; a directory in the way does.
    await mkdir(join(dir, '.health_probe'));
    await writeFile(join(dir, '.health_probe', 'x'), 'x');
    await assert.rejects(store.probe(2000), (err: Error) => {
      assert.match(err.message, /^rules dir not writable: cannot write .*\.health_probe: /);
      return true;
    });
    assert.deepEqual(await listTree(dir), ['.health_probe/x'], 'no temp file left');
  });

  it('rejects when the rules dir has disappeared', async () => {
    const store = new FileStore({ rulesDir: join(dir, 'rules') });
    await rm(join(dir, 'rules'), { recursive: true });
    await assert.rejects(store.probe(2000), /rules dir not writable/);
  });
});
