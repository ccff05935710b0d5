/**
 * svc-client stands alone: its package has no runtime dependencies, it builds with its own
 * tsconfig (DOM and ES libraries only, no Node types), and the built modules import nothing
 * but each other, so the built package loads and calls a server without the repository.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { ROOT, tempDir } from '../../helpers/server-process.js';

const CLIENT = join(ROOT, 'client');

describe('svc-client package', () => {
  const out = tempDir('svc-client-build-');
  after(() => out.remove());

  it('package.json: ESM, exports with types, no dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(pkg['type'], 'module');
    assert.equal(pkg['types'], './dist/index.d.ts');
    assert.deepEqual(pkg['exports'], { '.': { types: './dist/index.d.ts', import: './dist/index.js' } });
    assert.equal(pkg['dependencies'], undefined);
    assert.equal(pkg['peerDependencies'], undefined);
    assert.equal(pkg['optionalDependencies'], undefined);
  });

  it('builds with its own tsconfig; the output imports only its own files and works alone', async () => {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(CLIENT, 'tsconfig.json'), '--outDir', out.path], {
      stdio: 'pipe',
    });
    const files = readdirSync(out.path);
    assert.ok(files.includes('index.js') && files.includes('index.d.ts'), files.join(' '));
    for (const file of files.filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      const text = readFileSync(join(out.path, file), 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        assert.match(m[1]!, /^\.\/[a-z-]+\.js$/, `${file} imports ${m[1]}`);
      }
    }

    const stub = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: "ruleset 'x' not found", code: 'NOT_FOUND' }));
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    try {
      const built = (await import(pathToFileURL(join(out.path, 'index.js')).href)) as typeof import('../../../client/src/index.js');
      const client = new built.SvcClient({ baseUrl: `http://127.0.0.1:${(stub.address() as AddressInfo).port}` });
      await assert.rejects(
        () => client.getRuleset('x'),
        (err: unknown) => err instanceof built.SvcError && err.status === 404 && err.code === 'NOT_FOUND',
      );
    } finally {
      await new Promise((r) => stub.close(r));
    }
  });
});
