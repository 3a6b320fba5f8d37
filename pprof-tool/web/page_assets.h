// The web UI's style sheet and script, embedded in the binary: pages load nothing from the
// network. The script is small and optional (the pages read without it): sortable top table,
// pan/zoom of the call graph (its buttons: kGraphControls), the timeline's hover text, and the
// flame graph frame's height.
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
#graph { border: 1px solid #ccc; height: 80vh; overflow: auto; }
#graph svg { display: block; }
#graph.pannable { overflow: hidden; cursor: grab; touch-action: none; user-select: none; }
#graph.pannable.dragging { cursor: grabbing; }
#graph:focus-visible { outline: 2px solid #0366d6; outline-offset: 1px; }
#graph-controls[hidden] { display: none; }
#graph-controls { display: flex; gap: 4px; align-items: center; margin-bottom: 4px; }
#graph-controls button { min-width: 2.4em; }
#graph-controls span { color: #444; font-size: 90%; margin-left: 6px; }
#flame { width: 100%; height: 85vh; border: 0; }
pre { font-size: 90%; }
#tl-info { white-space: pre; font-family: monospace; font-size: 90%; margin-top: 6px; }
)CSS";

// The call graph's zoom buttons (above its box); hidden until the script makes them work.
inline constexpr const char* kGraphControls =
    "<div id=\"graph-controls\" role=\"toolbar\" aria-label=\"Zoom the call graph\" "
    "aria-controls=\"graph\" hidden>"
    "<button type=\"button\" data-zoom=\"in\" aria-label=\"Zoom in\" title=\"Zoom in "
    "(+)\">+</button>"
    "<button type=\"button\" data-zoom=\"out\" aria-label=\"Zoom out\" title=\"Zoom out (-)\">"
    "&minus;</button>"
    "<button type=\"button\" data-zoom=\"fit\" title=\"The whole graph (0)\">Fit</button>"
    "<button type=\"button\" data-zoom=\"natural\" title=\"The graph at its own size "
    "(1)\">1:1</button>"
    "<span id=\"graph-zoom\" aria-live=\"polite\"></span>"
    "<span>drag or arrow keys: pan; wheel, + and &minus;: zoom; 0: fit</span></div>";

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
  // Call graph (web_ui.cc puts graphviz's picture in <g id="viewport">): shown at its own size,
  // as the CLI's --svg draws it, and moved by that group's transform: drag or the arrow keys
  // pan; the wheel (around the pointer), + and - zoom; 0 or "Fit" shows it whole (never larger
  // than its own size), 1 or "1:1" its own size again. Without the script the box scrolls.
  var box = document.getElementById('graph');
  var svg = box && box.querySelector('svg');
  var port = svg && svg.querySelector('#viewport');
  var vb = port && svg.viewBox.baseVal;
  if (vb && vb.width > 0 && vb.height > 0) {
    var x0 = vb.x, y0 = vb.y, w = vb.width, h = vb.height;
    var natural = svg.width.baseVal.value / w || 1;  // CSS px per picture unit (pt: 4/3)
    var s = natural, tx = 0, ty = 0, drag = null;
    var shown = document.getElementById('graph-zoom');
    svg.removeAttribute('viewBox');  // the group's transform alone maps the picture to the box
    svg.setAttribute('width', '100%');
    svg.setAttribute('height', '100%');
    box.classList.add('pannable');
    var fitScale = function () {
      return Math.min(box.clientWidth / w, box.clientHeight / h, natural);
    };
    var apply = function () {
      port.setAttribute('transform', 'translate(' + tx + ' ' + ty + ') scale(' + s + ') translate(' +
                        -x0 + ' ' + -y0 + ')');
      svg.dataset.hkZoom = (s / natural).toFixed(3);
      if (shown) shown.textContent = Math.round(100 * s / natural) + '%';
    };
    // The graph's topmost node (its root; the legend aside): where a wide picture is shown.
    var root = null;
    port.querySelectorAll('g.node').forEach(function (n) {
      var title = n.querySelector('title');
      if (title && title.textContent === 'legend') return;
      if (!root || n.getBoundingClientRect().top < root.getBoundingClientRect().top) root = n;
    });
    var show = function (scale) {  // at this scale, the picture's top at the box's top, and
      s = scale;                   // across: the picture centred if it fits, else its root
      tx = (box.clientWidth - w * s) / 2;
      ty = 0;
      apply();
      if (tx >= 0 || !root) return;
      var r = root.getBoundingClientRect(), b = box.getBoundingClientRect();
      tx += b.left + box.clientLeft + box.clientWidth / 2 - (r.left + r.right) / 2;
      tx = Math.min(0, Math.max(box.clientWidth - w * s, tx));
      apply();
    };
    var zoom = function (k, cx, cy) {  // keeps the picture's point under (cx, cy) in place
      var next = Math.min(Math.max(s * k, fitScale() / 4), natural * 8);
      if (cx === undefined) { cx = box.clientWidth / 2; cy = box.clientHeight / 2; }
      tx = cx - (cx - tx) * next / s;
      ty = cy - (cy - ty) * next / s;
      s = next;
      apply();
    };
    var pan = function (dx, dy) { tx += dx; ty += dy; apply(); };
    var actions = {
      'in': function () { zoom(1.25); }, 'out': function () { zoom(0.8); },
      'fit': function () { show(fitScale()); }, 'natural': function () { show(natural); }
    };
    box.addEventListener('wheel', function (e) {
      e.preventDefault();
      var unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? box.clientHeight : 1;
      var dy = Math.max(-300, Math.min(300, e.deltaY * unit));
      var r = box.getBoundingClientRect();
      zoom(Math.exp(-dy / 500), e.clientX - r.left - box.clientLeft, e.clientY - r.top - box.clientTop);
    }, {passive: false});
    box.addEventListener('pointerdown', function (e) {
      if (e.button !== 0) return;
      drag = [e.clientX, e.clientY];
      box.setPointerCapture(e.pointerId);
      box.classList.add('dragging');
    });
    box.addEventListener('pointermove', function (e) {
      if (!drag) return;
      pan(e.clientX - drag[0], e.clientY - drag[1]);
      drag = [e.clientX, e.clientY];
    });
    var drop = function () { drag = null; box.classList.remove('dragging'); };
    box.addEventListener('pointerup', drop);
    box.addEventListener('pointercancel', drop);
    var keys = {
      'ArrowLeft': function () { pan(60, 0); }, 'ArrowRight': function () { pan(-60, 0); },
      'ArrowUp': function () { pan(0, 60); }, 'ArrowDown': function () { pan(0, -60); },
      '+': actions['in'], '=': actions['in'], '-': actions.out, '_': actions.out,
      '0': actions.fit, '1': actions.natural
    };
    box.addEventListener('keydown', function (e) {
      var act = !e.ctrlKey && !e.metaKey && !e.altKey && keys[e.key];
      if (!act) return;
      e.preventDefault();
      act();
    });
    var bar = document.getElementById('graph-controls');
    if (bar) {
      bar.hidden = false;
      bar.querySelectorAll('button[data-zoom]').forEach(function (b) {
        b.addEventListener('click', actions[b.dataset.zoom]);
      });
    }
    show(natural);
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
