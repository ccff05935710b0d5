/**
 * Reference data (EXTENSIONS.md 3): the `@name.path` syntax tree, the data snapshot the engine
 * reads (expr/data-ref.ts), the datasets a compiled ruleset lists, executions, the filter's known
 * values, the analysis (no conclusions from datasets), and the data store (memory, atomic files
 * under `<dir>/data/`, reload).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { analyzeRuleset } from '../../../src/analysis/index.js';
import { compile, datasetNames, parse, readsData, render, setDataSnapshot } from '../../../src/expr/index.js';
import { generateFilter, parseFilterRequest } from '../../../src/filter/index.js';
import { compileRuleset, execute } from '../../../src/ruleset/index.js';
import { DATA_FILE_FLOOR_BYTES, maxDataFileBytes, readDataFile } from '../../../src/store/data-files.js';
import { DataStore, dataRecord } from '../../../src/store/data-store.js';
import { OwnFiles } from '../../../src/store/own-files.js';
import { tempDir } from '../../helpers/server-process.js';

const snap = (o: Record<string, unknown>) => new Map(Object.entries(o)) as Map<string, never>;

const RULES = {
  config: { name: 'screen', entry_step: 'check' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.country in @high_risk.countries', next_step: 'review' }], default_next: 'ok' },
    review: { type: 'terminal', result: { code: 'REVIEW' }, output: { limit: '@limits.review' } },
    ok: { type: 'terminal', result: { code: 'OK' } },
  },
};

describe('@name.path in the expression language', () => {
  it('parses to a path of scope data and renders back', () => {
    const ast = parse('@high_risk.countries[0]');
    assert.deepEqual(ast, { kind: 'path', scope: 'data', segments: ['high_risk', 'countries', 0], pos: 0 });
    assert.equal(render(ast), '@high_risk.countries[0]');
    assert.equal(render(parse(render(parse('x in @a["b c"]')))), '(in x @a["b c"])');
    assert.equal(readsData(parse('1 + a.b')), false);
    assert.equal(readsData(parse('if a then [@d] else 1')), true);
    assert.deepEqual([...datasetNames(parse('@b.x + coalesce(@a, @b)'), new Set())].sort(), ['a', 'b']);
  });

  it('reads the snapshot set before the evaluation; null (lenient) or MISSING_FIELD (strict) without it', () => {
    const lenient = compile(parse('@d.x'), { fieldMissing: 'lenient' });
    const strict = compile(parse('@d.x'), { fieldMissing: 'strict' });
    setDataSnapshot(snap({ d: { x: 5 } }));
    assert.equal(lenient({}, null), 5);
    assert.equal(strict({}, null), 5);
    setDataSnapshot(snap({ d: { x: 6 } }));
    assert.equal(lenient({}, null), 6, 'a new snapshot is read by the same compiled expression');
    setDataSnapshot(null);
    assert.equal(lenient({}, null), null);
    assert.throws(() => strict({}, null), /dataset '@d' does not exist/);
  });

  it('a compiled ruleset lists the datasets it reads; executions read the snapshot', () => {
    const c = compileRuleset(RULES);
    assert.deepEqual(c.datasets, ['high_risk', 'limits']);
    assert.deepEqual(compileRuleset({ ...RULES, steps: { ...RULES.steps, check: { type: 'decision', branches: [], default_next: 'ok' } } }).datasets, [
      'limits',
    ]);
    assert.deepEqual(compileRuleset({ config: RULES.config, steps: { check: RULES.steps.ok } }).datasets, []);
    const opts = { clock: () => 0, timeoutMs: 0, maxSteps: 100 };
    setDataSnapshot(snap({ high_risk: { countries: ['IR'] }, limits: { review: 7 } }));
    const r = execute(c, { user: { country: 'IR' } }, opts);
    assert.equal(r.code, 'REVIEW');
    assert.deepEqual(r.output, { limit: 7 });
    assert.equal(execute(c, { user: { country: 'IR' } }, { ...opts, trace: true }).code, 'REVIEW');
    setDataSnapshot(null);
    assert.equal(execute(c, { user: { country: 'IR' } }, opts).code, 'OK');
  });

  it('the filter folds the datasets as known values, per request', () => {
    const c = compileRuleset(RULES);
    const request = parseFilterRequest({ known_input: {}, target_results: ['REVIEW'], field_mapping: { 'user.country': 'country' } });
    setDataSnapshot(snap({ high_risk: { countries: ['KP', 'IR'] } }));
    const a = JSON.stringify(generateFilter(c, request));
    setDataSnapshot(snap({ high_risk: { countries: ['CU'] } }));
    const b = JSON.stringify(generateFilter(c, request));
    setDataSnapshot(null);
    assert.match(a, /'KP'/);
    assert.match(b, /'CU'/);
    assert.doesNotMatch(b, /'KP'/);
  });

  it('the analysis concludes nothing from datasets (no DEAD_BRANCH), whatever the snapshot holds', () => {
    const doc = {
      config: { name: 'a', entry_step: 's' },
      steps: {
        s: {
          type: 'decision',
          branches: [
            { condition: 'x in @set.list', next_step: 't' },
            { condition: '@flags.on == true', next_step: 't' },
          ],
          default_next: 't',
        },
        t: { type: 'terminal', result: { code: 'T' } },
      },
    };
    for (const s of [null, snap({ flags: { on: false } })]) {
      setDataSnapshot(s);
      const warnings = analyzeRuleset(compileRuleset(doc));
      assert.deepEqual(
        warnings.filter((w) => w.code === 'DEAD_BRANCH'),
        [],
      );
    }
    setDataSnapshot(null);
  });
});

describe('the data store', () => {
  const dir = tempDir('svc-datastore-');
  after(() => dir.remove());

  it('memory only: put, get, list, snapshot, delete; versions follow content', async () => {
    const store = new DataStore({ rulesDir: null });
    const changes: string[] = [];
    store.subscribe((c) => changes.push(c.kind));
    assert.equal(await store.put(dataRecord('default', 'b', [1])), true);
    assert.equal(await store.put(dataRecord('default', 'a', { x: 1 })), true);
    assert.equal(await store.put(dataRecord('default', 'a', { x: 2 })), false);
    assert.equal(await store.put(dataRecord('t1', 'a', { x: 1 })), true);
    assert.deepEqual(
      store.list('default').map((r) => r.name),
      ['a', 'b'],
    );
    assert.deepEqual(store.snapshot('default').get('a'), { x: 2 });
    assert.deepEqual(store.snapshot('t1').get('a'), { x: 1 });
    assert.equal(store.snapshot('nobody').size, 0);
    assert.equal(dataRecord('x', 'y', { x: 1 }).version, store.get('t1', 'a')?.version);
    assert.notEqual(store.get('default', 'a')?.version, store.get('t1', 'a')?.version);
    assert.ok(Object.isFrozen(store.get('default', 'a')?.value));
    assert.equal(await store.delete('default', 'a'), true);
    assert.equal(await store.delete('default', 'a'), false);
    assert.equal(store.snapshot('default').has('a'), false);
    assert.deepEqual(changes, ['data.put', 'data.put', 'data.put', 'data.put', 'data.delete']);
    await assert.rejects(store.put(dataRecord('default', '../x', 1)), /invalid dataset name/);
  });

  it('files: <dir>/data/<name>.json and <dir>/tenants/<id>/data/<name>.json, read back by load', async () => {
    const store = new DataStore({ rulesDir: dir.path, own: new OwnFiles({ clock: Date }) });
    await store.put(dataRecord('default', 'high_risk', { countries: ['KP'] }));
    await store.put(dataRecord('acme', 'rates', [0.1, 0.2]));
    assert.deepEqual(JSON.parse(readFileSync(join(dir.path, 'data', 'high_risk.json'), 'utf8')), { countries: ['KP'] });
    assert.ok(existsSync(join(dir.path, 'tenants', 'acme', 'data', 'rates.json')));
    writeFileSync(join(dir.path, 'data', 'broken.json'), '{nope');
    writeFileSync(join(dir.path, 'data', '.high_risk.json.1.tmp'), '{}');
    mkdirSync(join(dir.path, 'data', 'sub'), { recursive: true });

    const again = new DataStore({ rulesDir: dir.path, own: new OwnFiles({ clock: Date }) });
    const report = await again.load();
    assert.equal(report.loaded, 2);
    assert.deepEqual(
      report.skipped.map((s) => s.path.split('/').pop()),
      ['broken.json', 'sub'],
    );
    assert.deepEqual(again.snapshot('default').get('high_risk'), { countries: ['KP'] });
    assert.deepEqual(again.snapshot('acme').get('rates'), [0.1, 0.2]);
    assert.equal(again.get('acme', 'rates')?.version, store.get('acme', 'rates')?.version);
    await again.delete('acme', 'rates');
    assert.ok(!existsSync(join(dir.path, 'tenants', 'acme', 'data', 'rates.json')));
  });

  it('a data file over the size bound is refused from its size, before any of it is read (a 3 GiB sparse file)', async () => {
    const d = tempDir('svc-data-bound-');
    try {
      mkdirSync(join(d.path, 'data'), { recursive: true });
      const huge = join(d.path, 'data', 'huge.json');
      writeFileSync(huge, '');
      truncateSync(huge, 3 * 2 ** 30);
      // Without the bound, node itself refuses a 3 GiB string ("Cannot create a string longer than ..."):
      // the message names the data-file limit instead.
      await assert.rejects(readDataFile(huge), { message: `file is ${3 * 2 ** 30} bytes, over the ${DATA_FILE_FLOOR_BYTES}-byte limit for data files` });
      writeFileSync(join(d.path, 'data', 'small.json'), JSON.stringify({ ok: [1, 2, 3] }, null, 8));
      const report = await new DataStore({ rulesDir: d.path, own: new OwnFiles({ clock: Date }), maxBytes: 1024 }).load();
      assert.equal(report.loaded, 1);
      assert.deepEqual(
        report.skipped.map((s) => [s.path.split('/').pop(), s.reason]),
        [['huge.json', `file is ${3 * 2 ** 30} bytes, over the ${DATA_FILE_FLOOR_BYTES}-byte limit for data files`]],
      );
      // The bound follows --max-data-bytes above its floor: four times it.
      assert.equal(maxDataFileBytes(undefined), DATA_FILE_FLOOR_BYTES);
      assert.equal(maxDataFileBytes(10 * 2 ** 20), DATA_FILE_FLOOR_BYTES);
      assert.equal(maxDataFileBytes(100 * 2 ** 20), 400 * 2 ** 20);
      // One byte over the bound is refused; the bound itself is read (and then fails as JSON, being zeros).
      truncateSync(huge, DATA_FILE_FLOOR_BYTES + 1);
      await assert.rejects(readDataFile(huge), /over the .*-byte limit for data files/);
      truncateSync(huge, DATA_FILE_FLOOR_BYTES);
      await assert.rejects(readDataFile(huge), /^Error: not JSON/);
    } finally {
      d.remove();
    }
  });
});
