// What the browser tests, bench/html_paint.mjs and scripts/html_screenshots.mjs share:
// Debian's chromium launched headless through this folder's pinned puppeteer-core
// (CHROMIUM overrides the path), the wait for a page's view script to finish, and a page
// that gathers its errors.
import puppeteer from 'puppeteer-core';

export function launch_chromium() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'],
  });
}

// Whether the view script said it was ready within `ms`. Polled with evaluate:
// waitForFunction compiles its predicate in the page, which the page's
// Content-Security-Policy (no eval) forbids.
export async function drawn(page, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (await page.evaluate(() => !!(window.cumemtraceView && window.cumemtraceView.ready))) return true;
  return false;
}

// A page of a screen's size (1280 × 1000) and the script errors and console errors it
// reports, gathered into `errors`.
export async function watched_page(browser) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors };
}
