// cumemtrace html: the timeline's marks (steps, NVTX ranges), drawn so that many stay legible
// (docs/html-report.md, "Timeline"). A few are grey rules across the plot; past kMaxRules in
// view, each name is a band of its own along the plot's top, one tick per pixel column that
// holds any of its marks, labelled with the name and how many of its marks are in view.
// Zooming in until few enough are in view draws them as rules again. Hovering names every
// mark under the pointer either way.
window.cumemtraceMarks = (function () {
  'use strict';
  const kMaxRules = 60;
  const kBandHeight = 14;  // px: a band's row, room for its 11 px label
  const kNear = 3;  // px: how close the pointer must be to a mark to name it

  // marks: [[t_ns, name], ...]; xOf(t_ns) → the x of that time in CSS px, or null when out
  // of view. The layout: every mark in view with its x, then rules or bands.
  function layout(marks, xOf) {
    const shown = [];
    for (const [t, name] of marks) {
      const x = xOf(t);
      if (x != null) shown.push({ t, name, x });
    }
    if (shown.length <= kMaxRules) return { mode: 'rules', shown, bands: [] };
    const byName = new Map();
    for (const m of shown) {
      let b = byName.get(m.name);
      if (!b) byName.set(m.name, (b = { name: m.name, count: 0, columns: new Set() }));
      b.count++;
      b.columns.add(Math.round(m.x));
    }
    const bands = [...byName.values()].map((b, row) => ({ name: b.name, count: b.count, row, ticks: [...b.columns].sort((p, q) => p - q) }));
    return { mode: 'bands', shown, bands };
  }

  // Draws `lay` on uPlot's canvas (device pixels: `dpr` of them per CSS px) inside `box`
  // (uPlot's bbox, device px).
  function draw(ctx, lay, box, dpr) {
    ctx.save();
    ctx.lineWidth = 1;
    if (lay.mode === 'rules') {
      ctx.strokeStyle = '#8888';
      for (const m of lay.shown) {
        const x = Math.round(box.left + m.x * dpr) + 0.5;
        ctx.beginPath(); ctx.moveTo(x, box.top); ctx.lineTo(x, box.top + box.height); ctx.stroke();
      }
    } else {
      ctx.font = 11 * dpr + 'px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      for (const b of lay.bands) {
        const y = box.top + b.row * kBandHeight * dpr, h = kBandHeight * dpr;
        ctx.fillStyle = '#f4f4f4cc';
        ctx.fillRect(box.left, y, box.width, h - dpr);
        ctx.fillStyle = '#888';
        for (const x of b.ticks) ctx.fillRect(box.left + x * dpr, y, dpr, h - dpr);
        const label = b.name + ' ×' + b.count;
        const w = ctx.measureText(label).width + 6 * dpr;
        ctx.fillStyle = '#fffd';
        ctx.fillRect(box.left + 2 * dpr, y, w, h - dpr);
        ctx.fillStyle = '#333';
        ctx.fillText(label, box.left + 5 * dpr, y + h / 2);
      }
    }
    ctx.restore();
  }

  // The marks the pointer at (x, y), CSS px in the plot, names: within kNear px of x; over
  // the bands, only those of the band it is on.
  function under(lay, x, y) {
    let near = lay.shown.filter((m) => Math.abs(m.x - x) <= kNear);
    if (lay.mode === 'bands') {
      const band = lay.bands[Math.floor(y / kBandHeight)];
      if (!band) return [];
      near = near.filter((m) => m.name === band.name);
    }
    return near;
  }

  // The tooltip's text for `near` (under()'s), at most `max` marks named one per line.
  function describe(near, secs, max = 8) {
    const lines = near.slice(0, max).map((m) => 'mark ' + m.name + ' at ' + secs(m.t));
    if (near.length > max) lines.push('and ' + (near.length - max) + ' more marks here (zoom in)');
    return lines.join('\n');
  }

  return { kMaxRules, kBandHeight, layout, draw, under, describe };
})();
