/**
 * The web console with authentication on, in a real headless Chromium (docs/console.md): the
 * page itself is public, its API calls are refused until a key is typed; a wrong key is told
 * apart; the key lives in the tab's sessionStorage only and goes out as a Bearer token.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeTestKey, writeKeysFile } from '../helpers/auth-jwt.js';
import { launchBrowser, screenshot, type TestBrowser } from '../helpers/browser.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

describe('console with authentication on', () => {
  let server: ServerProcess;
  let browser: TestBrowser;
  const dir = tempDir('svc-console-auth-');
  const viewer = makeTestKey('console-viewer', 'viewer');

  before(async () => {
    const keys = join(dir.path, 'keys.json');
    writeKeysFile(keys, [viewer]);
    server = await startServer(['--auth-keys-file', keys]);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    dir.remove();
  });

  it('serves the page without a credential, and the API still needs one', async () => {
    assert.equal((await http(server.url, 'GET', '/console/')).status, 200);
    assert.equal((await http(server.url, 'GET', '/api/v1/rulesets')).status, 401);
  });

  it('asks for a key, refuses a wrong one, and keeps the right one in session storage only', async () => {
    const { page, errors, failed } = await browser.page();
    await page.goto(`${server.url}/console/`);
    await page.waitForSelector('#api-key');
    await screenshot(page, 'key');
    await page.fill('#api-key', 'svc_wrong_key');
    await page.click('button:has-text("Use this key")');
    await page.waitForSelector('text=The key was refused');
    await page.fill('#api-key', viewer.key);
    await page.click('button:has-text("Use this key")');
    await page.waitForSelector('text=No rulesets yet');
    const stored = await page.evaluate('({ session: sessionStorage.getItem("svc.console.key"), local: localStorage.length, cookie: document.cookie })');
    assert.deepEqual(stored, { session: viewer.key, local: 0, cookie: '' });
    // Every refusal was a 401 of an API call before the right key (the list, and the tenants probe).
    assert.ok(failed.length > 0);
    for (const f of failed) assert.match(f, /^(401 GET \/api\/v1\/(rulesets|tenants)|403 GET \/api\/v1\/tenants|404 GET \/api\/v1\/tenants)$/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
