// cumemtrace html: the views of `report --view` on the page (docs/html-report.md,
// "Allocations"): the top-down and bottom-up trees as nested lists that open and close,
// the call sites ranked by number of allocations and by temporary ones, and the size
// histogram. Their figures, orders and size ranges are the text views' (view.allocations,
// render/page/allocation_views.h); this part only draws them.
window.cumemtraceAllocationViews = (function () {
  'use strict';
  const { exact, el } = window.cumemtraceLib;
  const count = (n, what) => n.toLocaleString('en-US') + ' ' + what + (n === 1 ? '' : 's');

  // A tree's node as a line, its children below it in a <details> the first `open` levels
  // show opened; the children --top left out, counted as the text view counts them.
  function treeList(node, open) {
    const ul = el('ul', { class: 'tree' });
    for (const c of node.children) {
      const line = c.frame + ': ' + exact(c.bytes) + ', ' + count(c.allocations, 'allocation');
      const item = c.children.length || c.omitted
        ? el('details', open > 0 ? { open: '' } : null, el('summary', { text: line }), treeList(c, open - 1))
        : el('span', { class: 'leaf', text: line });
      ul.append(el('li', null, item));
    }
    if (node.omitted) ul.append(el('li', { class: 'omitted', text: '... and ' + count(node.omitted, 'more frame') + ' (--top)' }));
    return ul;
  }

  function tree(app, id, title, t) {
    app.append(el('h3', { id: id + '-title', text: title }));
    const box = el('div', { id });
    box.append(t.children.length ? treeList(t, 2) : el('p', { text: 'none' }));
    app.append(box);
  }

  function ranking(app, id, title, r, head, row, tools) {
    app.append(el('h3', { id: id + '-title', text: title }));
    if (!r.rows.length) { app.append(el('p', { id, text: 'none' })); return; }
    app.append(tools.table(id, ['#'].concat(head, ['site', 'stack']),
      r.rows.map((s, i) => [i + 1].concat(row(s), [s.site, tools.frames(s)]))));
    if (r.omitted) app.append(el('p', { class: 'omitted', text: '... and ' + count(r.omitted, 'more call site') + ' (--top)' }));
  }

  // Bars of allocations per power-of-two range of sizes, on d3's axes: every range from
  // the smallest size's to the largest's, empty ones too, as `report --view sizes`.
  function sizes(app, a, width) {
    app.append(el('h3', { id: 'alloc-sizes-title', text: 'Allocation sizes: ' + count(a.allocations, 'allocation') +
      ', ' + exact(a.bytes) + ' in all' }));
    const box = el('div', { id: 'alloc-sizes' });
    app.append(box);
    if (!a.sizes.length) { box.append(el('p', { text: 'none' })); return; }
    const W = Math.max(600, Math.min(width, 140 + 48 * a.sizes.length)), H = 280;
    const m = { l: 70, r: 16, t: 12, b: 80 };
    const svg = d3.select(box).append('svg').attr('width', W).attr('height', H);
    const x = d3.scaleBand().domain(a.sizes.map((b) => b.log2)).range([m.l, W - m.r]).padding(0.15);
    const most = d3.max(a.sizes, (b) => b.allocations);
    const y = d3.scaleLinear().domain([0, most]).nice().range([H - m.b, m.t]);
    const from = (b) => b.range.split(' to ')[0];
    const byLog = new Map(a.sizes.map((b) => [b.log2, b]));
    svg.append('g').attr('transform', 'translate(0,' + (H - m.b) + ')')
      .call(d3.axisBottom(x).tickFormat((k) => from(byLog.get(k))))
      .selectAll('text').attr('transform', 'rotate(-40)').style('text-anchor', 'end');
    svg.append('g').attr('transform', 'translate(' + m.l + ',0)')
      .call(d3.axisLeft(y).tickValues(y.ticks(Math.min(6, most)).filter(Number.isInteger)).tickFormat(d3.format(',d')));
    svg.append('text').attr('x', (m.l + W - m.r) / 2).attr('y', H - 6).attr('text-anchor', 'middle')
      .text('allocation size (each bar: from its size up to twice it)');
    svg.append('text').attr('transform', 'rotate(-90)').attr('x', -(m.t + H - m.b) / 2).attr('y', 14)
      .attr('text-anchor', 'middle').text('allocations');
    svg.selectAll('rect.size-bar').data(a.sizes).join('rect').attr('class', 'size-bar')
      .attr('x', (b) => x(b.log2)).attr('width', x.bandwidth())
      .attr('y', (b) => y(b.allocations)).attr('height', (b) => y(0) - y(b.allocations)).attr('fill', '#1f77b4')
      .attr('data-range', (b) => b.range).attr('data-allocations', (b) => b.allocations).attr('data-bytes', (b) => b.bytes)
      .append('title').text((b) => b.range + ': ' + count(b.allocations, 'allocation') + ', ' + exact(b.bytes));
    box.append(el('ul', { class: 'legend' }, el('li', null, el('span', { class: 'swatch', style: 'background:#1f77b4' }),
      document.createTextNode('allocations whose size lies in the bar\'s range (hover a bar for the range and its bytes)'))));
  }

  // tools: the page's table(id, head, rows) and frames(site) (view.js).
  function draw(app, a, width, tools) {
    if (!a) return;
    app.append(el('h2', { id: 'allocations-title', text: 'Allocations over the whole run, all devices (report --view): ' +
      count(a.allocations, 'allocation') + ', ' + exact(a.bytes) }));
    tree(app, 'alloc-tree', 'Top-down tree: each frame with the bytes and allocations made below it', a.tree);
    tree(app, 'alloc-callers', 'Bottom-up: each call site\'s frame, below it the frames that called it, --frames deep', a.callers);
    ranking(app, 'alloc-top', 'Call sites by number of allocations', a.top_allocations,
      ['allocations', 'bytes'], (s) => [s.allocations, exact(s.bytes)], tools);
    ranking(app, 'alloc-temporary', 'Temporary allocations, freed before any other allocation was made: ' + a.temporary +
      ' of ' + count(a.allocations, 'allocation'), a.temporary_sites, ['temporary', 'of allocations', 'temporary bytes'],
    (s) => [s.temporary, s.allocations, exact(s.temporary_bytes)], tools);
    sizes(app, a, width);
  }

  return { draw };
})();
