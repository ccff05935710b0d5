/**
 * The console's file server (src/transport/http/console.ts) on a directory of its own, through
 * fastify's inject: only the names in the directory are files, hashed names are immutable, other
 * names revalidate, subfolders and dot files are never served, an unbuilt console says so, and
 * the directory is read on the first console request, not before.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import { CONSOLE_CSP, registerConsole } from '../../../src/transport/http/console.js';

describe('console file server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-console-files-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const app = (d: string) => {
    const a = Fastify();
    registerConsole(a, d);
    return a;
  };

  it('reads the directory on the first console request only', async () => {
    const late = join(dir, 'late');
    const a = app(late);
    await a.ready();
    // Created after the server is ready: still found, since nothing was read at start.
    mkdirSync(late);
    writeFileSync(join(late, 'index.html'), '<p>late</p>');
    const r = await a.inject('/console/');
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '<p>late</p>');
    await a.close();
  });

  it('serves names of the directory, with types and caching by name', async () => {
    writeFileSync(join(dir, 'index.html'), '<!doctype html><p>page</p>');
    writeFileSync(join(dir, 'main-ABCDEFGH.js'), 'console.log(1)');
    writeFileSync(join(dir, 'notes.txt'), 'plain');
    writeFileSync(join(dir, '.secret'), 'hidden');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'inner.js'), 'inner');
    const a = app(dir);
    const js = await a.inject('/console/main-ABCDEFGH.js');
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(js.headers['content-security-policy'], CONSOLE_CSP);
    const txt = await a.inject('/console/notes.txt');
    assert.equal(txt.headers['cache-control'], 'no-cache');
    assert.equal(txt.body, 'plain');
    for (const path of ['/console/sub/inner.js', '/console/.secret', '/console/..%2Fsecret.js']) {
      const r = await a.inject(path);
      assert.ok(r.body !== 'inner' && r.body !== 'hidden', path);
    }
    assert.equal((await a.inject('/console/sub/inner.js')).statusCode, 404);
    const view = await a.inject('/console/.secret');
    assert.equal(view.statusCode, 200);
    assert.equal(view.body, '<!doctype html><p>page</p>');
    await a.close();
  });

  it('says when the console is not built', async () => {
    const a = app(join(dir, 'missing'));
    const r = await a.inject('/console/');
    assert.equal(r.statusCode, 404);
    assert.equal(r.json().code, 'NOT_FOUND');
    assert.match(r.json().error, /not built/);
    await a.close();
  });
});
