// What the browser test, bench/html_paint.mjs and scripts/html_screenshots.mjs share:
// Debian's chromium launched headless through this folder's pinned puppeteer-core
// (CHROMIUM overrides the path), and the wait for a page's view script to finish.
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
