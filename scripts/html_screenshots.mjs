// Screenshots of a `cumemtrace html` page's views, for docs/ (docs/html-report.md):
//   node scripts/html_screenshots.mjs PAGE.html OUTDIR [PREFIX]
// writes PREFIX-timeline.png, PREFIX-address-map.png, PREFIX-flame.png and PREFIX-page.png
// (the whole page). Uses test/html's puppeteer-core (scripts/html_assets.sh installs it)
// and Debian's chromium (CHROMIUM overrides the path).
import path from 'node:path';
import { createRequire } from 'node:module';

const [page_path, out_dir, prefix = 'report'] = process.argv.slice(2);
if (!page_path || !out_dir) {
  console.error('usage: node scripts/html_screenshots.mjs PAGE.html OUTDIR [PREFIX]');
  process.exit(2);
}
const require = createRequire(path.join(path.dirname(new URL(import.meta.url).pathname), '../test/html/package.json'));
const puppeteer = require('puppeteer-core');
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto('file://' + path.resolve(page_path), { waitUntil: 'load' });
  await page.waitForSelector('#flame svg');
  const shot = async (selector, name) => {
    const el = await page.$(selector);
    if (!el) throw new Error(`${selector}: not on the page`);
    await el.screenshot({ path: path.join(out_dir, `${prefix}-${name}.png`) });
  };
  await shot('#timeline', 'timeline');
  await shot('#map', 'address-map');
  await shot('#flame', 'flame');
  await page.screenshot({ path: path.join(out_dir, `${prefix}-page.png`), fullPage: true });
} finally {
  await browser.close();
}
