// cumemtrace html: one time range for every time chart of a device (docs/html-report.md,
// "Timeline"): the page's data gives it (view.time_range_ns: from the first memory event or
// mark to the last), so that a reading taken before or after (NVML's at exit) does not
// stretch the axis; a zoom or pan in one chart is the zoom of all, inside that range.
window.cumemtraceTimeRange = (function () {
  'use strict';

  // uPlot's range function for the x scale, in seconds. uPlot asks it at every zoom and, at
  // a reset (first draw, double-click), with its data's own first and last x: then, and
  // whenever it would leave the range, the answer is the range.
  function clamp(rangeNs, dataLo, dataHi) {
    const lo = rangeNs[0] / 1e9;
    const hi = Math.max(rangeNs[1] / 1e9, lo + 1e-9);
    return (u, min, max) => {
      if (min == null || max == null || (min <= dataLo && max >= dataHi)) return [lo, hi];
      const a = Math.max(min, lo), b = Math.min(max, hi);
      return b > a ? [a, b] : [lo, hi];
    };
  }

  // The charts that zoom together: `hook` goes into each chart's hooks.setScale, `add`
  // registers the chart once made.
  function group() {
    const plots = [];
    let busy = false;
    const hook = (u, key) => {
      if (key !== 'x' || busy) return;
      busy = true;
      const { min, max } = u.scales.x;
      for (const p of plots) if (p !== u && (p.scales.x.min !== min || p.scales.x.max !== max)) p.setScale('x', { min, max });
      busy = false;
    };
    return { hook, add: (u) => plots.push(u), plots };
  }

  return { clamp, group };
})();
