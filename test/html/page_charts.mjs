// The page's charts in a real browser (Debian's chromium, headless, through puppeteer-core):
// many marks drawn as a band per name, one time range for the time charts, the address
// map's axis and legend, marker labels inside the plot.
//
// usage: node page_charts.mjs CLI PROG_RUNTIME SIM_DIR SCREENSHOT_DIR NVTX_STEPS
//
// The traces, made against the simulated driver (docs/simulated-driver.md) under
// `cumemtrace run` (so that NVTX ranges become marks):
//   test/integration/programs/nvtx_steps.c, 16 MiB of weights, then 500 steps of three
//   ranges (forward, backward, optimizer), each making and freeing 1 MiB, optimizer
//   keeping 4 KiB a step; its peak is the last step's optimizer (16 MiB + 499 × 4 KiB kept
//   + 1 MiB), a few events from the end.
//   test/programs/runtime_frag.cpp's frag5: 512 B at A, 2 MiB - 512 filler after it, a
//   1 GiB spacer at A + 2 MiB, 512 B at A + 2 MiB + 1 GiB: at the peak one arena of
//   1 GiB + 4 MiB (1,028 MiB), from A to the end of B's granule.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checks, drawn, launch_chromium, traced, watched_page } from './browser.mjs';

const [cli, prog, simDir, shots, stepsProg] = process.argv.slice(2);
if (!stepsProg) {
  console.error('usage: node page_charts.mjs CLI PROG_RUNTIME SIM_DIR SCREENSHOT_DIR NVTX_STEPS');
  process.exit(2);
}
const { check, finish } = checks();

const dir = mkdtempSync(path.join(tmpdir(), 'cumemtrace-charts-'));
const traceOf = {};
function page_of(name, args) {
  const sub = path.join(dir, name);
  traceOf[name] = traced(cli, simDir, sub, args);
  const out = path.join(sub, name + '.html');
  execFileSync(cli, ['html', traceOf[name], '-o', out], { stdio: 'ignore' });
  return out;
}
const stepsPage = page_of('steps', [stepsProg, '500']);
const fragPage = page_of('frag5', [prog, 'frag5', '-1']);

mkdirSync(shots, { recursive: true });
const browser = await launch_chromium();
try {
  const { page, errors } = await watched_page(browser);
  // uPlot redraws after a change once the page's pending tasks ran: a frame later, all done.
  const settle = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  // The timeline zoomed to the time of mark a to that of mark b (null: the whole time range).
  const zoom_to_marks = async (a, b) => {
    await page.evaluate((a, b) => {
      const v = window.cumemtraceView;
      const pv = v.data.processes[0].view;
      const [lo, hi] = a == null ? pv.time_range_ns : [pv.marks[a][0], pv.marks[b][0]];
      v.plot.setScale('x', { min: lo / 1e9, max: hi / 1e9 });
    }, a, b);
    await settle();
  };
  const open = async (file) => {
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    if (!(await drawn(page, 10000))) throw new Error(file + ': the page never finished drawing\n' + errors.join('\n'));
  };

  // ---- 1,500 marks: a band per name, not 1,500 rules ---------------------------------
  await open(stepsPage);
  const marks = await page.evaluate(() => {
    const v = window.cumemtraceView;
    const lay = v.markLayout;
    return { count: v.data.processes[0].view.marks.length, mode: lay.mode, width: v.plot.over.clientWidth,
      bands: lay.bands.map((b) => ({ name: b.name, count: b.count, row: b.row, ticks: b.ticks.length })) };
  });
  check(marks.count === 1500, 'the page keeps all 1,500 marks (500 steps × 3 ranges)', marks.count);
  check(marks.mode === 'bands', 'past 60 marks in view they are drawn as bands, not rules', marks.mode);
  check(JSON.stringify(marks.bands.map((b) => [b.name, b.count, b.row])) ===
    JSON.stringify([['forward', 500, 0], ['backward', 500, 1], ['optimizer', 500, 2]]),
    'one band per name, in the order first met, each counting its 500 marks', marks.bands);
  check(marks.bands.every((b) => b.ticks >= 1 && b.ticks <= marks.width),
    'each band draws at most one tick per pixel column', { bands: marks.bands, width: marks.width });
  await (await page.$('#timeline')).screenshot({ path: path.join(shots, 'charts-marks-bands.png') });

  // Hovering the backward band (row 1, 14 px each) at its first mark's x names backward's
  // marks only.
  const hover = await page.evaluate(() => {
    const v = window.cumemtraceView;
    const r = v.plot.over.getBoundingClientRect();
    const m = v.markLayout.shown.find((x) => x.name === 'backward');
    return { x: r.left + m.x, y: r.top + 14 + 7 };
  });
  await page.mouse.move(hover.x, hover.y);
  const tip = (await page.evaluate(() => document.getElementById('tip').textContent)).split('\n');
  check(tip.length >= 1 && tip.every((l) => /^mark backward at \d+\.\d{6} s$|^and \d+ more marks here \(zoom in\)$/.test(l)),
    'hovering the backward band names its marks', tip);

  // ---- one time range: both time charts, from the first memory event or mark to the last -
  const range = await page.evaluate(() => {
    const v = window.cumemtraceView;
    const pv = v.data.processes[0].view;
    const tl = pv.devices[0].timeline;
    return { range: pv.time_range_ns, firstEvent: tl.t[0], lastEvent: tl.t[tl.t.length - 1],
      firstMark: pv.marks[0][0], lastMark: pv.marks[pv.marks.length - 1][0],
      nvml: pv.devices[0].nvml.t, tl: [v.plot.scales.x.min, v.plot.scales.x.max],
      bands: [v.bands.plot.scales.x.min, v.bands.plot.scales.x.max],
      past: (document.getElementById('past-range') || {}).textContent || '' };
  });
  // The weights are made before the first NVTX push.
  const lo = range.firstEvent / 1e9, hi = Math.max(range.lastEvent, range.lastMark) / 1e9;
  check(range.firstEvent < range.firstMark && range.range[0] === range.firstEvent &&
    range.range[1] === Math.max(range.lastEvent, range.lastMark),
    'the time range runs from the first memory event or mark to the last', range);
  check(range.tl[0] === lo && range.tl[1] === hi && range.bands[0] === lo && range.bands[1] === hi,
    'the timeline and the call-site chart show that one range', range);
  const past = range.nvml.filter((t) => t < range.range[0] || t > range.range[1]).length;
  check(past >= 1 && range.past.startsWith(past + ' NVML reading'),
    'NVML\'s reading at exit lies outside the range: said, not drawn', range);

  // Zoomed to the first 10 marks: 10 rules, and the call-site chart zooms along.
  await zoom_to_marks(0, 9);
  const zoom = await page.evaluate(() => {
    const v = window.cumemtraceView;
    const ms = v.data.processes[0].view.marks;
    const min = ms[0][0] / 1e9, max = ms[9][0] / 1e9;
    return { min, max, tl: [v.plot.scales.x.min, v.plot.scales.x.max], mode: v.markLayout.mode,
      shown: v.markLayout.shown.map((m) => m.name).join(','),
      bands: [v.bands.plot.scales.x.min, v.bands.plot.scales.x.max] };
  });
  check(zoom.tl[0] === zoom.min && zoom.tl[1] === zoom.max && zoom.mode === 'rules' &&
    zoom.shown === 'forward,backward,optimizer,'.repeat(3) + 'forward', 'zoomed to 10 marks, each is a rule', zoom);
  check(zoom.bands[0] === zoom.min && zoom.bands[1] === zoom.max, 'the call-site chart zooms with the timeline', zoom);
  await page.evaluate(() => {
    const over = window.cumemtraceView.bands.plot.over;
    const r = over.getBoundingClientRect();
    over.dispatchEvent(new MouseEvent('dblclick', { bubbles: true, button: 0, clientX: r.left + 10, clientY: r.top + 10 }));
  });
  await settle();
  const reset = await page.evaluate(() => {
    const v = window.cumemtraceView;
    return [v.plot.scales.x.min, v.plot.scales.x.max, v.bands.plot.scales.x.min, v.bands.plot.scales.x.max];
  });
  check(reset.join() === [lo, hi, lo, hi].join(), 'a double-click on either chart resets both to the range', reset);

  // ---- the flame graph over a time range ---------------------------------------------
  // The whole range: its highest moment is the peak, by hand 16 MiB of weights + 1 MiB
  // scratch + 499 × 4 KiB kept = 19,869,696 B, at the report's peak time.
  const whole = await page.evaluate(() => {
    const v = window.cumemtraceView;
    const p = v.data.processes[0];
    return { tracked: v.rangeFlame.tracked, t: v.rangeFlame.t, root: v.rangeFlameTree.value,
      peakT: p.report.devices[0].peak.since_start_ns, says: document.getElementById('range-flame-says').textContent };
  });
  check(whole.tracked === 19869696 && whole.root === 19869696 && whole.t === whole.peakT,
    'over the whole range the flame graph is of the peak, 19,869,696 B', whole);
  check(whole.says.endsWith('18.9 MiB (19,869,696 B) tracked'), 'the page says the window\'s highest moment', whole.says);

  // Zoomed to the first 10 marks (a brush on the timeline): the window widens to whole
  // buckets and its highest moment is the timeline's highest sample there, or the state the
  // window starts with (the timeline keeps each of its buckets' highest exactly); the flame
  // graph's root is that many bytes; `export --format folded` of the same window agrees.
  await zoom_to_marks(0, 9);
  const part = await page.evaluate(() => {
    const v = window.cumemtraceView;
    const pv = v.data.processes[0].view;
    const ms = pv.marks;
    const h = v.rangeFlame;
    const tl = pv.devices[0].timeline;
    let before = 0, inside = 0;
    tl.t.forEach((t, i) => { if (t < h.from) before = tl.tracked[i]; else if (t < h.to) inside = Math.max(inside, tl.tracked[i]); });
    return { from: h.from, to: h.to, lo: ms[0][0], hi: ms[9][0], t: h.t, tracked: h.tracked, root: v.rangeFlameTree.value,
      expected: Math.max(before, inside), input: +document.getElementById('range-from').value };
  });
  check(part.from <= part.lo && part.to >= part.hi && part.input === part.lo / 1e9,
    'the brushed window is widened to whole buckets, the inputs follow the zoom', part);
  check(part.tracked === part.expected && part.root === part.tracked,
    'its flame graph is of the window\'s highest moment', part);
  const folded = execFileSync(cli, ['export', '--format', 'folded', traceOf.steps, '--from', (part.from / 1e9).toFixed(9) + ' s',
    '--to', ((part.to - 1) / 1e9).toFixed(9) + ' s']).toString();
  const foldedBytes = folded.split('\n').filter((l) => l.startsWith('cuda:0;')).reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  check(foldedBytes === part.tracked, 'export --format folded of the same window gives the same bytes', { foldedBytes, part });
  await zoom_to_marks(null, null);

  // ---- marker labels inside the plot: the peak is a few events from the right edge -------
  const labels = await page.evaluate(() => {
    const over = window.cumemtraceView.plot.over.getBoundingClientRect();
    return [...document.querySelectorAll('#timeline .marker span')].filter((s) => s.parentElement.style.display !== 'none')
      .map((s) => { const r = s.getBoundingClientRect(); return { text: s.textContent, in: r.left >= over.left && r.right <= over.right && r.top >= over.top && r.bottom <= over.bottom }; });
  });
  check(labels.length === 1 && labels[0].text === 'peak', 'the peak marker is drawn', labels);
  check(labels.every((l) => l.in), 'every marker label lies inside the plot (the peak\'s turns left at the edge)', labels);

  // ---- the address map: its axis and legend (frag5's peak) -------------------------------
  await open(fragPage);
  const map = await page.evaluate(() => {
    const canvas = document.getElementById('map-canvas').getBoundingClientRect();
    const ticks = [...document.querySelectorAll('#map-axis .map-tick')];
    return {
      rows: [...document.querySelectorAll('#map-rows .map-row')].map((e) => e.textContent),
      ticks: ticks.map((t) => t.textContent),
      inside: ticks.every((t) => { const r = t.getBoundingClientRect(); return r.left >= canvas.left - 0.5 && r.right <= canvas.right + 0.5; }),
      legend: [...document.querySelectorAll('#map-legend li')].map((e) => e.textContent),
    };
  });
  // One arena of 1,028 MiB: ticks 200 MiB apart (1, 2 or 5 × a power of ten, at most 6
  // intervals: 100 MiB would make 10).
  check(map.rows.length === 1 && map.rows[0] === '0x7f0000000000 · 1.00 GiB', 'the map\'s row names its arena\'s start and size', map.rows);
  check(map.ticks.join(',') === '0 MiB,200 MiB,400 MiB,600 MiB,800 MiB,1000 MiB', 'the map\'s axis: offsets in the arena', map.ticks);
  check(map.inside, 'every axis label lies within the map\'s width', map);
  // 514 granules in 720 px are too many to rule (more than one per 4 px): no rule, and no
  // legend entry for one.
  check(map.legend.length >= 2 && map.legend.slice(-2).join('|') ===
    ['gap: no allocation (granule padding, freed bytes)', 'the largest gap'].join('|'),
    'the legend says what gaps and the largest gap are', map.legend);
  check(map.legend.filter((l) => / \[.*\]: /.test(l)).map((l) => l.replace(/^.*\]: /, '')).join(' | ') ===
    '1.00 GiB (1,073,741,824 B) | 2.00 MiB (2,096,640 B) | 512 B (512 B) | 512 B (512 B)',
    'the legend names the call sites drawn, the largest first', map.legend);
  await (await page.$('#map')).screenshot({ path: path.join(shots, 'charts-address-map.png') });
  check(errors.length === 0, 'no script error', errors);
} finally {
  await browser.close();
}
finish();
