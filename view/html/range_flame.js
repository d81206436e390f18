// cumemtrace html: flame graphs (icicles) of live bytes, at a kept moment or over any time
// range (docs/html-report.md, "Flame graph over a time range"). Over a range, the page's
// data (view.range_flame, range_flame.h) gives per bucket of time the live bytes by stack
// at its highest moment; a window snapped outwards to bucket edges shows the first of its
// buckets' highest, the rule of `export --format folded --from A --to B`.
window.cumemtraceRangeFlame = (function () {
  'use strict';
  const { exact } = window.cumemtraceLib;

  // d3-flame-graph's tree from a flame node [label, bytes, [children]] (label -1: the
  // root). A folded frame (interpreter, dispatch, allocator, CUDA, not the user's Python)
  // gives its children to its parent; children that then share a name are one node.
  function icicle(root, labels, folds, rootName) {
    function merge(a, b) {
      a.value += b.value;
      for (const c of b.children) {
        const same = a.children.find((x) => x.name === c.name);
        if (same) merge(same, c); else a.children.push(c);
      }
    }
    function tree(n) {
      const out = { name: n[0] < 0 ? rootName : labels[n[0]], value: n[1], children: [] };
      const add = (c) => {
        if (c[0] >= 0 && folds[c[0]]) { c[2].forEach(add); return; }
        const t = tree(c);
        const same = out.children.find((x) => x.name === t.name);
        if (same) merge(same, t); else out.children.push(t);
      };
      n[2].forEach(add);
      return out;
    }
    return tree(root);
  }

  function draw(box, tree, width) {
    const make = window.flamegraph.default || window.flamegraph.flamegraph || window.flamegraph;
    const chart = make().width(width).cellHeight(18).inverted(true).minFrameSize(1)
      .label((d) => d.data.name + ': ' + exact(d.value)).selfValue(false);
    d3.select(box).datum(tree).call(chart);
    return chart;
  }

  // The window [fromNs, toNs] of `device` snapped outwards to whole buckets, and its highest
  // moment: the first bucket of the window whose highest is above every earlier one's.
  // Returns null when the device has no bucket in the window.
  function highest(rf, device, fromNs, toNs) {
    const dev = rf && rf.devices.find((d) => d.device === device);
    if (!dev) return null;
    const s = rf.start_ns, w = rf.bucket_ns;
    const k0 = Math.min(rf.buckets - 1, Math.max(0, Math.floor((fromNs - s) / w)));
    const k1 = Math.max(k0, Math.min(rf.buckets - 1, Math.ceil((toNs - s) / w) - 1));
    const live = new Map();
    let best = null;
    for (const [k, t, tracked, change] of dev.buckets) {
      if (k > k1) break;
      for (let i = 0; i < change.length; i += 2) {
        if (change[i + 1]) live.set(change[i], change[i + 1]); else live.delete(change[i]);
      }
      if (k >= k0 && (!best || tracked > best.tracked)) best = { k, t, tracked, live: new Map(live) };
    }
    return best && { ...best, k0, k1, from: s + k0 * w, to: s + (k1 + 1) * w };
  }

  // A flame node [label, bytes, children] of `live` (path index → bytes) over rf.paths
  // (label indices, outermost first).
  function node(paths, live) {
    const root = [-1, 0, [], new Map()];
    for (const [p, bytes] of live) {
      let n = root;
      n[1] += bytes;
      for (const label of paths[p]) {
        let c = n[3].get(label);
        if (!c) { c = [label, 0, [], new Map()]; n[3].set(label, c); n[2].push(c); }
        c[1] += bytes;
        n = c;
      }
    }
    return root;
  }

  return { icicle, draw, highest, node };
})();
