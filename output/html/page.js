/* cgprof export -f html: the page's code (embedded into the file).
 * Reads the profile from the JSON in #cgprof-data and draws three views:
 * a flame graph (click to zoom, search, hover for numbers), the flat
 * profile as a sortable table, each function's callers and callees, and
 * the samples by source line.  The URL's fragment can drive the page
 * through the same events a person triggers (tests use it):
 * #view=flat|graph|flame|lines&search=RE&zoom=NAME&fn=NAME. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('cgprof-data').textContent);
  var F = D.f.map(function (x, i) {
    return { id: i, name: x[0], self: x[1], incl: x[2], calls: x[3], selfCalls: x[4], cycle: x[5],
      inlined: x[6] === 1, callers: [], callees: [] };
  });
  for (var i = 0; i < D.a.length; i += 4) {
    var arc = { from: D.a[i], to: D.a[i + 1], count: D.a[i + 2], cost: D.a[i + 3] };
    F[arc.from].callees.push(arc);
    F[arc.to].callers.push(arc);
  }
  var total = D.total;
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(s) {
    if (D.timed) return (s / D.rate).toFixed(3) + ' s';
    return String(Math.round(s)) + ' ' + D.event;
  }
  function pct(s) { return total > 0 ? (100 * s / total).toFixed(2) + '%' : '-'; }

  /* ---- the stacks, merged by function: node 0 is the root "all" ---- */
  var T = [{ parent: -1, func: -1, self: 0, total: 0, kids: [], depth: 0 }];
  for (i = 0; i < D.t.length; i += 3) {
    var p = D.t[i] + 1;
    T.push({ parent: p, func: D.t[i + 1], self: D.t[i + 2], total: 0, kids: [], depth: T[p].depth + 1 });
  }
  for (i = T.length - 1; i > 0; i--) {
    T[i].total += T[i].self;
    T[T[i].parent].total += T[i].total;
    T[T[i].parent].kids.push(i);
  }
  T[0].total += T[0].self;
  var maxDepth = 0;
  T.forEach(function (n) {
    if (n.depth > maxDepth) maxDepth = n.depth;
    n.kids.sort(function (a, b) { return fname(T[a]) < fname(T[b]) ? -1 : fname(T[a]) > fname(T[b]) ? 1 : 0; });
  });
  function fname(n) { return n.func < 0 ? 'all' : F[n.func].name; }

  /* ---- flame graph ---- */
  var svg = $('flame'), NS = 'http://www.w3.org/2000/svg';
  var W = 1200, H = 18, zoom = 0, searchRe = null;
  function colour(name) {
    var h = 0;
    for (var k = 0; k < name.length; k++) h = (h * 31 + name.charCodeAt(k)) >>> 0;
    var r = 205 + (h % 50), g = 80 + ((h >>> 8) % 130), b = 40 + ((h >>> 16) % 50);
    return 'rgb(' + r + ',' + g + ',' + b + ')';
  }
  function frame(idx, x, w, y, cls) {
    var n = T[idx], name = fname(n);
    var g = document.createElementNS(NS, 'g');
    g.setAttribute('class', 'fr' + (cls ? ' ' + cls : ''));
    g.setAttribute('data-n', idx);
    g.setAttribute('data-name', name);
    var r = document.createElementNS(NS, 'rect');
    r.setAttribute('x', x.toFixed(2)); r.setAttribute('y', y);
    r.setAttribute('width', Math.max(w, 0.5).toFixed(2)); r.setAttribute('height', H - 1);
    r.setAttribute('fill', n.func < 0 ? '#c8c8d8' : colour(name));
    var t = document.createElementNS(NS, 'title');
    t.textContent = describe(idx);
    g.appendChild(t);
    g.appendChild(r);
    if (w > 30) {
      var tx = document.createElementNS(NS, 'text');
      tx.setAttribute('x', (x + 3).toFixed(2)); tx.setAttribute('y', y + H - 5);
      var fit = Math.floor((w - 6) / 6.7);
      tx.textContent = name.length <= fit ? name : name.slice(0, Math.max(fit - 2, 0)) + '..';
      g.appendChild(tx);
    }
    if (searchRe && n.func >= 0 && searchRe.test(name)) g.classList.add('match');
    svg.appendChild(g);
  }
  function describe(idx) {
    var n = T[idx];
    return fname(n) + ': ' + fmt(n.total) + ' (' + pct(n.total) + ') with callees, self ' +
      fmt(n.self) + ' (' + pct(n.self) + ')';
  }
  function draw() {
    W = Math.max(Math.floor(svg.getBoundingClientRect().width) || 1200, 300);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var y = 0, anc = [];
    for (var a = T[zoom].parent; a >= 0; a = T[a].parent) anc.unshift(a);
    anc.forEach(function (a) { frame(a, 0, W, y, 'anc'); y += H; });
    var base = T[zoom].depth, scale = T[zoom].total > 0 ? W / T[zoom].total : 0;
    (function walk(idx, x) {
      var w = T[idx].total * scale;
      if (w < 0.3) return;
      frame(idx, x, w, y + (T[idx].depth - base) * H);
      var cx = x;
      T[idx].kids.forEach(function (k) { walk(k, cx); cx += T[k].total * scale; });
    })(zoom, 0);
    var rows = anc.length + (maxDepth - base) + 1;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + rows * H);
    svg.setAttribute('height', rows * H);
    $('zoomed').textContent = zoom ? 'zoomed into ' + fname(T[zoom]) + ' (' + pct(T[zoom].total) + ')' : '';
    $('reset').disabled = zoom === 0;
  }
  svg.addEventListener('click', function (ev) {
    var g = ev.target.closest('g.fr');
    if (!g) return;
    zoom = +g.getAttribute('data-n');
    draw();
  });
  svg.addEventListener('mouseover', function (ev) {
    var g = ev.target.closest('g.fr');
    if (g) $('details').textContent = describe(+g.getAttribute('data-n'));
  });
  $('reset').addEventListener('click', function () { zoom = 0; draw(); });
  window.addEventListener('resize', function () { if (svg.getBoundingClientRect().width) draw(); });
  $('search').addEventListener('input', function () {
    var v = this.value;
    try { searchRe = v ? new RegExp(v) : null; } catch (e) { searchRe = null; }
    var matched = 0;
    if (searchRe) (function walk(idx) {
      var n = T[idx];
      if (n.func >= 0 && searchRe.test(F[n.func].name)) { matched += n.total; return; }
      n.kids.forEach(walk);
    })(0);
    $('matched').textContent = searchRe ? 'matched: ' + fmt(matched) + ' (' + pct(matched) + ')' : '';
    draw();
  });

  /* ---- flat profile ---- */
  var sortKey = 'self', sortUp = false;
  var cols = [['name', 'function'], ['self', 'self'], ['selfp', 'self %'], ['incl', 'total'],
    ['inclp', 'total %'], ['calls', 'calls'], ['selfCalls', 'self calls']];
  function flat() {
    var tb = $('flat');
    while (tb.firstChild) tb.removeChild(tb.firstChild);
    var tr = el('tr');
    cols.forEach(function (c) {
      var th = el('th', { 'data-key': c[0], 'class': (c[0] === 'name' ? 'name ' : '') +
        (sortKey === c[0] || sortKey + 'p' === c[0] ? 'sorted' + (sortUp ? ' up' : '') : '') }, c[1]);
      tr.appendChild(th);
    });
    tb.appendChild(tr);
    var key = sortKey;
    var rows = F.filter(function (f) { return f.self > 0 || f.incl > 0 || f.calls > 0; });
    rows.sort(function (a, b) {
      var x = a[key], y = b[key], c = key === 'name' ? (x < y ? -1 : x > y ? 1 : 0) : x - y;
      return (sortUp ? c : -c) || b.self - a.self || (a.name < b.name ? -1 : 1);
    });
    rows.forEach(function (f) {
      var r = el('tr', { 'data-fn': f.name });
      var td = el('td', { 'class': 'name' });
      var a = el('a', { href: '#', 'data-id': f.id }, f.name);
      td.appendChild(a);
      if (f.inlined) td.appendChild(el('span', { 'class': 'inl' }, ' (inlined)'));
      r.appendChild(td);
      [fmt(f.self), pct(f.self), fmt(f.incl), pct(f.incl), f.calls, f.selfCalls].forEach(function (v) {
        r.appendChild(el('td', {}, v === null ? '' : String(v)));
      });
      tb.appendChild(r);
    });
  }
  $('flat').addEventListener('click', function (ev) {
    var th = ev.target.closest('th');
    if (th) {
      var k = th.getAttribute('data-key').replace(/p$/, '');
      if (k === sortKey) sortUp = !sortUp; else { sortKey = k; sortUp = k === 'name'; }
      flat();
      return;
    }
    var a = ev.target.closest('a');
    if (a) { ev.preventDefault(); show('graph'); pick(+a.getAttribute('data-id')); }
  });

  /* ---- call graph view ---- */
  var sel = $('cg-func');
  F.map(function (f) { return f; }).sort(function (a, b) { return b.incl - a.incl || b.self - a.self; })
    .forEach(function (f) {
      if (f.self > 0 || f.incl > 0 || f.calls > 0 || f.callees.length)
        sel.appendChild(el('option', { value: f.id }, f.name));
    });
  sel.addEventListener('change', function () { pick(+sel.value); });
  function arcTable(title, arcs, end) {
    var box = el('div');
    box.appendChild(el('h2', {}, title));
    var t = el('table', { 'class': 'arcs' });
    var tr = el('tr');
    ['function', 'calls', D.stacks ? 'time in these calls' : 'time (gprof estimate)', '%'].forEach(
      function (h, k) { tr.appendChild(el('th', k ? {} : { 'class': 'name' }, h)); });
    t.appendChild(tr);
    arcs.slice().sort(function (a, b) { return b.cost - a.cost || b.count - a.count; }).forEach(function (a) {
      var f = F[a[end]], r = el('tr', { 'data-fn': f.name });
      var td = el('td', { 'class': 'name' });
      td.appendChild(el('a', { href: '#', 'data-id': f.id }, f.name));
      r.appendChild(td);
      r.appendChild(el('td', {}, a.count === null ? '' : String(a.count)));
      r.appendChild(el('td', {}, fmt(a.cost)));
      r.appendChild(el('td', {}, pct(a.cost)));
      t.appendChild(r);
    });
    if (!arcs.length) t.appendChild(el('tr', {}, '')).appendChild(el('td', { 'class': 'name' }, 'none'));
    box.appendChild(t);
    return box;
  }
  function pick(id) {
    var f = F[id], v = $('cg-view');
    sel.value = id;
    while (v.firstChild) v.removeChild(v.firstChild);
    var h = el('h2');
    h.appendChild(el('span', { 'class': 'fn' }, f.name));
    h.appendChild(document.createTextNode(': self ' + fmt(f.self) + ' (' + pct(f.self) + '), total ' +
      fmt(f.incl) + ' (' + pct(f.incl) + '), ' +
      (f.inlined ? 'inlined' : f.calls === null ? 'calls not counted' : f.calls + ' calls') +
      (f.selfCalls ? ' + ' + f.selfCalls + ' recursive' : '') + (f.cycle ? ', cycle ' + f.cycle : '')));
    v.appendChild(h);
    v.appendChild(arcTable('Callers', f.callers, 'from'));
    v.appendChild(arcTable('Callees', f.callees, 'to'));
  }
  $('cg-view').addEventListener('click', function (ev) {
    var a = ev.target.closest('a');
    if (a) { ev.preventDefault(); pick(+a.getAttribute('data-id')); }
  });

  /* ---- source lines ---- */
  function lines() {
    var t = $('lines'), L = D.l || [];
    var tr = el('tr');
    ['source line', 'function', 'self', 'self %'].forEach(function (h, k) {
      tr.appendChild(el('th', k < 2 ? { 'class': 'name' } : {}, h));
    });
    t.appendChild(tr);
    L.forEach(function (x) {
      var r = el('tr', { 'data-line': x[0] + ':' + x[1] });
      r.appendChild(el('td', { 'class': 'name', title: x[0] }, x[0].replace(/.*\//, '') + ':' + x[1]));
      var td = el('td', { 'class': 'name' });
      td.appendChild(el('a', { href: '#', 'data-id': x[2] }, F[x[2]].name));
      r.appendChild(td);
      r.appendChild(el('td', {}, fmt(x[3])));
      r.appendChild(el('td', {}, pct(x[3])));
      t.appendChild(r);
    });
    if (!L.length) $('lines-note').textContent = 'No source lines: no module with samples has DWARF (build with -g).';
  }
  $('lines').addEventListener('click', function (ev) {
    var a = ev.target.closest('a');
    if (a) { ev.preventDefault(); show('graph'); pick(+a.getAttribute('data-id')); }
  });

  /* ---- tabs ---- */
  function show(view) {
    ['flame', 'flat', 'graph', 'lines'].forEach(function (v) {
      $('view-' + v).classList.toggle('hidden', v !== view);
      $('tab-' + v).classList.toggle('on', v === view);
    });
    if (view === 'flame') draw();
  }
  ['flame', 'flat', 'graph', 'lines'].forEach(function (v) {
    $('tab-' + v).addEventListener('click', function () { show(v); });
  });

  $('summary').textContent = 'total ' + fmt(total) + (D.timed ? ' (' + Math.round(total) + ' samples)' : '') +
    (D.stacks ? '' : ' -- no stacks recorded: the flame graph shows self time only, totals are gprof estimates');
  flat();
  lines();
  var top = F.slice().sort(function (a, b) { return b.incl - a.incl; })[0];
  if (top) pick(top.id);
  show('flame');

  /* ---- the fragment: the same events a click or a keystroke sends ---- */
  var args = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    var k = kv.indexOf('=');
    if (k > 0) args[kv.slice(0, k)] = decodeURIComponent(kv.slice(k + 1));
  });
  if (args.search !== undefined) {
    $('search').value = args.search;
    $('search').dispatchEvent(new Event('input'));
  }
  if (args.zoom) {
    var g = svg.querySelector('g.fr[data-name="' + args.zoom.replace(/"/g, '\\"') + '"] rect');
    if (g) g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  }
  if (args.sort) {
    var th = $('flat').querySelector('th[data-key="' + args.sort + '"]');
    if (th) th.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  }
  if (args.fn) {
    for (var k = 0; k < F.length; k++)
      if (F[k].name === args.fn) { sel.value = k; sel.dispatchEvent(new Event('change')); }
  }
  if (args.view) $('tab-' + args.view).dispatchEvent(new MouseEvent('click', { bubbles: true }));
})();
