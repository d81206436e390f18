// Screenshots of a `cumemtrace html` page's views, for docs/ (docs/html-report.md):
//   node scripts/html_screenshots.mjs PAGE.html OUTDIR [PREFIX]
// writes PREFIX-summary.png, PREFIX-timeline.png, PREFIX-bands.png, PREFIX-address-map.png,
// PREFIX-flame.png, PREFIX-range-flame.png (the flame graph over the whole time range),
// PREFIX-tree.png and PREFIX-sizes.png (the top-down tree and the size histogram of the
// Allocations section) and PREFIX-page.png (the whole page); a view the page does not have is left out. Uses test/html's puppeteer-core (scripts/html_assets.sh installs it)
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
    if (el) await el.screenshot({ path: path.join(out_dir, `${prefix}-${name}.png`) });
    else console.error(`${selector}: not on the page, no ${prefix}-${name}.png`);
  };
  await shot('#summary', 'summary');
  await shot('#timeline', 'timeline');
  await shot('#bands', 'bands');
  await shot('#map', 'address-map');
  await shot('#flame', 'flame');
  await shot('#range-flame', 'range-flame');
  await shot('#alloc-tree', 'tree');
  await shot('#alloc-sizes', 'sizes');
  await page.screenshot({ path: path.join(out_dir, `${prefix}-page.png`), fullPage: true });
} finally {
  await browser.close();
}
