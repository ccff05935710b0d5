/**
 * The layout of src/ (docs/architecture.md "Layers"): each folder is a layer that imports only
 * the layers below it, no files import each other in a cycle, and the pure layers import no
 * `node:*` module. Reads every relative import of src/ as text (type-only imports count: they
 * tie files together for a reader too).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve(import.meta.dirname, '..', '..', '..', 'src');

/** Rank of each folder: a file may import files of its own folder or of a lower rank. */
const LAYER: Readonly<Record<string, number>> = {
  expr: 1,
  config: 2,
  ruleset: 2,
  filter: 3,
  signing: 3,
  store: 3,
  observe: 4,
  service: 4,
  auth: 4,
  analysis: 4,
  change: 4,
  cluster: 4,
  sync: 5,
  transport: 6,
  cli: 7,
  bin: 7,
};
/** Layers that must stay pure: data in, data out. */
const PURE = ['expr', 'ruleset', 'filter', 'analysis', 'change'];

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** file (relative to src/) → the modules it names: relative ones resolved to files, others as written. */
function importGraph(): Map<string, { local: Set<string>; external: Set<string> }> {
  const graph = new Map<string, { local: Set<string>; external: Set<string> }>();
  for (const file of sourceFiles(SRC)) {
    const local = new Set<string>();
    const external = new Set<string>();
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (!spec.startsWith('.')) {
        external.add(spec);
        continue;
      }
      let target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      if (!target.endsWith('.ts')) target = join(target, 'index.ts');
      local.add(relative(SRC, target));
    }
    graph.set(relative(SRC, file), { local, external });
  }
  return graph;
}

const graph = importGraph();
const folderOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '');

test('every folder of src/ has a layer, and no file imports a higher layer', () => {
  const upward: string[] = [];
  for (const [file, { local }] of graph) {
    const from = folderOf(file);
    if (from === '') continue; // src/server.ts, src/log.ts, src/version.ts: the top and the shared types
    assert.ok(from in LAYER, `folder src/${from} has no layer in this test and docs/architecture.md`);
    for (const dep of local) {
      const to = folderOf(dep);
      if (to !== '' && to in LAYER && LAYER[to]! > LAYER[from]!) upward.push(`${file} -> ${dep}`);
    }
  }
  assert.deepEqual(upward, []);
});

test('src/log.ts and src/version.ts import nothing of src/ (any layer may import them)', () => {
  assert.deepEqual([...graph.get('log.ts')!.local], []);
  assert.deepEqual([...graph.get('version.ts')!.local], []);
});

test('no import cycles among the files of src/', () => {
  // Tarjan's strongly connected components; a component of more than one file is a cycle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.local ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  assert.deepEqual(cycles, []);
});

test('the pure layers import no node:* module and nothing of a logger, clock or metrics', () => {
  const impure: string[] = [];
  for (const [file, { external, local }] of graph) {
    if (!PURE.includes(folderOf(file))) continue;
    for (const spec of external)
      if (spec.startsWith('node:') || !['fastify', 'pino', 'prom-client'].every((p) => !spec.startsWith(p))) impure.push(`${file} -> ${spec}`);
    for (const dep of local) if (['observe', 'service', 'sync', 'transport'].includes(folderOf(dep))) impure.push(`${file} -> ${dep}`);
  }
  assert.deepEqual(impure, []);
});
