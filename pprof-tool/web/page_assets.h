// The web UI's style sheet and script, embedded in the binary: pages load nothing from the
// network. The script is small and optional (the pages read without it): sortable top table,
// pan/zoom of the call graph, the timeline's hover text, and the flame graph frame's height.
#pragma once

namespace heapkit::pprof {

inline constexpr const char* kPageCss = R"CSS(
body { font-family: sans-serif; margin: 0; }
#menu { background: #24292e; color: #fff; padding: 6px 10px; display: flex; flex-wrap: wrap;
        gap: 10px; align-items: center; }
#menu a { color: #fff; text-decoration: none; padding: 3px 8px; border-radius: 3px; }
#menu a.active { background: #586069; }
#menu form { display: flex; gap: 6px; align-items: center; margin-left: auto; }
#menu input { width: 9em; }
#content { padding: 10px; }
#legend { color: #444; font-size: 90%; margin-bottom: 8px; }
.error { color: #b00; }
table.top { border-collapse: collapse; font-family: monospace; }
table.top th { cursor: pointer; background: #eee; padding: 3px 8px; text-align: right; }
table.top td { padding: 2px 8px; text-align: right; }
table.top td.name, table.top th.name { text-align: left; }
table.top tr:hover { background: #ffd; }
#graph { border: 1px solid #ccc; height: 80vh; overflow: hidden; cursor: move; }
#graph svg { width: 100%; height: 100%; }
#flame { width: 100%; height: 85vh; border: 0; }
pre { font-size: 90%; }
#tl-info { white-space: pre; font-family: monospace; font-size: 90%; margin-top: 6px; }
)CSS";

inline constexpr const char* kPageScript = R"JS(
(function () {
  // Top table: click a header to sort by it (numbers by their data-v value), again to reverse.
  document.querySelectorAll('table.top th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = th.closest('table').tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var dir = th.dataset.dir === 'desc' ? 1 : -1;
      th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      rows.sort(function (a, b) {
        var x = a.cells[col], y = b.cells[col];
        if (x.dataset.v !== undefined) return dir * (Number(x.dataset.v) - Number(y.dataset.v));
        return dir * x.textContent.localeCompare(y.textContent);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  // Call graph: wheel zooms around the pointer, dragging pans (both through the viewBox).
  var box = document.getElementById('graph');
  var svg = box && box.querySelector('svg');
  if (svg) {
    var vb = svg.viewBox.baseVal;
    var drag = null;
    box.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = svg.getBoundingClientRect();
      var k = e.deltaY < 0 ? 0.8 : 1.25;
      var px = vb.x + (e.clientX - r.left) / r.width * vb.width;
      var py = vb.y + (e.clientY - r.top) / r.height * vb.height;
      vb.x = px - (px - vb.x) * k; vb.y = py - (py - vb.y) * k;
      vb.width *= k; vb.height *= k;
    });
    box.addEventListener('mousedown', function (e) { drag = [e.clientX, e.clientY]; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var r = svg.getBoundingClientRect();
      vb.x -= (e.clientX - drag[0]) * vb.width / r.width;
      vb.y -= (e.clientY - drag[1]) * vb.height / r.height;
      drag = [e.clientX, e.clientY];
    });
    svg.dataset.hkReady = '1';
  }
  // Timeline: hovering a dump shows its reason line and values beside the chart.
  var info = document.getElementById('tl-info');
  // Shift-click: the dump chosen in the menu bar, compared with this one (base=).
  document.querySelectorAll('svg.timeline rect.dump').forEach(function (rect) {
    rect.addEventListener('mouseover', function () {
      info.textContent = rect.querySelector('title').textContent;
    });
    rect.addEventListener('click', function (e) {
      var shown = document.querySelector('select[name=dump]');
      var link = rect.closest('a');
      if (!e.shiftKey || !shown || !link) return;
      e.preventDefault();
      var url = new URL(link.getAttribute('href'), location.href);
      url.searchParams.set('dump', shown.value === 'all' ? rect.dataset.dump : shown.value);
      url.searchParams.set('base', rect.dataset.dump);
      location.href = url.pathname + url.search;
    });
  });
  // Flame graph: the frame takes the picture's own height (no empty band around it).
  var flame = document.getElementById('flame');
  if (flame) {
    var fit = function () {
      var doc = flame.contentDocument, root = doc && doc.documentElement;
      var vb = root && root.viewBox && root.viewBox.baseVal;
      if (vb && vb.width > 0) flame.style.height = Math.ceil(flame.clientWidth * vb.height / vb.width) + 'px';
    };
    flame.addEventListener('load', fit);
    window.addEventListener('resize', fit);
    fit();
  }
  if (document.body) document.body.dataset.hkReady = '1';
})();
)JS";

}  // namespace heapkit::pprof
