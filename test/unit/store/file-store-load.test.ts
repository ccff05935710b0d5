/** FileStore.load: restart, broken files, precedence, what is ignored. */
import assert from 'node:assert/strict';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FileStore } from '../../../src/store/file-store.js';
import type { StoreEvent } from '../../../src/store/types.js';
import { makeDoc, makeTempDir, rec, testPrepare } from '../../contract/store-fixtures.js';

const json = (name: string, code = 'OK') => JSON.stringify(makeDoc(name, { code }));
const yaml = (name: string, code = 'Y') =>
  `config:\n  name: ${name}\n  entry_step: end\nsteps:\n  end:\n    type: terminal\n    result:\n      code: ${code}\n`;

describe('FileStore.load', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  it('after a restart finds rules of every tenant, their versions, and continues the seq', async () => {
    const first = new FileStore({ rulesDir: dir });
    await first.put(rec('a', { version: '1' }), { origin: 'api' });
    await first.put(rec('a', { version: '2' }), { origin: 'api' });
    await first.put(rec('b'), { origin: 'api' });
    await first.put(rec('a', { tenant: 'acme', code: 'ACME' }), { origin: 'api' });

    const second = new FileStore({ rulesDir: dir });
    const events: StoreEvent[] = [];
    second.subscribe((e) => events.push(e));
    assert.deepEqual(await second.load(testPrepare), { loaded: 3, skipped: [] });
    assert.deepEqual(events, [], 'load emits no events');
    assert.deepEqual(second.tenants(), ['acme', 'default']);
    assert.deepEqual(
      second.list('default').map((r) => [r.name, r.version]),
      [
        ['a', '2'],
        ['b', '1.0.0'],
      ],
    );
    assert.deepEqual(second.get('acme', 'a')?.doc, makeDoc('a', { code: 'ACME' }));
    assert.deepEqual(
      (await second.versions('default', 'a')).map((v) => [v.seq, v.version]),
      [[1, '1']],
    );

    await second.put(rec('a', { version: '3' }), { origin: 'api' });
    assert.deepEqual(
      (await second.versions('default', 'a')).map((v) => [v.seq, v.version]),
      [
        [2, '2'],
        [1, '1'],
      ],
    );
  });

  it('skips and reports broken files while the others load', async () => {
    await writeFile(join(dir, 'good.json'), json('good'));
    await writeFile(join(dir, 'bad.json'), '{ not json');
    await writeFile(join(dir, 'wrong.json'), json('other'));
    await writeFile(join(dir, 'bin.svc'), 'SVCR...');
    await writeFile(join(dir, 'a b.json'), json('a b'));
    await writeFile(join(dir, `${'x'.repeat(129)}.json`), json('x'));
    await mkdir(join(dir, 'dir.json'));
    const warnings: Array<{ obj: object | string; msg: string | undefined }> = [];
    const store = new FileStore({ rulesDir: dir, logger: { warn: (obj, msg) => warnings.push({ obj, msg }) } });
    const report = await store.load(testPrepare);
    assert.equal(report.loaded, 1);
    assert.deepEqual(
      store.list('default').map((r) => r.name),
      ['good'],
    );
    const reasons = new Map(report.skipped.map((s) => [s.path, s.reason]));
    assert.equal(reasons.size, 6);
    assert.match(reasons.get(join(dir, 'bad.json'))!, /JSON/);
    assert.match(reasons.get(join(dir, 'wrong.json'))!, /ruleset name "other" differs from the file name "wrong"/);
    assert.equal(reasons.get(join(dir, 'bin.svc')), 'unsupported in this test');
    assert.match(reasons.get(join(dir, 'a b.json'))!, /invalid ruleset name/);
    assert.match(reasons.get(join(dir, `${'x'.repeat(129)}.json`))!, /invalid ruleset name/);
    assert.equal(reasons.get(join(dir, 'dir.json')), 'not a regular file');
    assert.equal(warnings.length, 6, 'each skip is logged');
    assert.deepEqual(warnings[0]!.obj, report.skipped[0]);
  });

  it('refuses a rule file over the size limit from its size, without reading it, while the others load', async () => {
    await writeFile(join(dir, 'good.json'), json('good'));
    // 3 GiB, sparse (no disk used): read whole, it would not even fit a Buffer (node refuses files
    // over 2 GiB with its own error); refused from its size, it never reaches memory.
    await writeFile(join(dir, 'huge.json'), '');
    await truncate(join(dir, 'huge.json'), 3 * 2 ** 30);
    const store = new FileStore({ rulesDir: dir });
    const report = await store.load(testPrepare);
    assert.equal(report.loaded, 1);
    assert.deepEqual(report.skipped, [
      { path: join(dir, 'huge.json'), reason: `${join(dir, 'huge.json')}: file is ${3 * 2 ** 30} bytes, over the 67108864-byte limit` },
    ]);
  });

  it('loads one file per name by precedence json > yaml > yml > svc and reports the rest', async () => {
    await writeFile(join(dir, 'a.json'), json('a', 'FROM_JSON'));
    await writeFile(join(dir, 'a.yaml'), yaml('a'));
    await writeFile(join(dir, 'a.svc'), 'x');
    await writeFile(join(dir, 'b.yml'), yaml('b', 'FROM_YML'));
    await writeFile(join(dir, 'b.yaml'), yaml('b', 'FROM_YAML'));
    await writeFile(join(dir, 'c.yml'), yaml('c', 'FROM_YML'));
    const store = new FileStore({ rulesDir: dir });
    const report = await store.load(testPrepare);
    assert.equal(report.loaded, 3);
    assert.deepEqual(store.get('default', 'a')?.doc, makeDoc('a', { code: 'FROM_JSON' }));
    assert.deepEqual(store.get('default', 'b')?.doc, makeDoc('b', { code: 'FROM_YAML' }));
    assert.deepEqual(store.get('default', 'c')?.doc, makeDoc('c', { code: 'FROM_YML' }));
    assert.deepEqual(report.skipped.map((s) => s.path).sort(), [join(dir, 'a.svc'), join(dir, 'a.yaml'), join(dir, 'b.yml')]);
    for (const s of report.skipped) assert.match(s.reason, /takes precedence/);
  });

  it('ignores the tenant registry, dotfiles, history, temp files and other extensions', async () => {
    await writeFile(join(dir, 'tenants.json'), '{"tenants":[]}');
    await writeFile(join(dir, '.a.json.123.abc.tmp'), json('a'));
    await writeFile(join(dir, '.hidden.json'), json('hidden'));
    await writeFile(join(dir, '.health_probe'), 'x');
    await writeFile(join(dir, 'README.md'), '# rules');
    await mkdir(join(dir, '.versions', 'a'), { recursive: true });
    await writeFile(join(dir, '.versions', 'a', 'v1_1.json'), json('a'));
    await writeFile(join(dir, 'a.json'), json('a'));
    const store = new FileStore({ rulesDir: dir });
    assert.deepEqual(await store.load(testPrepare), { loaded: 1, skipped: [] });
    assert.deepEqual(store.tenants(), ['default']);
  });

  it('loads tenants from tenants/<id>/ and reports invalid or misplaced tenant directories', async () => {
    await mkdir(join(dir, 'tenants', 'acme'), { recursive: true });
    await mkdir(join(dir, 'tenants', 'default'), { recursive: true });
    await mkdir(join(dir, 'tenants', 'bad id'), { recursive: true });
    await writeFile(join(dir, 'tenants', 'acme', 'r.json'), json('r'));
    await writeFile(join(dir, 'tenants', 'acme', 'tenants.json'), json('tenants'));
    await writeFile(join(dir, 'tenants', 'default', 'r.json'), json('r'));
    await writeFile(join(dir, 'tenants', 'bad id', 'r.json'), json('r'));
    await writeFile(join(dir, 'tenants', 'stray.json'), json('stray'));
    await writeFile(join(dir, 'tenants.yaml'), yaml('tenants'));
    const store = new FileStore({ rulesDir: dir });
    const report = await store.load(testPrepare);
    assert.equal(report.loaded, 2);
    assert.deepEqual(store.tenants(), ['acme']);
    assert.deepEqual(
      store.list('acme').map((r) => r.name),
      ['r', 'tenants'],
    );
    const reasons = new Map(report.skipped.map((s) => [s.path, s.reason]));
    assert.match(reasons.get(join(dir, 'tenants', 'default'))!, /root/);
    assert.match(reasons.get(join(dir, 'tenants', 'bad id'))!, /invalid tenant id/);
    assert.match(reasons.get(join(dir, 'tenants.yaml'))!, /reserved/);
    assert.equal(reasons.size, 3);
  });

  it('rejects a record whose tenant differs from its directory', async () => {
    await writeFile(join(dir, 'a.json'), json('a'));
    const store = new FileStore({ rulesDir: dir });
    const report = await store.load((file) => ({ ...testPrepare(file), tenant: 'elsewhere' }));
    assert.equal(report.loaded, 0);
    assert.match(report.skipped[0]!.reason, /tenant "elsewhere" differs/);
  });

  it('follows symlinked rule files', async () => {
    const outside = await makeTempDir();
    try {
      await writeFile(join(outside.dir, 'real.json'), json('linked'));
      await symlink(join(outside.dir, 'real.json'), join(dir, 'linked.json'));
      const store = new FileStore({ rulesDir: dir });
      assert.equal((await store.load(testPrepare)).loaded, 1);
    } finally {
      await outside.cleanup();
    }
  });

  it('replaces the in-memory content on a second load', async () => {
    const store = new FileStore({ rulesDir: dir });
    await store.put(rec('a'), { origin: 'api' });
    await store.put(rec('m'), { origin: 'watch', persist: false });
    assert.equal((await store.load(testPrepare)).loaded, 1);
    assert.deepEqual(
      store.list('default').map((r) => r.name),
      ['a'],
    );
  });
});
