/** FileStore: what lands on disk for puts and deletes, history, versions and rollback. */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FileStore } from '../../../src/store/file-store.js';
import { listTree, makeRecord, makeTempDir, rec, testPrepare } from '../../contract/store-fixtures.js';

const T0 = 1_700_000_000; // unix seconds

describe('FileStore persistence', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let clock: number;
  const open = (maxVersions = 10) => new FileStore({ rulesDir: dir, maxVersions, now: () => clock * 1000 });

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    clock = T0;
  });
  afterEach(() => cleanup());

  it('writes current files and history exactly as the layout says', async () => {
    const store = open();
    await store.put(rec('a', { version: '1' }), { origin: 'api' });
    await store.put(rec('r', { tenant: 'acme' }), { origin: 'api' });
    assert.deepEqual(await listTree(dir), ['a.json', 'tenants/acme/r.json']);
    clock = T0 + 5;
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    await store.put(rec('r', { tenant: 'acme', version: '9' }), { origin: 'api' });
    assert.deepEqual(await listTree(dir), [`.versions/a/v1_${T0 + 5}.json`, 'a.json', `tenants/acme/.versions/r/v1_${T0 + 5}.json`, 'tenants/acme/r.json']);
    const current = JSON.parse(await readFile(join(dir, 'a.json'), 'utf8'));
    assert.deepEqual(current, rec('a', { version: '2' }).doc);
    const saved = JSON.parse(await readFile(join(dir, '.versions', 'a', `v1_${T0 + 5}.json`), 'utf8'));
    assert.deepEqual(saved, rec('a', { version: '1' }).doc, 'history holds the replaced document');
    assert.match(await readFile(join(dir, 'a.json'), 'utf8'), /^\{\n {2}"config"/, 'pretty JSON');
  });

  it('numbers history 1, 2, 3... and prunes the oldest beyond maxVersions', async () => {
    const store = open(3);
    for (let i = 0; i <= 5; i++) {
      clock = T0 + i;
      await store.put(rec('a', { version: `${i}` }), { origin: 'api' });
    }
    // Six puts → five replaced versions (seq 1..5, versions "0".."4"); only the newest three stay.
    assert.deepEqual(await listTree(join(dir, '.versions')), [`a/v3_${T0 + 3}.json`, `a/v4_${T0 + 4}.json`, `a/v5_${T0 + 5}.json`]);
    assert.deepEqual(await store.versions('default', 'a'), [
      { seq: 5, version: '4', timestamp: '2023-11-14T22:13:25Z' },
      { seq: 4, version: '3', timestamp: '2023-11-14T22:13:24Z' },
      { seq: 3, version: '2', timestamp: '2023-11-14T22:13:23Z' },
    ]);
    assert.equal(await store.readVersion('default', 'a', 2), undefined, 'pruned');
    assert.equal((await store.readVersion('default', 'a', 4))?.config.version, '3');
  });

  it('an extra history entry left by a crash before pruning is neither listed nor readable; the next write prunes it', async () => {
    const store = open(2);
    for (let i = 0; i <= 2; i++) {
      clock = T0 + i;
      await store.put(rec('a', { version: `${i}` }), { origin: 'api' });
    }
    // Crash after saving the replaced version, before pruning: three entries for maxVersions 2.
    const hdir = join(dir, '.versions', 'a');
    await writeFile(join(hdir, `v3_${T0 + 3}.json`), JSON.stringify(rec('a', { version: '2' }).doc));
    assert.equal((await listTree(hdir)).length, 3);
    assert.deepEqual(
      (await store.versions('default', 'a')).map((v) => v.seq),
      [3, 2],
    );
    assert.equal(await store.readVersion('default', 'a', 1), undefined, 'beyond maxVersions');
    assert.equal((await store.readVersion('default', 'a', 2))?.config.version, '1');
    clock = T0 + 4;
    await store.put(rec('a', { version: '3' }), { origin: 'api' });
    assert.deepEqual(await listTree(hdir), [`v3_${T0 + 3}.json`, `v4_${T0 + 4}.json`]);
  });

  it('uses the default version label "1.0.0" for documents without one', async () => {
    const store = open();
    await store.put(rec('a'), { origin: 'api' });
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    assert.deepEqual(
      (await store.versions('default', 'a')).map((v) => v.version),
      ['1.0.0'],
    );
  });

  it('maxVersions 0 keeps no history', async () => {
    const store = open(0);
    await store.put(rec('a', { version: '1' }), { origin: 'api' });
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    assert.deepEqual(await listTree(dir), ['a.json']);
    assert.deepEqual(await store.versions('default', 'a'), []);
  });

  it('rollback = readVersion + put restores the content and keeps the replaced one in history', async () => {
    const store = open();
    const v1 = rec('a', { version: '1', code: 'ONE' });
    const v2 = rec('a', { version: '2', code: 'TWO' });
    await store.put(v1, { origin: 'api' });
    clock = T0 + 1;
    await store.put(v2, { origin: 'api' });
    const doc = await store.readVersion('default', 'a', 1);
    assert.ok(doc);
    clock = T0 + 2;
    const outcome = await store.put(makeRecord(doc), { origin: 'api' });
    assert.equal(outcome.previous, v2);
    assert.deepEqual(store.get('default', 'a')?.doc, v1.doc);
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'a.json'), 'utf8')), v1.doc);
    const versions = await store.versions('default', 'a');
    assert.deepEqual(
      versions.map((v) => [v.seq, v.version]),
      [
        [2, '2'],
        [1, '1'],
      ],
      'one more entry; v2 kept',
    );
    assert.deepEqual(await store.readVersion('default', 'a', 2), v2.doc);
  });

  it('persist:false changes memory only', async () => {
    const store = open();
    await store.put(rec('a', { version: '1' }), { origin: 'api' });
    await store.put(rec('a', { version: '2' }), { origin: 'watch', persist: false });
    assert.equal(store.get('default', 'a')?.version, '2');
    assert.deepEqual(await listTree(dir), ['a.json'], 'no history, file untouched');
    assert.equal(JSON.parse(await readFile(join(dir, 'a.json'), 'utf8')).config.version, '1');
    await store.delete('default', 'a', { origin: 'watch', persist: false });
    assert.deepEqual(await listTree(dir), ['a.json']);
  });

  it('delete removes the current file, every other format of it, and its history', async () => {
    const store = open();
    await store.put(rec('a', { version: '1' }), { origin: 'api' });
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    await store.put(rec('b'), { origin: 'api' });
    await writeFile(join(dir, 'a.yaml'), 'shadowed: true\n');
    await store.delete('default', 'a', { origin: 'api' });
    assert.deepEqual(await listTree(dir), ['b.json']);
    assert.deepEqual(await store.versions('default', 'a'), []);
    await store.put(rec('a', { version: '3' }), { origin: 'api' });
    await store.put(rec('a', { version: '4' }), { origin: 'api' });
    assert.deepEqual(
      (await store.versions('default', 'a')).map((v) => v.seq),
      [1],
      'a recreated ruleset starts at seq 1',
    );
  });

  it('a put over a rule loaded from YAML writes JSON and removes the YAML file', async () => {
    await writeFile(
      join(dir, 'a.yaml'),
      'config:\n  name: a\n  version: "1"\n  entry_step: end\nsteps:\n  end:\n    type: terminal\n    result: { code: Y }\n',
    );
    const store = open();
    assert.equal((await store.load(testPrepare)).loaded, 1);
    await store.put(rec('a', { version: '2' }), { origin: 'api' });
    assert.deepEqual(await listTree(dir), [`.versions/a/v1_${T0}.json`, 'a.json']);
    assert.equal((await store.readVersion('default', 'a', 1))?.config.version, '1', 'the YAML content went to history as JSON');
    const again = open();
    assert.deepEqual(await again.load(testPrepare), { loaded: 1, skipped: [] });
    assert.equal(again.get('default', 'a')?.version, '2');
  });

  it('refuses the ruleset name "tenants" in the default tenant (tenants.json is the registry)', async () => {
    const store = open();
    await writeFile(join(dir, 'tenants.json'), '{"tenants":[]}');
    await assert.rejects(store.put(rec('tenants'), { origin: 'api' }), /reserved/);
    assert.equal(await readFile(join(dir, 'tenants.json'), 'utf8'), '{"tenants":[]}');
    await store.put(rec('tenants', { tenant: 'acme' }), { origin: 'api' });
    assert.deepEqual(await listTree(dir), ['tenants.json', 'tenants/acme/tenants.json']);
  });

  it('creates a missing rules dir (mkdir -p)', async () => {
    const nested = join(dir, 'x', 'y');
    const store = new FileStore({ rulesDir: nested });
    await store.put(rec('a'), { origin: 'api' });
    assert.deepEqual(await listTree(dir), ['x/y/a.json']);
    assert.equal(store.rulesDir, nested);
  });

  it('rejects a bad maxVersions', () => {
    assert.throws(() => new FileStore({ rulesDir: dir, maxVersions: -1 }), /maxVersions/);
    assert.throws(() => new FileStore({ rulesDir: dir, maxVersions: 1.5 }), /maxVersions/);
  });
});
