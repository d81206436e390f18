// The page's views of `report --view` in a real browser (Debian's chromium, headless,
// through puppeteer-core): the top-down and bottom-up trees, the call sites by number of
// allocations and by temporary allocations, the size histogram (docs/html-report.md,
// "Allocations").
//
// usage: node allocation_views.mjs CLI SIM_DIR SCREENSHOT_DIR HELPER_SITES NVTX_STEPS
//
// The traces, made against the simulated driver under `cumemtrace run`:
//   test/integration/programs/helper_sites.c: main calls load_weights (64 MiB, once),
//   then five times forward (32 MiB) and keep_history (8 MiB), each through alloc(), whose
//   cudaMalloc is the one call site line (helper_sites.c:26). 11 allocations, 64 + 5 × 32 +
//   5 × 8 = 264 MiB (276,824,064 B); forward's are freed after keep_history's allocation
//   came, so none is temporary.
//   test/integration/programs/nvtx_steps.c with 3 steps: 16 MiB of weights (line 20), then
//   per step three 1 MiB scratch buffers each freed at once (line 24: temporary, 9 of them)
//   and 4 KiB kept (line 25, 3 of them): 13 allocations.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checks, drawn, launch_chromium, traced, watched_page } from './browser.mjs';

const [cli, simDir, shots, helperProg, stepsProg] = process.argv.slice(2);
if (!stepsProg) {
  console.error('usage: node allocation_views.mjs CLI SIM_DIR SCREENSHOT_DIR HELPER_SITES NVTX_STEPS');
  process.exit(2);
}
const { check, finish } = checks();

const dir = mkdtempSync(path.join(tmpdir(), 'cumemtrace-alloc-views-'));
const trace_of = (name, args) => traced(cli, simDir, path.join(dir, name), args);
function page_of(trace, name, extra = []) {
  const out = path.join(dir, name + '.html');
  execFileSync(cli, ['html', trace, '-o', out, ...extra], { stdio: 'ignore' });
  return out;
}
const helper = trace_of('helper', [helperProg]);
const helperPage = page_of(helper, 'helper');
const helperTop1 = page_of(helper, 'helper-top1', ['--top', '1']);
const stepsPage = page_of(trace_of('steps', [stepsProg, '3']), 'steps');

// What a view shows, as text: a tree's lines (its own line, then its children's, indented
// two spaces a level), a table's rows, the histogram's bars.
function read_views() {
  const line = (li) => {
    const own = li.querySelector(':scope > details > summary, :scope > .leaf');
    return own ? own.textContent : li.textContent;
  };
  const lines = (ul, depth) => {
    const out = [];
    for (const li of ul.querySelectorAll(':scope > li')) {
      out.push('  '.repeat(depth) + line(li));
      const sub = li.querySelector(':scope > details > ul');
      if (sub) out.push(...lines(sub, depth + 1));
    }
    return out;
  };
  const tree = (id) => { const ul = document.querySelector('#' + id + ' > ul'); return ul ? lines(ul, 0) : []; };
  const rows = (id) => [...document.querySelectorAll('#' + id + ' tr')].slice(1)
    .map((tr) => [...tr.children].map((td) => td.textContent));
  const text = (id) => (document.getElementById(id) || {}).textContent;
  return {
    title: text('allocations-title'),
    tree: tree('alloc-tree'),
    callers: tree('alloc-callers'),
    top: rows('alloc-top'),
    topTitle: text('alloc-top-title'),
    temporary: rows('alloc-temporary'),
    temporaryTitle: text('alloc-temporary-title'),
    temporaryBox: text('alloc-temporary'),
    omitted: [...document.querySelectorAll('.omitted')].map((e) => e.textContent),
    sizesTitle: text('alloc-sizes-title'),
    bars: [...document.querySelectorAll('#alloc-sizes rect.size-bar')].map((r) =>
      [r.getAttribute('data-range'), +r.getAttribute('data-allocations'), +r.getAttribute('data-bytes'), +r.getAttribute('height')]),
    xTicks: [...document.querySelectorAll('#alloc-sizes svg g')].length ? [...document.querySelectorAll('#alloc-sizes svg g')][0].textContent : '',
    axisTitles: [...document.querySelectorAll('#alloc-sizes svg > text')].map((t) => t.textContent),
    legend: text('alloc-sizes') && [...document.querySelectorAll('#alloc-sizes .legend li')].map((e) => e.textContent),
  };
}

mkdirSync(shots, { recursive: true });
const browser = await launch_chromium();
try {
  const { page, errors } = await watched_page(browser);
  const open = async (file) => {
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    if (!(await drawn(page, 10000))) throw new Error(file + ': the page never finished drawing\n' + errors.join('\n'));
    return page.evaluate(read_views);
  };

  // ---- helper_sites: the trees, the ranking by count, the histogram --------------------
  const v = await open(helperPage);
  const all = '264.0 MiB (276,824,064 B), 11 allocations';
  check(v.title === 'Allocations over the whole run, all devices (report --view): 11 allocations, 264.0 MiB (276,824,064 B)',
    'the section heads with every allocation and their bytes', v.title);
  // Top-down: main made all; below it its three callees by bytes (forward 5 × 32 MiB, then
  // load_weights 64 MiB, keep_history 5 × 8 MiB), each with alloc below it.
  check(JSON.stringify(v.tree) === JSON.stringify([
    'main [helper_sites]: ' + all,
    '  forward [helper_sites]: 160.0 MiB (167,772,160 B), 5 allocations',
    '    alloc [helper_sites]: 160.0 MiB (167,772,160 B), 5 allocations',
    '  load_weights [helper_sites]: 64.0 MiB (67,108,864 B), 1 allocation',
    '    alloc [helper_sites]: 64.0 MiB (67,108,864 B), 1 allocation',
    '  keep_history [helper_sites]: 40.0 MiB (41,943,040 B), 5 allocations',
    '    alloc [helper_sites]: 40.0 MiB (41,943,040 B), 5 allocations']), 'the top-down tree: main, then its callees by bytes', v.tree);
  // Bottom-up: the one call-site frame, alloc; below it its callers by bytes, main below each.
  check(JSON.stringify(v.callers) === JSON.stringify([
    'alloc [helper_sites]: ' + all,
    '  forward [helper_sites]: 160.0 MiB (167,772,160 B), 5 allocations',
    '    main [helper_sites]: 160.0 MiB (167,772,160 B), 5 allocations',
    '  load_weights [helper_sites]: 64.0 MiB (67,108,864 B), 1 allocation',
    '    main [helper_sites]: 64.0 MiB (67,108,864 B), 1 allocation',
    '  keep_history [helper_sites]: 40.0 MiB (41,943,040 B), 5 allocations',
    '    main [helper_sites]: 40.0 MiB (41,943,040 B), 5 allocations']), 'the bottom-up tree: alloc, then its callers by bytes', v.callers);
  // By count: forward's and keep_history's five each, forward first (more bytes), then load_weights.
  const topRows = v.top.map((r) => r.slice(0, 4).concat([r[4].split('\n')[1] || '']));
  check(JSON.stringify(topRows) === JSON.stringify([
    ['1', '5', '160.0 MiB (167,772,160 B)', 'alloc at helper_sites.c:26', topRows[0] && topRows[0][4]],
    ['2', '5', '40.0 MiB (41,943,040 B)', 'alloc at helper_sites.c:26', topRows[1] && topRows[1][4]],
    ['3', '1', '64.0 MiB (67,108,864 B)', 'alloc at helper_sites.c:26', topRows[2] && topRows[2][4]]]) &&
    /^forward/.test(topRows[0][4]) && /^keep_history/.test(topRows[1][4]) && /^load_weights/.test(topRows[2][4]),
  'call sites by number of allocations: forward\'s 5, keep_history\'s 5, load_weights\'s 1, each with its stack', topRows);
  // Each ranked stack ends at main: libc's start-up frames below it are folded, as in the
  // text views (before: __libc_start_call_main, __libc_start_main and _start ended each).
  const lastFrames = v.top.map((r) => r[4].trim().split('\n').pop());
  check(lastFrames.length === 3 && lastFrames.every((l) => /^main at \S*\/helper_sites\.c:\d+ \(helper_sites\)$/.test(l)),
    'the ranked stacks end at main: libc\'s start-up frames folded', lastFrames);
  check(v.temporaryTitle === 'Temporary allocations, freed before any other allocation was made: 0 of 11 allocations' &&
    v.temporaryBox === 'none', 'no allocation of helper_sites is temporary', [v.temporaryTitle, v.temporaryBox]);
  // Sizes: 8 MiB × 5 in 2^23, none in 2^24, 32 MiB × 5 in 2^25, 64 MiB × 1 in 2^26.
  check(JSON.stringify(v.bars.map((b) => b.slice(0, 3))) === JSON.stringify([
    ['8 MiB to 16 MiB', 5, 41943040], ['16 MiB to 32 MiB', 0, 0], ['32 MiB to 64 MiB', 5, 167772160],
    ['64 MiB to 128 MiB', 1, 67108864]]), 'the histogram: a bar per range from the smallest size\'s to the largest\'s', v.bars);
  check(v.bars.length === 4 && v.bars[0][3] === v.bars[2][3] && v.bars[1][3] === 0 && Math.abs(v.bars[3][3] * 5 - v.bars[0][3]) < 0.01,
    'bars as tall as their counts (5, 0, 5, 1)', v.bars.map((b) => b[3]));
  check(v.xTicks === '8 MiB16 MiB32 MiB64 MiB', 'the size axis names each bar\'s lower bound', v.xTicks);
  check(JSON.stringify(v.axisTitles) === JSON.stringify(['allocation size (each bar: from its size up to twice it)', 'allocations']),
    'both axes say what they measure', v.axisTitles);
  check(v.legend.length === 1 && v.legend[0].startsWith('allocations whose size lies in the bar\'s range'), 'the histogram has a legend', v.legend);
  for (const [id, name] of [['alloc-tree', 'tree'], ['alloc-callers', 'callers'], ['alloc-top', 'top'], ['alloc-sizes', 'sizes']])
    await (await page.$('#' + id)).screenshot({ path: path.join(shots, 'alloc-views-' + name + '.png') });

  // ---- --top 1: one row or child each, the rest counted -------------------------------
  const t1 = await open(helperTop1);
  check(JSON.stringify(t1.tree) === JSON.stringify(['main [helper_sites]: ' + all,
    '  forward [helper_sites]: 160.0 MiB (167,772,160 B), 5 allocations',
    '    alloc [helper_sites]: 160.0 MiB (167,772,160 B), 5 allocations',
    '  ... and 2 more frames (--top)']), '--top 1: the tree keeps one child a node and counts the others', t1.tree);
  check(t1.top.length === 1 && t1.omitted.includes('... and 2 more call sites (--top)'),
    '--top 1: one call site by count, two counted', { top: t1.top, omitted: t1.omitted });

  // ---- nvtx_steps, 3 steps: temporary allocations ---------------------------------------
  const s = await open(stepsPage);
  check(s.temporaryTitle === 'Temporary allocations, freed before any other allocation was made: 9 of 13 allocations',
    'nvtx_steps: 9 of its 13 allocations are temporary', s.temporaryTitle);
  check(JSON.stringify(s.temporary.map((r) => r.slice(0, 5))) ===
    JSON.stringify([['1', '9', '9', '9.00 MiB (9,437,184 B)', 'main at nvtx_steps.c:24']]),
  'the one temporary site: the scratch buffers, all 9 of its allocations', s.temporary);
  check(JSON.stringify(s.top.map((r) => r.slice(0, 4))) === JSON.stringify([
    ['1', '9', '9.00 MiB (9,437,184 B)', 'main at nvtx_steps.c:24'],
    ['2', '3', '12.0 KiB (12,288 B)', 'main at nvtx_steps.c:25'],
    ['3', '1', '16.0 MiB (16,777,216 B)', 'main at nvtx_steps.c:20']]), 'nvtx_steps by count: scratch, kept, weights', s.top);
  check(s.bars.length === 13 && JSON.stringify(s.bars[0].slice(0, 3)) === JSON.stringify(['4 KiB to 8 KiB', 3, 12288]) &&
    JSON.stringify(s.bars[8].slice(0, 3)) === JSON.stringify(['1 MiB to 2 MiB', 9, 9437184]),
  'nvtx_steps\'s sizes: 4 KiB × 3 first, 1 MiB × 9 nine ranges on, 13 ranges to 16 MiB', s.bars);
  await (await page.$('#alloc-temporary')).screenshot({ path: path.join(shots, 'alloc-views-temporary.png') });
  check(errors.length === 0, 'no script error', errors);
} finally {
  await browser.close();
}
finish();
