"""The runtime timeline drawn (pprof-tool --timeline=file.svg, the web UI's timeline view) and
a damaged timeline file refused, checked against the rows of the file itself (run_timeline.py
calls check_views with the rows it parsed).

The SVG is read as a chart: its x and y scales are recovered from its own axis tick labels
(seconds after profiling start; round byte values), so the checks hold whatever the layout:
  - the exact in-use curve's highest point is the file's peak row (x within 1 px of that row's
    time, y within 1 px of its value), and the peak mark stands there;
  - the bands carry the stacks' leaf functions (saw_a, saw_b, saw_c), named as the text does;
  - with --window=T0:T1 the shaded rectangle spans T0..T1 (within 1 px) and the window's peak
    ring stands on the row of the highest exact in-use inside the window.
The web UI opened on the file serves that view, and window= adds the stacks at the window's
peak (the highest stack of that row first). A file cut inside a row line, one cut at a line
boundary and one with a corrupt row entry each give one line on stderr and exit status 2.
"""
import os
import re
import signal
import subprocess
import xml.etree.ElementTree as ET

from driver_checks import check, local_page as get

SVG = '{http://www.w3.org/2000/svg}'
UNITS = {'B': 1, 'kB': 1024, 'MB': 1024 ** 2, 'GB': 1024 ** 3}


def fit(pairs):
    """Least-squares line through (value, pixel) pairs: returns pixel(value)."""
    n = len(pairs)
    mv = sum(v for v, _ in pairs) / n
    mp = sum(p for _, p in pairs) / n
    slope = sum((v - mv) * (p - mp) for v, p in pairs) / sum((v - mv) ** 2 for v, _ in pairs)
    return lambda v: mp + slope * (v - mv)


def axes(root):
    """x(seconds) and y(bytes) of the chart, from its tick labels."""
    xs, ys = [], []
    for t in root.iter(SVG + 'text'):
        text = (t.text or '').strip()
        m = re.fullmatch(r'([\d.]+)s', text)
        if m and t.get('text-anchor') == 'middle':
            xs.append((float(m.group(1)), float(t.get('x'))))
        m = re.fullmatch(r'([\d.]+)(B|kB|MB|GB)', text)
        if (m or text == '0') and t.get('text-anchor') == 'end':
            value = float(m.group(1)) * UNITS[m.group(2)] if m else 0.0
            ys.append((value, float(t.get('y')) - 4))  # labels sit 4 px under their line
    return xs, ys


def check_svg(pprof_tool, program, path, rows, window, out):
    args = [pprof_tool, '--timeline=' + out] + (['--window=%.3f:%.3f' % window] if window else [])
    p = subprocess.run(args + [program, path], capture_output=True, text=True, timeout=120)
    if not check(p.returncode == 0 and os.path.exists(out),
                 '%s: %s' % (' '.join(args[:3]), p.stderr[-400:])):
        return
    root = ET.parse(out).getroot()
    xs, ys = axes(root)
    if not check(len(xs) >= 2 and len(ys) >= 2, 'SVG: axis ticks x %r y %r' % (xs, ys)):
        return
    x_of, y_of = fit(xs), fit(ys)
    curves = {c.get('data-name'): [tuple(float(v) for v in pt.split(','))
                                   for pt in c.get('points').split()]
              for c in root.iter(SVG + 'polyline')}
    exact = curves.get('exact in-use (usable bytes)')  # a sampled run's exact: the allocator's
    if not check(exact is not None and len(exact) == len(rows) and 'RSS' in curves,
                 'SVG: curves %r, want exact in-use with %d points and RSS' % (
                     sorted(curves), len(rows))):
        return
    peak = max(range(len(rows)), key=lambda i: (rows[i][1], -i))
    t_peak, v_peak = rows[peak][0] / 1000.0, rows[peak][1]
    top = min(range(len(exact)), key=lambda i: (exact[i][1], i))
    print('SVG %s: exact curve highest at x=%.1f y=%.1f; peak row %.3f s %d bytes -> x=%.1f y=%.1f'
          % (os.path.basename(out), exact[top][0], exact[top][1], t_peak, v_peak,
             x_of(t_peak), y_of(v_peak)))
    check(abs(exact[top][0] - x_of(t_peak)) <= 1.0 and abs(exact[top][1] - y_of(v_peak)) <= 1.0,
          'SVG: the exact curve\'s highest point (%.1f, %.1f) is not the peak row (%.1f, %.1f)' % (
              exact[top][0], exact[top][1], x_of(t_peak), y_of(v_peak)))
    marks = [g for g in root.iter(SVG + 'g') if g.get('class') == 'peak']
    check(len(marks) == 1 and abs(float(marks[0].find(SVG + 'line').get('x1')) - x_of(t_peak)) <= 1.0,
          'SVG: no peak mark at the peak row\'s x %.1f' % x_of(t_peak))
    bands = {b.get('data-name') for b in root.iter(SVG + 'polygon')}
    legend = {(t.text or '') for g in root.iter(SVG + 'g') if g.get('class') == 'legend'
              for t in g.iter(SVG + 'text')}
    for fn in ('saw_a', 'saw_b', 'saw_c'):
        check(any(fn in (b or '') for b in bands) and any(fn in l for l in legend),
              'SVG: no band or legend entry named %s (bands %r)' % (fn, sorted(map(str, bands))))
    shaded = [r for r in root.iter(SVG + 'rect') if r.get('class') == 'window']
    if window is None:
        check(not shaded, 'SVG without --window has a shaded window')
        return
    if not check(len(shaded) == 1, 'SVG --window: %d shaded windows' % len(shaded)):
        return
    x0, w = float(shaded[0].get('x')), float(shaded[0].get('width'))
    print('window %.3f:%.3f shaded x %.1f..%.1f, want %.1f..%.1f' % (
        window[0], window[1], x0, x0 + w, x_of(window[0]), x_of(window[1])))
    check(abs(x0 - x_of(window[0])) <= 1.0 and abs(x0 + w - x_of(window[1])) <= 1.0,
          'SVG: window shaded at %.1f..%.1f, want %.1f..%.1f' % (
              x0, x0 + w, x_of(window[0]), x_of(window[1])))
    inside = [i for i, r in enumerate(rows) if window[0] <= r[0] / 1000.0 <= window[1]]
    wpeak = max(inside, key=lambda i: (rows[i][1], -i))
    rings = [c for c in root.iter(SVG + 'circle') if c.get('class') == 'window-peak']
    check(len(rings) == 1 and abs(float(rings[0].get('cx')) - x_of(rows[wpeak][0] / 1000.0)) <= 1.0,
          'SVG: the window\'s peak ring is not on row %.3f s' % (rows[wpeak][0] / 1000.0))


def first_top_name(html):
    m = re.search(r'<td class="name"><a [^>]*>([^<]*)</a>', html)
    return m.group(1) if m else None


def check_web(pprof_tool, program, path, window, top_in_window):
    server = subprocess.Popen([pprof_tool, '--no_browser', '--http=127.0.0.1:0', program, path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = server.stdout.readline().decode()
        prefix = 'Serving web UI on http://127.0.0.1:'
        if not check(line.startswith(prefix), 'web UI: first line %r' % line):
            return
        port = int(line[len(prefix):])
        w = '%.3f:%.3f' % window
        status, body = get(port, '/ui/timeline')
        check(status == 200 and '<svg' in body and 'class="curve"' in body and 'saw_a' in body and
              'name="window"' in body and 'class="window"' not in body,
              '/ui/timeline: status %d: %s' % (status, body[:300]))
        status, body = get(port, '/ui/timeline?window=' + w)
        check(status == 200 and 'class="window"' in body and 'window-stacks' in body and
              top_in_window in (first_top_name(body.split('window-stacks', 1)[-1]) or ''),
              '/ui/timeline?window=%s: status %d, first stack %r, want %s' % (
                  w, status, first_top_name(body.split('window-stacks', 1)[-1]), top_in_window))
        status, body = get(port, '/ui/top?window=' + w)
        check(status == 200 and top_in_window in (first_top_name(body) or '') and
              'Timeline window ' + w in body,
              '/ui/top?window=%s: status %d, first %r' % (w, status, first_top_name(body)))
        for bad in ('abc', '9:1', '9999:10000'):
            status, body = get(port, '/ui/timeline?window=' + bad)
            check(status == 400 and body.count('\n') == 1 and 'window=' + bad in body,
                  '/ui/timeline?window=%s: want 400 and one line, got %d %r' % (bad, status, body))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


def check_damaged(pprof_tool, program, path, workdir):
    data = open(path, 'rb').read()
    rows_at = [m.start() for m in re.finditer(rb'# heapkit: timeline row ', data)]
    middle = rows_at[len(rows_at) // 2]
    entry = re.search(rb' (\d+):(\d+):(\d+)', data[middle:]).start() + middle
    cases = {
        'cut inside a row': data[:middle + 30],
        'cut at a line boundary': data[:middle],
        'corrupt row entry': data[:entry] + b' 7:x:12' + data[entry + len(b' 7:x:12'):],
    }
    for name, content in cases.items():
        damaged = os.path.join(workdir, 'damaged.timeline.heap')
        with open(damaged, 'wb') as f:
            f.write(content)
        for extra in ([], ['--timeline=' + os.path.join(workdir, 'damaged.svg')]):
            args = [pprof_tool] + (extra or ['--timeline']) + [program, damaged]
            p = subprocess.run(args, capture_output=True, text=True, timeout=60)
            lines = p.stderr.strip().splitlines()
            print('%s (%s): exit %d, %r' % (name, ' '.join(extra or ['--timeline']),
                                          p.returncode, p.stderr.strip()))
            check(p.returncode == 2 and len(lines) == 1 and 'damaged.timeline.heap' in lines[0],
                  '%s: want exit 2 and one line naming the file, got %d %r' % (
                      name, p.returncode, p.stderr))


def check_views(pprof_tool, program, path, rows, window, top_in_window, workdir):
    """`rows`: (t_ms, exact, ...) per row of `path`; `window`: (t0, t1) seconds after profiling
    start, whose peak row's highest stack is `top_in_window`."""
    check_svg(pprof_tool, program, path, rows, None, os.path.join(workdir, 'timeline.svg'))
    check_svg(pprof_tool, program, path, rows, window, os.path.join(workdir, 'window.svg'))
    check_web(pprof_tool, program, path, window, top_in_window)
    check_damaged(pprof_tool, program, path, workdir)
