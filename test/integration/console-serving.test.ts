/**
 * How the real server serves the web console's files (docs/console.md): `/console` redirects,
 * content types, hashed files cached for a year and the page revalidated by ETag, gzip, the CSP
 * header, the page for any client-side view, no file outside the build (directory traversal in
 * every spelling), `--disable-console`, and the bundle under 500 KB gzipped.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { http, ROOT, startServer, type ServerProcess } from '../helpers/server-process.js';

const BUILT = join(ROOT, 'dist', 'console');

/** GET `path` sent exactly as written (no URL normalisation), with `headers`. */
function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('console files', () => {
  let server: ServerProcess;
  const files = readdirSync(BUILT);
  const script = files.find((f) => f.endsWith('.js')) ?? '';
  const style = files.find((f) => f.endsWith('.css')) ?? '';
  const index = readFileSync(join(BUILT, 'index.html'));

  before(async () => {
    server = await startServer([]);
  });
  after(async () => {
    await server?.stop();
  });

  it('builds one hashed script and style sheet that index.html loads', () => {
    assert.match(script, /^main-[A-Z0-9]{8}\.js$/);
    assert.match(style, /^main-[A-Z0-9]{8}\.css$/);
    assert.ok(index.includes(`src="/console/${script}"`) && index.includes(`href="/console/${style}"`));
    assert.doesNotMatch(index.toString(), /https?:\/\//, 'nothing is loaded from another origin');
  });

  it('keeps the bundle under 500 KB gzipped', () => {
    const gz = files.reduce((n, f) => n + gzipSync(readFileSync(join(BUILT, f)), { level: 9 }).length, 0);
    assert.ok(gz < 500 * 1024, `${gz} bytes gzipped`);
  });

  it('redirects /console to /console/', async () => {
    const r = await rawGet(server.url, '/console?x=1');
    assert.equal(r.status, 308);
    assert.equal(r.headers['location'], '/console/?x=1');
  });

  it('serves the page with its headers, revalidated by ETag', async () => {
    const r = await rawGet(server.url, '/console/');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.deepEqual(r.body, index);
    assert.match(String(r.headers['content-security-policy']), /script-src 'self'/);
    assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['cache-control'], 'no-cache');
    const etag = String(r.headers['etag']);
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await rawGet(server.url, '/console/', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  it('serves hashed assets with their types, cached as immutable, gzipped when asked', async () => {
    const js = await rawGet(server.url, `/console/${script}`);
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.deepEqual(js.body, readFileSync(join(BUILT, script)));
    const css = await rawGet(server.url, `/console/${style}`, { 'accept-encoding': 'gzip, br' });
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal(css.headers['content-encoding'], 'gzip');
    const res = await fetch(`${server.url}/console/${style}`); // fetch decodes gzip
    assert.equal(await res.text(), readFileSync(join(BUILT, style), 'utf8'));
  });

  it('answers the page for a client-side view, and 404 for a missing asset', async () => {
    for (const view of ['/console/r/loan', '/console/new', '/console/some/deep/view?q=1']) {
      const r = await rawGet(server.url, view);
      assert.equal(r.status, 200, view);
      assert.deepEqual(r.body, index, view);
    }
    const missing = await http(server.url, 'GET', '/console/main-AAAAAAAA.js');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
  });

  it('never serves a file outside the build', async () => {
    const secret = readFileSync(join(ROOT, 'package.json'));
    for (const path of [
      '/console/../package.json',
      '/console/../../package.json',
      '/console/..%2f..%2fpackage.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/..%5c..%5cpackage.json',
      '/console/....//....//package.json',
      '/console/%252e%252e%252fpackage.json',
      '/console/.%2e/.%2e/.%2e/etc/passwd',
      '/console//etc/passwd',
      '/console/.tsbuildinfo',
      '/console/index.html%00.js',
    ]) {
      const r = await rawGet(server.url, path);
      assert.ok(!r.body.equals(secret) && !r.body.toString().includes('"name": "svc"'), `${path} leaked package.json`);
      assert.ok(!r.body.toString().includes('root:x:0'), `${path} leaked /etc/passwd`);
      assert.ok([200, 400, 404].includes(r.status), `${path}: ${r.status}`);
      if (r.status === 200) assert.deepEqual(r.body, index, path);
    }
  });

  it('leaves the API as it was', async () => {
    const r = await http(server.url, 'GET', '/api/v1/rulesets');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-security-policy'), null);
  });

  it('is off with --disable-console', async () => {
    const off = await startServer(['--disable-console']);
    try {
      for (const path of ['/console', '/console/', `/console/${script}`]) {
        const r = await http(off.url, 'GET', path);
        assert.equal(r.status, 404, path);
        assert.equal(r.body.code, 'NOT_FOUND');
      }
      assert.equal((await http(off.url, 'GET', '/api/v1/rulesets')).status, 200);
    } finally {
      await off.stop();
    }
  });
});
