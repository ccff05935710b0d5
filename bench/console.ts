/**
 * The web console (docs/console.md): how soon the page is interactive on localhost, and how big
 * its bundle is. A real headless Chromium (Debian's `chromium`, driven by playwright-core) loads
 * `/console/` of a real svc server holding the example rules, each load in a fresh browser
 * context (a cold cache), until the page's own mark `console:list-ready` (the rulesets list drawn
 * with the server's answer). Baseline in the same run: the same browser loading `/health` (a
 * JSON answer, nothing to run), so the browser's own cost of a navigation is visible beside it.
 * Targets: interactive within 1 s (median), bundle under 500 KB gzipped.
 * Writes bench/results/console-<timestamp>.json.
 *
 * Run: `bash bench/run.sh console` (or `node --import tsx bench/console.ts` after building dist/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { startSvc } from './lib/procs.js';
import { absoluteRow, machineInfo, median, printSummary, round, timeRow, writeReport, envInt } from './lib/report.js';

const ROOT = new URL('..', import.meta.url).pathname;
const LOADS = envInt('BENCH_CONSOLE_LOADS', 15);

/** Gzipped size in bytes of every file of the built console. */
function bundleBytes(): { raw: number; gzip: number } {
  const dir = join(ROOT, 'dist', 'console');
  let raw = 0;
  let gzip = 0;
  for (const f of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, f));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

async function main(): Promise<void> {
  const svc = await startSvc(['--rules-dir', join(ROOT, 'examples', 'rules')], null);
  const browser = await chromium.launch({
    executablePath: process.env['SVC_CHROMIUM'] ?? '/usr/bin/chromium',
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
  const consoleMs: number[] = [];
  const healthMs: number[] = [];
  try {
    for (let i = 0; i < LOADS + 2; i++) {
      for (const which of i % 2 === 0 ? (['console', 'health'] as const) : (['health', 'console'] as const)) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto('about:blank');
        if (which === 'console') {
          await page.goto(`${svc.url}/console/`);
          await page.waitForFunction(() => performance.getEntriesByName('console:list-ready').length > 0);
          const names = await page.$$eval('[data-ruleset]', (els) => els.map((e) => e.getAttribute('data-ruleset')));
          if (i === 0 && !names.includes('loan')) console.error(`console: the list shows ${JSON.stringify(names)} (expected loan among them)`);
          const ms = await page.evaluate(() => performance.getEntriesByName('console:list-ready')[0]!.startTime);
          if (i >= 2) consoleMs.push(ms);
        } else {
          await page.goto(`${svc.url}/health`, { waitUntil: 'load' });
          const ms = await page.evaluate(() => (performance.getEntriesByType('navigation' as never)[0] as unknown as { loadEventEnd: number }).loadEventEnd);
          if (i >= 2) healthMs.push(ms);
        }
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await svc.stop();
  }
  const c = median(consoleMs);
  const h = median(healthMs);
  const bundle = bundleBytes();
  console.log(`console: interactive median ${c.toFixed(0)} ms (max ${Math.max(...consoleMs).toFixed(0)}), /health loaded ${h.toFixed(0)} ms`);
  const summary = [
    timeRow(
      'web console: interactive on localhost, cold cache (median of loads)',
      'ms',
      round(c, 1),
      round(h, 1),
      'the same browser loading /health',
      null,
      `max ${round(Math.max(...consoleMs), 1)} ms over ${consoleMs.length} loads (target: under 1000 ms)`,
    ),
    absoluteRow('web console: interactive on localhost, median', 'ms', round(c, 1), '< 1000 ms', c < 1000),
    absoluteRow(
      'web console: bundle (every file of dist/console), gzipped',
      'KB',
      round(bundle.gzip / 1024, 1),
      '< 500 KB',
      bundle.gzip < 500 * 1024,
      `${round(bundle.raw / 1024, 1)} KB before gzip`,
    ),
  ];
  printSummary(summary);
  writeReport({
    suite: 'console',
    machine: machineInfo(),
    method: `Debian chromium (headless, playwright-core) loads /console/ of a real svc server started on examples/rules, ${LOADS} times after 2 warm-up loads, each in a fresh browser context (cold cache), alternating with a load of /health as the baseline; the console figure is the page's own mark console:list-ready (the rulesets list drawn with the server's answer) from the start of the navigation, the baseline the navigation's loadEventEnd. Bundle: the gzip -9 size of every file of dist/console.`,
    summary,
    details: { console_ms: consoleMs, health_ms: healthMs, bundle },
  });
  if (c >= 1000 || bundle.gzip >= 500 * 1024) process.exitCode = 1;
}

await main();
