// cumemtrace html: draws the page from the JSON blob (docs/html-report.md). The timeline
// is uPlot's, the icicles d3-flame-graph's; the parts before this one in the page's script
// (view/html/CMakeLists.txt) give the shared pieces (lib.js), the marks (marks.js), the
// one time range (time_range.js), the address map (address_map.js, a canvas: no charting
// library draws arenas of granules), the flame graphs' trees (range_flame.js) and the views
// of `report --view` (allocation_views.js).
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('cumemtrace-data').textContent);
  const app = document.getElementById('app');
  const state = { proc: 0, device: null, moment: null };
  const exposed = (window.cumemtraceView = { data, state });

  const { exact, secs, pct, el, frameText, showTip, hideTip, secondsTicks, byteIncrs, bytesTicks, axisWidth } =
    window.cumemtraceLib;

  const proc = () => data.processes[state.proc];
  const view = () => proc().view;
  const report = () => proc().report;
  const devView = () => view().devices.find((d) => d.device === state.device) || null;
  const repDev = () => report().devices.find((d) => d.device === state.device) || null;

  // ---- layout ----------------------------------------------------------------------
  function render() {
    app.textContent = '';
    if (state.plot) { state.plot.destroy(); state.plot = null; }
    if (state.bandsPlot) { state.bandsPlot.destroy(); state.bandsPlot = null; }
    state.rangeInputs = null;
    const r = report();
    app.append(el('h1', { text: 'cumemtrace: ' + (data.job ? 'a job of ' + data.processes.length + ' processes'
      : r.trace && r.trace.path ? r.trace.path : 'trace') }));
    jobSection();
    const controls = el('div', { class: 'controls' });
    const ps = el('select', { id: 'process' });
    data.processes.forEach((p, i) => {
      const pr = p.report.process;
      ps.append(el('option', { value: i, text: (pr ? 'pid ' + pr.pid + ' ' : '') + (p.report.trace ? p.report.trace.path : '#' + i) }));
    });
    ps.value = state.proc;
    ps.onchange = () => { state.proc = +ps.value; state.device = null; state.moment = null; render(); };
    controls.append(el('label', { text: 'Process ' }, ps));
    const devs = view().devices.map((d) => d.device);
    if (state.device == null || !devs.includes(state.device)) state.device = devs.length ? devs[0] : null;
    const ds = el('select', { id: 'device' });
    devs.forEach((d) => ds.append(el('option', { value: d, text: 'device ' + d })));
    ds.value = state.device;
    ds.onchange = () => { state.device = +ds.value; state.moment = null; render(); };
    controls.append(el('label', { text: 'Device ' }, ds));
    app.append(controls);
    summarySection();
    growthSection();
    if (state.device == null) { app.append(el('p', { text: 'No device memory in this trace.' })); tables(); return; }
    if (state.moment == null) state.moment = defaultMoment();
    timeline();
    siteBands();
    momentSection();
    tables();
    window.cumemtraceAllocationViews.draw(app, view().allocations, Math.max(600, app.clientWidth - 20), { table, frames });
  }

  // The peak of the chosen device, else the end.
  function defaultMoment() {
    const ms = view().moments;
    const i = ms.findIndex((m) => m.kind.split(',').includes('peak') && m.device === state.device);
    return i >= 0 ? i : ms.length - 1;
  }



  // ---- timeline --------------------------------------------------------------------
  function timeline() {
    const dv = devView();
    const rd = repDev();
    app.append(el('h2', { text: 'Timeline, device ' + state.device }));
    app.append(el('p', { class: 'note', text: 'Drag to zoom, wheel to zoom, shift+wheel to pan, double-click to reset. ' +
      'Click to show the address map and flame graph at the nearest kept moment (' + view().moments.length + ' kept). ' +
      'Samples: each screen bucket keeps its lowest, highest and last figure, exact.' }));
    const box = el('div', { id: 'timeline' });
    app.append(box);
    const tl = dv.timeline;
    const s = (a) => a.map((t) => t / 1e9);
    const tables = [[s(tl.t), tl.tracked, tl.footprint, tl.context], [s(dv.nvml.t), dv.nvml.used]];
    // A caching allocator's own figures, where the trace has its blocks: the tensors inside
    // the segments that the tracked bytes show.
    if (dv.cache) tables.push([s(dv.cache.t), dv.cache.allocated, dv.cache.reserved]);
    const joined = uPlot.join(tables);
    const fmt = (u, v) => (v == null ? '—' : exact(v));
    const stepped = uPlot.paths.stepped({ align: 1 });
    const marks = view().marks;
    const TR = window.cumemtraceTimeRange, M = window.cumemtraceMarks;
    const range = view().time_range_ns;
    const past = dv.nvml.t.filter((t) => t < range[0] || t > range[1]).length;
    if (past) app.append(el('p', { class: 'note', id: 'past-range', text: past + ' NVML reading' + (past > 1 ? 's' : '') +
      ' before the first or after the last memory event or mark (at exit) ' + (past > 1 ? 'lie' : 'lies') +
      ' outside the time range, not drawn.' }));
    state.timeGroup = TR.group();
    const opts = {
      width: Math.max(600, app.clientWidth - 20), height: 300,
      scales: { x: { time: false, range: TR.clamp(range, joined[0][0], joined[0][joined[0].length - 1]) } },
      cursor: { sync: { key: 'time' } },
      axes: [
        { label: 'seconds since start', values: secondsTicks },
        { values: bytesTicks, incrs: byteIncrs, size: axisWidth, label: 'tracked' },
        { scale: 'process', side: 1, values: bytesTicks, incrs: byteIncrs, size: axisWidth, grid: { show: false }, label: 'context and NVML' },
      ],
      series: [
        { label: 'time', value: (u, v) => (v == null ? '—' : v.toFixed(6) + ' s') },
        { label: 'tracked device bytes', stroke: '#1f77b4', width: 1.5, paths: stepped, value: fmt, spanGaps: true },
        { label: 'granule footprint', stroke: '#ff7f0e', width: 1, paths: stepped, value: fmt, spanGaps: true },
        // The process's whole memory on an axis of its own (right): a 512 MiB context would
        // otherwise set the scale and lay the tracked bytes flat on 0.
        { label: 'context', stroke: '#2ca02c', width: 1, paths: stepped, value: fmt, spanGaps: true, scale: 'process' },
        { label: 'NVML process usage', stroke: '#9467bd', width: 1, value: fmt, spanGaps: true, scale: 'process', points: { show: true, size: 4 } },
      ].concat(dv.cache ? [
        { label: 'allocated inside ' + dv.cache.allocator + "'s cache", stroke: '#d62728', width: 1.5, paths: stepped, value: fmt, spanGaps: true },
        { label: 'reserved by ' + dv.cache.allocator + "'s cache", stroke: '#d62728', dash: [4, 3], width: 1, paths: stepped, value: fmt, spanGaps: true },
      ] : []),
      hooks: {
        setScale: [state.timeGroup.hook, (uu, key) => {
          if (key !== 'x' || !state.rangeInputs) return;
          state.rangeInputs.from.value = uu.scales.x.min;
          state.rangeInputs.to.value = uu.scales.x.max;
          drawRangeFlame(uu.scales.x.min * 1e9, uu.scales.x.max * 1e9);
        }],
        draw: [(u) => {
          // Marks in CSS px of the plot: a few as rules, many as a band per name (marks.js).
          const { min, max } = u.scales.x;
          const w = u.bbox.width / devicePixelRatio;
          const lay = M.layout(marks, (t) => (t / 1e9 < min || t / 1e9 > max ? null : ((t / 1e9 - min) / (max - min)) * w));
          M.draw(u.ctx, lay, u.bbox, devicePixelRatio);
          exposed.markLayout = lay;
          placeMarkers(u);
        }],
      },
    };
    const u = new uPlot(opts, joined, box);
    state.plot = u;
    exposed.plot = u;
    state.timeGroup.add(u);
    // Markers as elements over the plot: a test (and a person's inspector) can find them.
    const markers = [];
    if (rd && rd.peak && rd.peak.time_ns != null) {
      const t = rd.peak.time_ns - view().start_ns;
      const m = el('div', { class: 'marker peak', id: 'peak-marker', 'data-t-ns': t, title: 'peak ' + exact(rd.peak.device_bytes) + ' at ' + secs(t) }, el('span', { text: 'peak' }));
      markers.push([m, t]);
    }
    dv.failed.slice(0, 200).forEach((t) => {
      markers.push([el('div', { class: 'marker failed', 'data-t-ns': t, title: 'failed allocation at ' + secs(t) }, el('span', { text: '✕' })), t]);
    });
    for (const [m] of markers) u.over.append(m);
    u.over.addEventListener('mousemove', (ev) => {
      const near = M.under(exposed.markLayout, ev.offsetX, ev.offsetY);
      if (near.length) showTip(ev, M.describe(near, secs)); else hideTip();
    });
    u.over.addEventListener('mouseleave', hideTip);
    // A marker's label reads to the right of its rule, or to the left where it would pass
    // the plot's right edge; failures' labels sit a row below the peak's.
    function placeMarkers(uu) {
      const w = uu.over.clientWidth;
      for (const [m, t] of markers) {
        const x = uu.valToPos(t / 1e9, 'x');
        m.style.display = x < 0 || x > w ? 'none' : '';
        m.style.left = x + 'px';
        const label = m.firstChild;
        label.classList.toggle('left', x + 4 + label.offsetWidth > w);
      }
    }
    placeMarkers(u);
    u.over.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const { min, max } = u.scales.x;
      const span = max - min;
      if (ev.shiftKey) {
        const d = span * 0.1 * Math.sign(ev.deltaY || ev.deltaX);
        u.setScale('x', { min: min + d, max: max + d });
      } else {
        const at = u.posToVal(ev.offsetX, 'x');
        const k = ev.deltaY < 0 ? 0.8 : 1.25;
        u.setScale('x', { min: at - (at - min) * k, max: at + (max - at) * k });
      }
    });
    let down = null;
    u.over.addEventListener('mousedown', (ev) => { down = ev.clientX; });
    u.over.addEventListener('mouseup', (ev) => {
      if (down == null || Math.abs(ev.clientX - down) > 3) return;
      const t = u.posToVal(ev.offsetX, 'x') * 1e9;
      let best = 0;
      view().moments.forEach((m, i) => { if (Math.abs(m.t - t) < Math.abs(view().moments[best].t - t)) best = i; });
      state.moment = best;
      document.getElementById('moment').value = best;
      drawMoment();
    });
  }

  // ---- live bytes by call site (stacked) ------------------------------------------------
  // As memory_viz's active memory timeline: the report's top call sites at the device's
  // peak, each a band, and "other" (the tracked bytes no band holds) on top; the bands of a
  // moment sum to its tracked bytes. A click on a band shows that site's stack.
  const bandColors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  function siteBands() {
    const dv = devView();
    const tl = dv.timeline;
    if (!tl.bands || !dv.band_sites) return;
    const sites = dv.band_sites;
    app.append(el('h2', { text: 'Live bytes by call site, device ' + state.device }));
    app.append(el('p', { class: 'note', text: 'The ' + sites.length + ' call sites that held the most at the peak (the ' +
      'report\'s table there), and all the rest as "other", stacked. Click a band for its stack.' }));
    const box = el('div', { id: 'bands' });
    app.append(box);
    const stackBox = el('pre', { id: 'band-stack', class: 'note' });
    app.append(stackBox);
    const names = sites.map((st) => st.label).concat(['other']);
    // Cumulative from the bottom: series k is bands 0..k, drawn top first so each lower one
    // paints over it.
    const cum = [];
    tl.bands.forEach((b, k) => cum.push(b.map((v, i) => v + (k ? cum[k - 1][i] : 0))));
    const order = cum.map((_, k) => cum.length - 1 - k);
    const own = (k, i) => (tl.bands[k][i] == null ? null : tl.bands[k][i]);
    const opts = {
      width: Math.max(600, app.clientWidth - 20), height: 260,
      // The timeline's range and zoom (time_range.js), its hover too.
      scales: { x: { time: false, range: window.cumemtraceTimeRange.clamp(view().time_range_ns, tl.t[0] / 1e9, tl.t[tl.t.length - 1] / 1e9) } },
      cursor: { sync: { key: 'time' } },
      hooks: { setScale: [state.timeGroup.hook] },
      axes: [{ label: 'seconds since start', values: secondsTicks }, { values: bytesTicks, incrs: byteIncrs, size: axisWidth }],
      series: [{ label: 'time', value: (u, v) => (v == null ? '—' : v.toFixed(6) + ' s') }].concat(order.map((k) => ({
        label: names[k],
        stroke: k < sites.length ? bandColors[k % bandColors.length] : '#999',
        fill: k < sites.length ? bandColors[k % bandColors.length] + 'cc' : '#cccccc',
        width: 1,
        paths: uPlot.paths.stepped({ align: 1 }),
        value: (u, v, si, i) => (i == null ? '—' : exact(own(k, i))),
      }))),
    };
    const u = new uPlot(opts, [tl.t.map((t) => t / 1e9)].concat(order.map((k) => cum[k])), box);
    state.bandsPlot = u;
    state.timeGroup.add(u);
    exposed.bands = { plot: u, names, own: tl.bands, tracked: tl.tracked, sites };
    u.over.addEventListener('click', (ev) => {
      const i = u.posToIdx(ev.offsetX);
      const y = u.posToVal(ev.offsetY, 'y');
      let k = cum.findIndex((c) => y <= c[i]);
      if (k < 0) k = cum.length - 1;
      const site = sites[k];
      stackBox.textContent = names[k] + ': ' + exact(own(k, i)) + ' live at ' + (tl.t[i] / 1e9).toFixed(6) + ' s\n' +
        (site ? (site.library ? site.library + '\n' : '') + site.frames.map((f) => '  ' + f).join('\n')
              : '  the tracked bytes no band above holds');
      exposed.bandClicked = k;
    });
  }

  // ---- moment: address map and flame graph ----------------------------------------------
  function momentLabel(m, i) {
    return '#' + i + ' ' + m.kind.replace('spaced', 'sample') + (m.device >= 0 ? ' d' + m.device : '') + ' at ' + secs(m.t);
  }
  function momentSection() {
    app.append(el('h2', { text: 'Address map and flame graph at a moment' }));
    const sel = el('select', { id: 'moment' });
    view().moments.forEach((m, i) => sel.append(el('option', { value: i, text: momentLabel(m, i) })));
    sel.value = state.moment;
    sel.onchange = () => { state.moment = +sel.value; drawMoment(); };
    app.append(el('div', { class: 'controls' }, el('label', { text: 'Moment ' }, sel),
      el('span', { class: 'note', text: 'Only these moments are kept in the page: each device\'s peak, the end (leaks), ' +
        'the first failed allocations, and moments evenly spaced in event order.' })));
    app.append(el('div', { class: 'mapwrap' }, el('div', { id: 'map' }), el('dl', { class: 'figures', id: 'map-figures' })));
    app.append(el('h3', { id: 'flame-title' }));
    const all = el('input', { type: 'checkbox', id: 'all-frames' });
    all.checked = !!state.allFrames;
    all.onchange = () => {
      state.allFrames = all.checked;
      drawMoment();
      if (state.rangeInputs) drawRangeFlame(+state.rangeInputs.from.value * 1e9, +state.rangeInputs.to.value * 1e9);
    };
    app.append(el('div', { class: 'controls' }, el('label', null, all,
      document.createTextNode(' show every frame (the interpreter\'s, framework dispatch\'s, allocators\', CUDA\'s, ' +
        'and Python frames of the standard library and installed packages are folded away by default)'))));
    app.append(el('div', { id: 'flame' }));
    drawMoment();
    rangeFlameSection();
  }

  // ---- flame graph over a time range (range_flame.js) -----------------------------------
  // The window follows the timeline's zoom (drag on the timeline to choose it) or the two
  // inputs; the page snaps it outwards to its buckets and says so.
  function rangeFlameSection() {
    const rf = view().range_flame;
    if (!rf) return;
    app.append(el('h3', { id: 'range-flame-title', text: 'Flame graph over a time range, device ' + state.device +
      ': the bytes live at the range\'s highest moment' }));
    const from = el('input', { type: 'number', id: 'range-from', step: 'any', min: 0 });
    const to = el('input', { type: 'number', id: 'range-to', step: 'any', min: 0 });
    const go = () => drawRangeFlame(+from.value * 1e9, +to.value * 1e9);
    from.onchange = go; to.onchange = go;
    app.append(el('div', { class: 'controls' }, el('label', { text: 'from ' }, from), el('label', { text: 'to ' }, to),
      el('span', { class: 'note', text: 'seconds since start; zooming the timeline sets them. The range is widened to whole ' +
        'buckets of ' + secs(rf.bucket_ns) + ' (' + rf.buckets + ' in all); its highest moment is found from every event.' })));
    app.append(el('p', { class: 'note', id: 'range-flame-says' }));
    app.append(el('div', { id: 'range-flame' }));
    state.rangeInputs = { from, to };
    const [lo, hi] = view().time_range_ns;
    from.value = lo / 1e9; to.value = hi / 1e9;
    go();
  }
  function drawRangeFlame(fromNs, toNs) {
    const RF = window.cumemtraceRangeFlame;
    const box = document.getElementById('range-flame');
    const says = document.getElementById('range-flame-says');
    if (!box) return;
    box.textContent = '';
    const h = RF.highest(view().range_flame, state.device, fromNs, toNs);
    exposed.rangeFlame = h;
    if (!h || !h.tracked) {
      says.textContent = 'No device memory live in ' + secs(h ? h.from : fromNs) + ' – ' + secs(h ? h.to : toNs) + '.';
      return;
    }
    says.textContent = secs(h.from) + ' – ' + secs(h.to) + ': highest at ' + secs(h.t) + ', ' + exact(h.tracked) + ' tracked';
    const folds = state.allFrames ? [] : view().label_folds || [];
    const root = RF.node(view().range_flame.paths, h.live);
    exposed.rangeFlameTree = RF.icicle(root, view().labels, folds, 'live at ' + secs(h.t));
    RF.draw(box, exposed.rangeFlameTree, Math.max(600, app.clientWidth - 20));
  }

  function drawMoment() {
    const m = view().moments[state.moment];
    const md = m && m.devices.find((d) => d.device === state.device);
    drawMap(m, md);
    drawFlame(m, md);
  }

  function drawMap(m, md) {
    const figs = document.getElementById('map-figures');
    figs.textContent = '';
    exposed.mapRects = window.cumemtraceAddressMap.draw(document.getElementById('map'), m, md, view());
    if (!md) return;
    const add = (k, v, id) => { figs.append(el('dt', { text: k }), el('dd', id ? { id, text: v } : { text: v })); };
    add('moment', momentLabel(m, state.moment));
    add('tracked device bytes', exact(md.tracked));
    add('live allocations', md.live_count + ' (' + exact(md.live_bytes) + ')');
    add('arenas', String(md.arena_count), 'map-arenas');
    add('arena bytes (footprint)', exact(md.arena_bytes));
    add('gap bytes', exact(md.gap_bytes));
    add('largest gap', exact(md.largest_gap), 'map-largest-gap');
    add('gap ratio', pct(md.gap_ratio));
    add('external fragmentation', pct(md.external_fragmentation));
    add('granule', exact(md.granule));
  }

  function drawFlame(m, md) {
    const box = document.getElementById('flame');
    box.textContent = '';
    const title = document.getElementById('flame-title');
    const what = !m ? '' : m.kind.includes('end') ? 'leaks: live at the end' : m.kind.includes('failed') ? 'live at a failed allocation' : 'live bytes';
    title.textContent = 'Flame graph (icicle), ' + what + ', device ' + state.device + ' — click a frame to zoom';
    if (!md || !md.flame[1]) { box.append(el('p', { text: 'No live bytes.' })); return; }
    const RF = window.cumemtraceRangeFlame;
    const folds = state.allFrames ? [] : view().label_folds || [];
    const chart = RF.draw(box, RF.icicle(md.flame, view().labels, folds, 'all live bytes'), Math.max(600, app.clientWidth - 20));
    exposed.flame = chart;
  }

  // ---- several traces: the job (report's job view) ----------------------------------------
  function jobSection() {
    const job = data.job;
    if (!job) return;
    app.append(el('h2', { text: 'Job: ' + job.processes.length + ' processes' +
      (job.job_ids && job.job_ids.length ? ', ' + job.job_ids.filter((x) => x).join(', ') : '') }));
    app.append(table('job-processes', ['rank', 'host', 'pid', 'own device', 'its peak', 'leaked', 'held at exit', 'failed'],
      job.processes.map((p) => [p.rank >= 0 ? String(p.rank) : '-', p.host, p.pid,
        p.own_device >= 0 ? 'device ' + p.own_device : '-', exact(p.own_peak_bytes),
        p.leaked_bytes == null ? 'unknown' : exact(p.leaked_bytes),
        p.held_by_cache_at_exit_bytes == null ? '—' : exact(p.held_by_cache_at_exit_bytes), p.failed])));
    app.append(el('h3', { text: 'GPUs' }));
    app.append(table('job-gpus', ['GPU', 'host', 'name', 'total', 'peaks add up to', 'processes'],
      job.gpus.map((g) => [g.uuid || '(no UUID)', g.host, g.name || '?', exact(g.total_bytes), exact(g.peak_sum_bytes),
        g.processes.length])));
    const head = job.compared_ranks >= 2
      ? 'Findings (rank tolerance ' + job.tolerance_percent + ' % of the median peak ' + exact(job.median_peak_bytes) + ')'
      : 'Findings (ranks not compared: ' + job.ranked_processes + ' of ' + job.processes.length + ' processes have a rank)';
    app.append(el('h3', { text: head }));
    const list = el('ul', { id: 'job-findings' });
    if (!job.findings.length) list.append(el('li', { text: 'none' }));
    for (const f of job.findings) list.append(el('li', { class: 'finding', text: f.kind + ': ' + f.message }));
    app.append(list);
  }

  // The answer first: the report's Summary of the process shown, its very lines (`report`
  // prints them under "Summary"), before any chart.
  function summarySection() {
    app.append(el('h2', { id: 'summary-title', text: 'Summary' }));
    const list = el('ul', { id: 'summary' });
    for (const line of view().summary || []) list.append(el('li', { text: line }));
    app.append(list);
  }

  // The report's growth table (docs/cli.md, "Growth across iterations") under the Summary:
  // each call site's class across the iterations, the largest growth per iteration first.
  function growthSection() {
    const g = report().growth;
    if (!g || !g.sites.length) return;
    app.append(el('h2', { id: 'growth-title',
      text: 'Growth across iterations (' + g.iterations + ' iterations, found by ' + g.found_by + ')' }));
    app.append(sortable('growth', [['class', (x) => x.class], ['call site', (x) => x.site], ['device', (x) => x.device],
      ['what', (x) => (x.inside ? 'tensors inside ' + x.inside + "'s cache" : x.kind)], ['per iteration', (x) => x.growth_per_iteration, (v) => (v ? '+' + exact(v) : '')],
      ['at the last boundary', (x) => x.live_bytes_end, exact], ['made within', (x) => x.allocations_within],
      ['stack', () => 0, (v, x) => frames(x)]], g.sites, 4));
  }

  // ---- tables -----------------------------------------------------------------------
  function table(id, head, rows) {
    const t = el('table', { id });
    t.append(el('tr', null, ...head.map((h) => el('th', { text: h }))));
    for (const r of rows) t.append(el('tr', null, ...r.map((c) => (c instanceof Node ? el('td', null, c) : el('td', typeof c === 'number' ? { class: 'num', text: c.toLocaleString('en-US') } : { text: c })))));
    return t;
  }
  // A call site's stack in a table: at most --frames Python frames (the JSON keeps them all)
  // before its native frames (already at most --frames, libc's start-up frames folded as the
  // text views fold them), then how many were left out.
  function frames(s) {
    const max = data.frames || Infinity;
    const py = s.python_frames || [];
    const shown = [...py.slice(0, max), ...(s.frames || []).filter((f) => !f.startup)].map(frameText);
    if (py.length > max) shown.splice(max, 0, '... ' + (py.length - max) + ' more Python frames (--frames)');
    return el('pre', { class: 'stack', text: shown.join('\n') || '(no stack recorded)' });
  }
  // A call site's name by the one call-site rule, with the caller that tells it apart
  // (docs/cli.md, "Call sites in the user's terms"): the report's `site`.
  function site(s) {
    return s.site || '';
  }
  function tables() {
    const r = report();
    const rd = repDev();
    if (rd) {
      app.append(el('h2', { text: 'Top call sites at the peak, device ' + state.device }));
      app.append(table('sites-table', ['bytes', 'count', 'kind', 'library', 'site', 'stack'],
        rd.top_call_sites.map((s) => [exact(s.bytes), s.count, s.kind, s.library, site(s), frames(s)])));
    }
    if (r.held_by_cache_at_exit && r.held_by_cache_at_exit.length) {
      app.append(el('h2', { text: 'Held by caching allocators at exit (kept by design, not leaks)' }));
      const heldRows = [];
      for (const g of r.held_by_cache_at_exit) for (const s of g.call_sites) heldRows.push([g.allocator, exact(s.bytes), s.count, 'device ' + s.device, s.library, site(s), frames(s)]);
      app.append(table('held-table', ['allocator', 'bytes', 'count', 'device', 'library', 'site', 'stack'], heldRows));
    }
    app.append(el('h2', { text: 'Possible leaks (live at the end, not held by a caching allocator)' }));
    const leakRows = [];
    for (const g of r.leaks) for (const s of g.call_sites) leakRows.push([g.kind, exact(s.bytes), s.count, 'device ' + s.device, s.library, site(s), frames(s)]);
    app.append(table('leaks-table', ['kind', 'bytes', 'count', 'device', 'library', 'site', 'stack'], leakRows));
    app.append(el('h2', { text: 'Failed allocations (' + r.failed_allocations_total + ')' }));
    app.append(table('failed-table', ['at', 'device', 'size', 'api / result', 'diagnosis', 'site', 'stack'],
      r.failed_allocations.map((f) => [secs(f.since_start_ns) + (f.count > 1 ? ' ×' + f.count : ''), f.device, exact(f.size),
        f.api + ' → ' + f.result_name, f.diagnosis.cause + ': ' + f.diagnosis.summary + (f.diagnosis.advice ? '\n' + f.diagnosis.advice : ''), site(f), frames(f)])));
    app.append(el('h2', { text: 'Contexts' }));
    app.append(table('contexts-table', ['at', 'device', 'bytes', 'api', 'library', 'stack'],
      r.contexts.map((c) => [secs(c.since_start_ns), c.device, exact(c.bytes), c.api, c.library, frames(c)])));
    // report --by range's rows (docs/cli.md, "Memory per range"), sortable by a click on a heading.
    if (r.by_range && r.by_range.length) {
      app.append(el('h2', { text: 'Memory per range (NVTX ranges, tags, marks)' }));
      notWhole(r, 'by_range');
      app.append(sortable('ranges', [['range', (x) => x.name], ['kind', (x) => x.kind],
        ['calls', (x) => x.calls, (v, x) => (x.open_at_end ? v + ' (' + x.open_at_end + ' open)' : v)],
        ['allocations', (x) => x.allocations], ['allocated', (x) => x.bytes_allocated, exact],
        ['peak inside', (x) => x.peak_bytes, exact], ['held after', (x) => x.held_after_bytes, exact],
        ['time inside', (x) => x.time_ns, secs]], r.by_range, 4));
      omitted(r.by_range_omitted, 'ranges');
    }
    // report --by function's rows (docs/cli.md, "Memory per function").
    if (r.by_function && r.by_function.length) {
      app.append(el('h2', { text: 'Memory per function (the program\'s own, inclusive)' }));
      app.append(sortable('functions', [['function', (x) => x.function],
        ['allocations', (x) => x.allocations], ['allocated', (x) => x.bytes_allocated, exact],
        ['at most held at once', (x) => x.peak_bytes, exact], ['held after', (x) => x.held_after_bytes, exact]],
        r.by_function, 2));
      omitted(r.by_function_omitted, 'functions');
    }
    // Inside pools (docs/cli.md, "Inside pools"): each heap, then its regions by call site and name.
    if (r.pools && r.pools.heaps.length) {
      app.append(el('h2', { text: 'Inside pools (NVTX memory extension)' }));
      notWhole(r, 'pools');
      app.append(table('pools-table', ['heap', 'size', 'device', 'peak', 'free at the peak (largest run)', 'at the end'],
        r.pools.heaps.map((h) => [h.name || h.handle, h.size === null ? 'no range' : exact(h.size), h.device === null ? '' : h.device,
          exact(h.peak.bytes) + ' in ' + h.peak.count,
          h.peak.inside ? exact(h.peak.inside.gap_bytes) + ' (' + exact(h.peak.inside.largest_gap) + ')' : '',
          exact(h.end.bytes) + ' in ' + h.end.count])));
      omitted(r.pools.heaps_omitted, 'heaps');
      const sites = [];
      let sitesOmitted = 0;
      for (const h of r.pools.heaps) sitesOmitted += h.sites_omitted || 0;
      for (const h of r.pools.heaps) for (const s of h.sites) sites.push({ heap: h.name || h.handle, ...s });
      app.append(sortable('pool-sites', [['heap', (x) => x.heap], ['region', (x) => x.name || '(unnamed)'],
        ['class', (x) => x.class], ['per iteration', (x) => x.growth_per_iteration, (v) => (v ? '+' + exact(v) : '')],
        ['at the peak', (x) => x.peak_bytes, exact], ['at the end', (x) => x.end_bytes, exact],
        ['registered', (x) => x.registered], ['site', (x) => x.site || ''], ['stack', () => 0, (v, x) => frames(x)]], sites, 4));
      omitted(sitesOmitted, 'sites of the heaps shown');
    }
  }
  // The page keeps a long table's largest rows (docs/html-report.md, "Long tables"): say how many it left out.
  // What the tracer did not keep past a bound, said above each table it cut (docs/cli.md,
  // "What the tracer bounds"): the report's own words, integrity.bounded[].says.
  function notWhole(r, part) {
    for (const b of (r.integrity && r.integrity.bounded) || [])
      if (b.affects.includes(part)) app.append(el('p', { class: 'bounded', text: 'Not whole: ' + b.says + ' (bounded by the tracer)' }));
  }
  function omitted(count, what) {
    if (count) app.append(el('p', { text: count + ' more ' + what + ' not shown (the page keeps the largest; report --json has every row)' }));
  }
  // A table sorted by a click on a heading, in a box of its own whose id is `id`, the table's
  // `id`-table. cols: [heading, value (sorted on), shown (value, row) → cell; else the value].
  function sortable(id, cols, items, by) {
    const box = el('div', { id });
    let down = true;
    const draw = () => {
      const rows = items.slice().sort((a, b) => {
        const x = cols[by][1](a), y = cols[by][1](b);
        return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1);
      });
      const t = table(id + '-table', cols.map(([h]) => h + (cols[by][0] === h ? (down ? ' ▼' : ' ▲') : '')),
        rows.map((x) => cols.map(([, f, show]) => (show ? show(f(x), x) : f(x)))));
      t.querySelectorAll('th').forEach((th, i) => { th.onclick = () => { down = by === i ? !down : true; by = i; draw(); }; });
      box.textContent = '';
      box.append(t);
    };
    draw();
    return box;
  }

  render();
  window.addEventListener('resize', () => { if (state.plot) state.plot.setSize({ width: Math.max(600, app.clientWidth - 20), height: 300 }); });
  // bench/html_paint.mjs: the first view drawn, and painted (the frame after it ran).
  exposed.drawnAt = performance.now();
  requestAnimationFrame(() => setTimeout(() => { exposed.paintedAt = performance.now(); }, 0));
  exposed.ready = true;
})();
