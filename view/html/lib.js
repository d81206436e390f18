// cumemtrace html: the pieces every part of the page uses (docs/html-report.md):
// figures' formats, elements, the tooltip, and the time charts' axes.
window.cumemtraceLib = (function () {
  'use strict';
  // ---- formatting ------------------------------------------------------------------
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  function iec(b) {
    if (b == null) return '—';
    let v = b, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return (u ? v.toFixed(v < 10 ? 2 : 1) : String(v)) + ' ' + units[u];
  }
  const exact = (b) => (b == null ? '—' : iec(b) + ' (' + b.toLocaleString('en-US') + ' B)');
  const secs = (ns) => (ns / 1e9).toFixed(6) + ' s';
  const pct = (x) => (100 * x).toFixed(2) + ' %';
  const hex = (v) => '0x' + v.toString(16);
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v; else if (k === 'class') e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }
  function frameText(f) {
    if (f.function !== undefined && f.ip === undefined) return f.function + ' (' + f.file + ':' + (f.line || '?') + ')';
    return (f.function || f.ip) + (f.file ? ' at ' + f.file + ':' + f.line : '') + ' (' + (f.module || '?') + ')';
  }
  function siteColor(i) {
    if (i < 0) return '#999';
    const h = (i * 137.508) % 360;
    return 'hsl(' + h.toFixed(0) + ',60%,' + (50 + (i % 3) * 8) + '%)';
  }
  const tip = el('div', { class: 'tip', id: 'tip' });
  document.body.append(tip);
  function showTip(ev, text) { tip.textContent = text; tip.style.display = 'block'; tip.style.left = ev.clientX + 14 + 'px'; tip.style.top = ev.clientY + 14 + 'px'; }
  function hideTip() { tip.style.display = 'none'; }

  // ---- axes --------------------------------------------------------------------------
  // Tick labels that differ from one another: as many decimals as the spacing of the ticks
  // needs (a 6 ms trace had thirteen ticks all reading "0.006").
  function decimalsFor(step) {
    if (!(step > 0)) return 0;
    return Math.min(9, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)));
  }
  function secondsTicks(u, vs) {
    const d = decimalsFor(vs.length > 1 ? Math.abs(vs[1] - vs[0]) : 1);
    return vs.map((v) => (v == null ? '' : v.toFixed(d)));
  }
  // Byte ticks 1, 2 or 5 × a power of ten of one binary unit apart (200 MiB, 500 MiB,
  // 1 GiB): uPlot's own steps are decimal bytes, which read 0, 191, 381, 572 MiB.
  const byteIncrs = [];
  for (let k = 0; k < units.length; k++) for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500]) byteIncrs.push(m * 1024 ** k);
  // Bytes in the unit of the ticks' spacing (so that 500 MiB steps read 0, 500, 1000 MiB),
  // or of the largest tick when there is one tick only.
  function bytesTicks(u, vs) {
    const step = vs.length > 1 ? Math.abs(vs[1] - vs[0]) : Math.max(...vs.map((v) => Math.abs(v || 0)));
    let k = 0;
    while (step >= 1024 ** (k + 1) && k < units.length - 1) k++;
    const scale = 1024 ** k;
    const d = k ? decimalsFor(vs.length > 1 ? step / scale : 1) : 0;
    return vs.map((v) => (v == null ? '' : (v / scale).toFixed(d) + ' ' + units[k]));
  }
  // An axis as wide as its longest label (uPlot asks again until the size settles; after two
  // rounds the last size stands), so that no label is cut at the canvas's edge.
  function axisWidth(u, values, axisIdx, cycleNum) {
    const axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    let longest = 0;
    if (values && values.length) {
      u.ctx.save();
      u.ctx.font = axis.font[0];
      for (const v of values) longest = Math.max(longest, u.ctx.measureText(String(v)).width / devicePixelRatio);
      u.ctx.restore();
    }
    return Math.ceil(longest + axis.ticks.size + axis.gap + 8);
  }

  return { units, iec, exact, secs, pct, hex, el, frameText, siteColor, showTip, hideTip,
    decimalsFor, secondsTicks, byteIncrs, bytesTicks, axisWidth };
})();
