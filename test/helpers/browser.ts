/**
 * A real headless Chromium for the console tests (docs/console.md): Debian's `chromium` package
 * (scripts/ensure-services.sh installs it), driven by playwright-core. Chromium runs with a fresh
 * profile (playwright makes a new temporary `--user-data-dir` for each launch and removes it) and
 * without its background connections (these machines' closed network refuses them).
 * Every page records its console errors and uncaught exceptions, which the tests assert empty.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './server-process.js';

/** The Debian browser binary. */
export const CHROMIUM = process.env['SVC_CHROMIUM'] ?? '/usr/bin/chromium';

/** A launched browser. */
export interface TestBrowser {
  readonly browser: Browser;
  /**
   * A new 1280x800 page; its console errors and page errors go to `errors`, and each answer of
   * 400 or more to `failed` (`<status> <method> <path>`). Chromium also logs such an answer as a
   * console error ("Failed to load resource"): those lines are left out of `errors`, and the
   * tests assert `failed` holds exactly the refusals they provoked.
   */
  page(): Promise<{ page: Page; errors: string[]; failed: string[] }>;
  close(): Promise<void>;
}

/** Launches Chromium headless (a fresh profile). */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  return {
    browser,
    async page() {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const errors: string[] = [];
      const failed: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of')) errors.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
      });
      return { page, errors, failed };
    },
    async close() {
      await browser.close();
    },
  };
}

/** With SVC_SCREENSHOTS=1, saves the page as docs/images/console-<name>.png (else nothing). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['SVC_SCREENSHOTS'] !== '1') return;
  const dir = join(ROOT, 'docs', 'images');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `console-${name}.png`) });
}
