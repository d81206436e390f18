// What the browser tests, bench/html_paint.mjs and scripts/html_screenshots.mjs share:
// Debian's chromium launched headless through this folder's pinned puppeteer-core
// (CHROMIUM overrides the path), the wait for a page's view script to finish, a page
// that gathers its errors; and for the tests, a trace made under `cumemtrace run` and
// the checks' report.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
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

// The one trace of `args` run under `cumemtrace run` against the simulated driver in
// `simDir`, written into the new folder `sub`.
export function traced(cli, simDir, sub, args) {
  mkdirSync(sub);
  execFileSync(cli, ['run', '-o', sub + '/t-%p.trace', '--', ...args], {
    env: { ...process.env, LD_LIBRARY_PATH: simDir }, stdio: 'ignore' });
  const found = readdirSync(sub).filter((f) => f.endsWith('.trace'));
  if (found.length !== 1) throw new Error(sub + ': expected one trace, found ' + found.length);
  return path.join(sub, found[0]);
}

// check(ok, what, got) prints "ok" or "FAIL" and what it got; finish() ends the test,
// with status 1 when any check failed.
export function checks() {
  let failures = 0;
  return {
    check(ok, what, got) {
      console.log((ok ? 'ok   ' : 'FAIL ') + what + (ok ? '' : ' (got ' + JSON.stringify(got) + ')'));
      if (!ok) failures++;
    },
    finish() {
      if (failures) {
        console.log(failures + ' check(s) failed');
        process.exit(1);
      }
      console.log('all checks passed');
    },
  };
}
