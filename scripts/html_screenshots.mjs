// Screenshots of a `cumemtrace html` page's views, for docs/ (docs/html-report.md):
//   node scripts/html_screenshots.mjs PAGE.html OUTDIR [PREFIX]
// writes PREFIX-timeline.png, PREFIX-address-map.png, PREFIX-flame.png and PREFIX-page.png
// (the whole page). Uses test/html's puppeteer-core (scripts/html_assets.sh installs it)
// and Debian's chromium (CHROMIUM overrides the path).
import path from 'node:path';

import { launch_chromium } from '../test/html/browser.mjs';

const [page_path, out_dir, prefix = 'report'] = process.argv.slice(2);
if (!page_path || !out_dir) {
  console.error('usage: node scripts/html_screenshots.mjs PAGE.html OUTDIR [PREFIX]');
  process.exit(2);
}
const browser = await launch_chromium();
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto('file://' + path.resolve(page_path), { waitUntil: 'load' });
  await page.waitForSelector('#flame svg');
  // The flame graph draws with a transition: a screenshot at once shows an empty frame.
  await new Promise((done) => setTimeout(done, 1500));
  const shot = async (selector, name) => {
    const el = await page.$(selector);
    if (!el) throw new Error(`${selector}: not on the page`);
    await el.screenshot({ path: path.join(out_dir, `${prefix}-${name}.png`) });
  };
  await shot('#timeline', 'timeline');
  await shot('#bands', 'bands');
  await shot('#map', 'address-map');
  await shot('#flame', 'flame');
  await page.screenshot({ path: path.join(out_dir, `${prefix}-page.png`), fullPage: true });
} finally {
  await browser.close();
}
