// cumemtrace html: the address map of one device at one moment (docs/html-report.md,
// "Address map"): each arena one row of the canvas, scaled to its width, with its start
// address and size on the left, an axis of the offset inside an arena below, and a legend
// of what the colours are. The labels are elements beside the canvas, not drawn into it,
// so that none is cut at its edge (and a test can read them).
window.cumemtraceAddressMap = (function () {
  'use strict';
  const { iec, exact, secs, hex, el, siteColor, showTip, hideTip, byteIncrs, bytesTicks } = window.cumemtraceLib;
  const W = 720, rowH = 18, maxRows = 400, maxLegendSites = 8;

  // The offsets the axis marks: when every row drawn is one size, bytes 1, 2 or 5 × a power
  // of ten of one binary unit apart (the timeline's steps), at most 6 intervals; else
  // quarters of each row, in percent. Each tick: [fraction of the width, label].
  function axisTicks(rows) {
    const sizes = new Set(rows.map(([s, e]) => e - s));
    if (sizes.size !== 1) return [0, 25, 50, 75, 100].map((p) => [p / 100, p + ' %']);
    const size = [...sizes][0];
    const step = byteIncrs.find((s) => size / s <= 6) || size;
    const at = [];
    for (let v = 0; v <= size; v += step) at.push(v);
    const labels = bytesTicks(null, at);
    return at.map((v, i) => [v / size, labels[i]]);
  }

  // The call sites drawn, by bytes drawn, largest first: [site index, bytes]. A site is
  // named by its frame and the one calling it, as the report's call sites are.
  function sitesDrawn(a, end) {
    const bytes = new Map();
    for (let j = 0; j < end; j += 4) bytes.set(a[j + 2], (bytes.get(a[j + 2]) || 0) + a[j + 1]);
    return [...bytes.entries()].sort((p, q) => q[1] - p[1] || p[0] - q[0]);
  }

  function swatch(style) { return el('span', { class: 'swatch', style }); }

  // box: the map's element; m, md: the moment and its device (html_data.h); view: the
  // process's view (its sites and labels). Returns the drawn allocations' rectangles.
  function draw(box, m, md, view) {
    box.textContent = '';
    const rects = [];
    if (!md) { box.append(el('p', { text: 'Nothing live on this device at this moment.' })); return rects; }
    const rows = md.arenas.slice(0, maxRows);
    const canvas = el('canvas', { id: 'map-canvas', width: W, height: Math.max(rowH, rows.length * rowH) });
    const rowLabels = el('div', { id: 'map-rows', class: 'map-rows' });
    rows.forEach(([start, end]) => rowLabels.append(el('div', { class: 'map-row', text: hex(start) + ' · ' + iec(end - start) })));
    const axis = el('div', { id: 'map-axis', class: 'map-axis', style: 'width:' + W + 'px' });
    for (const [f, label] of axisTicks(rows)) {
      // Centred on its tick, but near an edge a label reads inwards from it: else it would
      // pass the edge of the map.
      axis.append(el('span', { class: 'map-tick' + (f >= 0.9 ? ' end' : f <= 0.1 ? ' start' : ''), style: 'left:' + (f * W).toFixed(1) + 'px', text: label }));
    }
    box.append(el('div', { class: 'map-grid' }, rowLabels, el('div', null, canvas, axis,
      el('div', { class: 'note map-axis-title', text: 'offset inside the arena (each row one arena, its start and size at its left)' }))));
    if (md.arenas.length > maxRows) box.append(el('p', { class: 'note', text: (md.arenas.length - maxRows) + ' more arenas not drawn' }));
    const ctx = canvas.getContext('2d');
    const a = md.allocs;
    let j = 0;
    const lg = md.largest_gap_at;
    let ruled = false;
    rows.forEach(([start, end], r) => {
      const y = r * rowH;
      const scale = W / (end - start);
      const X = (addr) => (addr - start) * scale;
      ctx.fillStyle = '#eee';  // gaps: what no allocation covers
      ctx.fillRect(0, y + 1, W, rowH - 2);
      for (; j < a.length && a[j] < end; j += 4) {
        const x0 = X(a[j]), w = Math.max(1, a[j + 1] * scale);
        ctx.fillStyle = siteColor(a[j + 2]);
        ctx.fillRect(x0, y + 2, w, rowH - 4);
        rects.push({ x: x0, y: y + 2, w, h: rowH - 4, i: j / 4, row: r });
      }
      const granules = (end - start) / md.granule;
      if (granules <= W / 4) {
        ruled = ruled || granules > 1;
        ctx.strokeStyle = '#fff';
        for (let g = 1; g < granules; g++) { const x = Math.round(g * md.granule * scale) + 0.5; ctx.beginPath(); ctx.moveTo(x, y + 1); ctx.lineTo(x, y + rowH - 1); ctx.stroke(); }
      }
      if (lg && lg[0] >= start && lg[0] < end) {
        ctx.strokeStyle = '#d62728'; ctx.lineWidth = 2;
        ctx.strokeRect(X(lg[0]), y + 1, Math.max(2, lg[1] * scale), rowH - 2);
        ctx.lineWidth = 1;
      }
    });

    // The legend: the call sites drawn (the largest first), then what the rest means.
    const legend = el('ul', { id: 'map-legend', class: 'legend' });
    const drawn = sitesDrawn(a, j);
    for (const [s, bytes] of drawn.slice(0, maxLegendSites)) {
      const site = s >= 0 ? view.sites[s] : null;
      const name = !site ? 'a VMM mapping (its handle was made apart)'
        : (site.frames.length ? site.frames.slice(0, 2).map((f) => view.labels[f]).join(' ← ') : '(no stack recorded)') + ' [' + site.library + ']';
      legend.append(el('li', { class: 'legend-site' }, swatch('background:' + siteColor(s)), name + ': ' + exact(bytes)));
    }
    if (drawn.length > maxLegendSites) legend.append(el('li', { text: (drawn.length - maxLegendSites) + ' more call sites (hover an allocation)' }));
    legend.append(el('li', null, swatch('background:#eee'), 'gap: no allocation (granule padding, freed bytes)'));
    if (lg) legend.append(el('li', null, swatch('border:2px solid #d62728'), 'the largest gap'));
    if (ruled) legend.append(el('li', null, swatch('background:#eee;border-left:1px solid #fff;border-right:1px solid #fff'), 'a white rule: a granule boundary (' + iec(md.granule) + ')'));
    box.append(legend);

    canvas.addEventListener('mousemove', (ev) => {
      const rc = canvas.getBoundingClientRect();
      const x = ev.clientX - rc.left, y = ev.clientY - rc.top;
      const hit = rects.find((q) => x >= q.x && x <= q.x + q.w && y >= q.y && y <= q.y + q.h);
      if (!hit) {
        const r = Math.floor(y / rowH);
        if (rows[r]) showTip(ev, 'arena ' + hex(rows[r][0]) + '–' + hex(rows[r][1]) + ', ' + exact(rows[r][1] - rows[r][0]) + '\n(gap or granule padding here)');
        else hideTip();
        return;
      }
      const k = hit.i * 4;
      const site = a[k + 2] >= 0 ? view.sites[a[k + 2]] : null;
      const frames = !site ? '  (a VMM mapping: its handle was made apart)'
        : site.frames.length ? site.frames.map((f) => '  ' + view.labels[f]).join('\n') : '  (no stack recorded)';
      showTip(ev, 'allocation ' + hex(a[k]) + ', ' + exact(a[k + 1]) + '\nage ' + secs(m.t - a[k + 3]) +
        (site ? '\ncall site (' + site.library + '):\n' : '\n') + frames);
    });
    canvas.addEventListener('mouseleave', hideTip);
    return rects;
  }

  return { draw, axisTicks };
})();
