// The inline JavaScript and CSS of the flame graph SVG (see flame_graph.h for the element
// layout it relies on). Plain ES5 + DOM, no external resources. Must never contain "]]>".
#pragma once

namespace heapkit::pprof {

inline constexpr const char kFlameGraphStyle[] = R"CSS(
text { font-family: 'DejaVu Sans Mono', 'Courier New', monospace; font-size: 12px; fill: #000; }
#hk-title { font-size: 17px; }
.hk-legend { font-size: 11px; fill: #444; }
.hk-button { cursor: pointer; fill: #1a56a0; }
.hk-button:hover { text-decoration: underline; }
.hk-hidden { display: none; }
.f { cursor: pointer; }
.f text { pointer-events: none; }
.f:hover rect { stroke: #000; stroke-width: 0.6; }
.hk-parent rect { opacity: 0.55; }
)CSS";

inline constexpr const char kFlameGraphScript[] = R"JS(
'use strict';
var hk = { frames: [], total: 0, pad: 10, span: 0, zoomed: null, searching: false };
var HK_CHAR_PX = 7.2;  // 12px monospace: 0.6em per character

function hkEl(id) { return document.getElementById(id); }

function hkLabel(f, x, w) {
  f.r.setAttribute('x', x.toFixed(2));
  f.r.setAttribute('width', w.toFixed(2));
  f.t.setAttribute('x', (x + 3).toFixed(2));
  var fit = Math.floor((w - 6) / HK_CHAR_PX);
  var text = '';
  if (fit >= 3) text = f.n.length <= fit ? f.n : f.n.substring(0, fit - 2) + '..';
  f.t.textContent = text;
}

function hkPlace(f, origin, scale) {
  hkLabel(f, hk.pad + (f.o - origin) * scale, f.v * scale);
}

function hkShowDetails(f) {
  hkEl('hk-details').textContent = f.info;
}

function hkZoom(z) {
  var tol = hk.total * 1e-8;
  var scale = hk.span / z.v;
  for (var i = 0; i < hk.frames.length; i++) {
    var f = hk.frames[i];
    var cls = 'f';
    if (f.d >= z.d && f.o >= z.o - tol && f.o + f.v <= z.o + z.v + tol) {
      hkPlace(f, z.o, scale);
    } else if (f.d < z.d && f.o <= z.o + tol && f.o + f.v >= z.o + z.v - tol) {
      hkLabel(f, hk.pad, hk.span);
      cls = 'f hk-parent';
    } else {
      cls = 'f hk-hidden';
    }
    f.g.setAttribute('class', cls);
  }
  hk.zoomed = z;
  hkEl('hk-reset').setAttribute('class', 'hk-button');
}

function hkReset() {
  var scale = hk.total > 0 ? hk.span / hk.total : 0;
  for (var i = 0; i < hk.frames.length; i++) {
    hkPlace(hk.frames[i], 0, scale);
    hk.frames[i].g.setAttribute('class', 'f');
  }
  hk.zoomed = null;
  hkEl('hk-reset').setAttribute('class', 'hk-button hk-hidden');
}

function hkClearSearch() {
  for (var i = 0; i < hk.frames.length; i++) hk.frames[i].r.setAttribute('fill', hk.frames[i].fill);
  hk.searching = false;
  hkEl('hk-matched').textContent = '';
  hkEl('hk-search').textContent = 'Search';
}

function hkSearch(term) {
  var re;
  try { re = new RegExp(term); } catch (e) {
    hkEl('hk-details').textContent = 'Bad regular expression: ' + term;
    return;
  }
  hkClearSearch();
  var spans = [];
  for (var i = 0; i < hk.frames.length; i++) {
    var f = hk.frames[i];
    if (re.test(f.n)) {
      f.r.setAttribute('fill', '#e040e0');
      spans.push([f.o, f.o + f.v]);
    }
  }
  // Matched share: the union of the matched frames' extents (nested matches count once).
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -Infinity;
  for (var j = 0; j < spans.length; j++) {
    var s = Math.max(spans[j][0], end);
    if (spans[j][1] > s) { covered += spans[j][1] - s; }
    end = Math.max(end, spans[j][1]);
  }
  var pct = hk.total > 0 ? (100 * covered / hk.total) : 0;
  hkEl('hk-matched').textContent = 'Matched: ' + pct.toFixed(2) + '% (' + spans.length + ' frames)';
  hkEl('hk-search').textContent = 'Clear search';
  hk.searching = true;
}

function hkSearchPrompt() {
  if (hk.searching) { hkClearSearch(); return; }
  var term = window.prompt('Search for a function (regular expression):', '');
  if (term) hkSearch(term);
}

function hkInit() {
  var root = hkEl('frames');
  hk.total = parseFloat(root.getAttribute('data-total')) || 0;
  hk.span = parseFloat(root.getAttribute('data-span')) || 0;
  hk.pad = parseFloat(root.getAttribute('data-pad')) || 0;
  var gs = root.getElementsByTagName('g');
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i];
    var f = {
      g: g,
      r: g.getElementsByTagName('rect')[0],
      t: g.getElementsByTagName('text')[0],
      n: g.getAttribute('data-n'),
      d: parseInt(g.getAttribute('data-d'), 10),
      o: parseFloat(g.getAttribute('data-o')),
      v: parseFloat(g.getAttribute('data-v')),
      info: g.getElementsByTagName('title')[0].textContent
    };
    f.fill = f.r.getAttribute('fill');
    hk.frames.push(f);
    g.addEventListener('click', (function (f) { return function () { hkZoom(f); }; })(f));
    g.addEventListener('mouseover',
                       (function (f) { return function () { hkShowDetails(f); }; })(f));
    g.addEventListener('mouseout', function () { hkEl('hk-details').textContent = ' '; });
  }
  hkEl('hk-reset').addEventListener('click', hkReset);
  hkEl('hk-search').addEventListener('click', hkSearchPrompt);
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') { hkReset(); }
    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {
      e.preventDefault();
      hkSearchPrompt();
    }
  });
  // Hooks for scripted use (and tests): ?zoom=<regex> zooms to the first matching frame,
  // ?search=<regex> highlights.
  var q = window.location && window.location.search ? window.location.search : '';
  var m = /[?&]search=([^&]*)/.exec(q);
  if (m) hkSearch(decodeURIComponent(m[1]));
  m = /[?&]zoom=([^&]*)/.exec(q);
  if (m) {
    var re = new RegExp(decodeURIComponent(m[1]));
    for (var k = 0; k < hk.frames.length; k++) {
      if (re.test(hk.frames[k].n)) { hkZoom(hk.frames[k]); break; }
    }
  }
  document.documentElement.setAttribute('data-hk-ready', String(hk.frames.length));
}

window.addEventListener('load', hkInit);
)JS";

}  // namespace heapkit::pprof
