#!/usr/bin/env python3
"""The call graph view in headless Chromium, driven through the DevTools protocol (over
--remote-debugging-pipe: no extra package), with real input events:

  - at first the picture is at its own size: every node label is drawn at least 10 px tall
    (its computed font size times the screen transform), the zoom reads 100%, and the graph's
    root node (its topmost) is in view;
  - the zoom buttons are shown; the wheel zooms in around the pointer (the picture's point
    under it stays put); a drag pans by the distance dragged; with the graph focused, the arrow
    keys pan, '-' zooms out and '0' fits the whole picture into its box; "+" and "1:1" work;
  - the page logs no error, and nothing is refused under its Content-Security-Policy;
  - screenshots at the picture's own size and fitted are kept in <work dir>/screenshots/.
Usage: graph_view_check.py <chromium> <server url> <work dir>
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time

chrome, url, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import fail, failures  # noqa: E402


class Browser:
    """Chromium with the DevTools protocol on file descriptors 3 (in) and 4 (out)."""

    def __init__(self, profile):
        to_child, self.out = os.pipe()
        self.inp, from_child = os.pipe()
        # Above 4, so that moving them to 3 and 4 in the child overwrites nothing.
        child_in = fcntl.fcntl(to_child, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_child, fcntl.F_DUPFD, 10)
        os.close(to_child)
        os.close(from_child)

        def fds():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        shutil.rmtree(profile, ignore_errors=True)
        self.proc = subprocess.Popen(
            [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-dev-shm-usage", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "--window-size=1200,800", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, pass_fds=(3, 4))
        os.close(child_in)
        os.close(child_out)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, **params):
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params}
        if self.session:
            request["sessionId"] = self.session
        os.write(self.out, json.dumps(request).encode() + b"\0")
        deadline = time.time() + 30
        while True:
            m = self.read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=30):
        deadline = time.time() + timeout
        while True:
            for i, m in enumerate(self.events):
                if m["method"] == method:
                    return self.events.pop(i)
            self.events.append(self.read_message(deadline))

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expression[:80], r["exceptionDetails"]))
        return r["result"].get("value")

    def mouse(self, kind, x, y, **extra):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def key(self, key, code, key_code, text=None):
        down = dict(type="keyDown" if text else "rawKeyDown", key=key, code=code,
                    windowsVirtualKeyCode=key_code)
        if text:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", **down)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code,
                  windowsVirtualKeyCode=key_code)

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self):
        try:
            self.call("Browser.close")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


# The view's state as the page shows it: the group's transform, the zoom read-out, the box,
# the picture's extent on screen and the smallest node label's rendered size.
STATE = r"""(function () {
  var box = document.getElementById('graph'), svg = box.querySelector('svg');
  var port = document.getElementById('viewport') || svg.querySelector('g');  // none: not set up
  var m = port.getScreenCTM(), b = box.getBoundingClientRect();
  var p = port.getBoundingClientRect();
  var labels = Array.prototype.slice.call(port.querySelectorAll('g.node text'));
  var px = labels.map(function (t) {
    return parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
  });
  var heights = labels.map(function (t) { return t.getBoundingClientRect().height; });
  var nodes = Array.prototype.filter.call(port.querySelectorAll('g.node'), function (n) {
    var title = n.querySelector('title');
    return !title || title.textContent !== 'legend';
  }).map(function (n) { return n.getBoundingClientRect(); });
  var root = nodes.reduce(function (x, y) { return y.top < x.top ? y : x; });
  var bar = document.getElementById('graph-controls'), readout = document.getElementById('graph-zoom');
  return {ready: svg.dataset.hkReady, zoom: Number(svg.dataset.hkZoom),
          readout: readout ? readout.textContent : '',
          viewport: port.id === 'viewport',
          transform: port.getAttribute('transform'), a: m.a, e: m.e, f: m.f,
          box: [b.left, b.top, b.right, b.bottom], picture: [p.left, p.top, p.right, p.bottom],
          root: [root.left, root.top, root.right, root.bottom], labels: labels.length, min_px: Math.min.apply(null, px),
          min_height: Math.min.apply(null, heights),
          buttons: !bar || bar.hidden ? [] : Array.prototype.map.call(
              bar.querySelectorAll('button'), function (x) { return x.dataset.zoom; }),
          focused: document.activeElement === box};
})()"""

# The picture's point (in its own units) under the screen point (x, y).
UNDER = """(function (x, y) {
  var port = document.getElementById('viewport'), svg = port.ownerSVGElement;
  var p = svg.createSVGPoint(); p.x = x; p.y = y;
  p = p.matrixTransform(port.getScreenCTM().inverse());
  return [p.x, p.y];
})(%f, %f)"""


def button_centre(b, zoom):
    r = b.js("(function () { var r = document.querySelector('#graph-controls button[data-zoom=%s]')"
             ".getBoundingClientRect(); return [(r.left + r.right) / 2, (r.top + r.bottom) / 2]; })()"
             % zoom)
    return r


def click(b, x, y):
    b.mouse("mousePressed", x, y, button="left", buttons=1, clickCount=1)
    b.mouse("mouseReleased", x, y, button="left", buttons=0, clickCount=1)


def main():
    shots = os.path.join(work, "screenshots")
    os.makedirs(shots, exist_ok=True)
    b = Browser(os.path.join(work, "home", "devtools-profile"))
    try:
        b.call("Emulation.setDeviceMetricsOverride", width=1200, height=800,
               deviceScaleFactor=1, mobile=False)
        b.call("Page.enable")
        b.call("Runtime.enable")
        b.call("Log.enable")
        b.call("Page.navigate", url=url + "/ui/")
        b.wait_event("Page.loadEventFired")
        check(b, shots)
        problems = [m["params"] for m in b.events
                    if m["method"] in ("Runtime.exceptionThrown", "Log.entryAdded")
                    and (m["method"] == "Runtime.exceptionThrown"
                         or (m["params"]["entry"]["level"] == "error"  # the browser's own ask:
                             and not m["params"]["entry"].get("url", "").endswith("/favicon.ico")))]
        if problems:
            fail("the page logged errors or refusals: %r" % problems[:3])
    finally:
        b.close()
    if failures:
        sys.exit(1)
    print("PASS: the call graph at its own size (labels >= 10 px), wheel, drag, keys and "
          "buttons move it; screenshots in %s" % shots)


def check(b, shots):
    s = b.js(STATE)
    print("graph at first: zoom %s, %d labels, smallest %.1f px (box height %.1f px)"
          % (s["readout"], s["labels"], s["min_px"], s["min_height"]))
    b.screenshot(os.path.join(shots, "graph-own-size.png"))
    if s["min_px"] < 10 or s["min_height"] < 10:
        fail("a node label is drawn %.1f px (box %.1f px) tall, want >= 10" % (s["min_px"], s["min_height"]))
    if s["ready"] != "1" or s["labels"] == 0 or not s["viewport"]:
        return fail("the graph was not set up for pan and zoom (%r)" % s)
    if s["zoom"] != 1 or s["readout"] != "100%":
        fail("the graph does not start at its own size: zoom %r, %r" % (s["zoom"], s["readout"]))
    root, box = s["root"], s["box"]
    if not (root[0] >= box[0] and root[2] <= box[2] and root[1] >= box[1] and root[3] <= box[3]):
        fail("the first view does not show the graph's root node: %r in %r" % (root, box))
    if s["buttons"] != ["in", "out", "fit", "natural"]:
        fail("the zoom buttons are %r" % s["buttons"])

    # The wheel, over a point of the box: zooms in, that point of the picture stays under it.
    left, top, right, bottom = s["box"]
    x, y = left + (right - left) * 0.4, top + (bottom - top) * 0.3
    before = b.js(UNDER % (x, y))
    b.mouse("mouseMoved", x, y)
    b.mouse("mouseWheel", x, y, deltaX=0, deltaY=-200)
    time.sleep(0.2)
    w = b.js(STATE)
    after = b.js(UNDER % (x, y))
    if not w["zoom"] > s["zoom"] or w["transform"] == s["transform"]:
        fail("the wheel did not zoom in: %r -> %r" % (s["transform"], w["transform"]))
    if abs(before[0] - after[0]) * w["a"] > 1 or abs(before[1] - after[1]) * w["a"] > 1:
        fail("the wheel moved the point under the pointer: %r -> %r" % (before, after))

    # A drag pans by the distance dragged.
    b.mouse("mousePressed", x, y, button="left", buttons=1, clickCount=1)
    b.mouse("mouseMoved", x + 60, y + 20, button="left", buttons=1)
    b.mouse("mouseMoved", x + 120, y + 40, button="left", buttons=1)
    b.mouse("mouseReleased", x + 120, y + 40, button="left", buttons=0, clickCount=1)
    d = b.js(STATE)
    if abs(d["e"] - w["e"] - 120) > 1 or abs(d["f"] - w["f"] - 40) > 1 or d["a"] != w["a"]:
        fail("a drag of (120, 40) moved the picture by (%.1f, %.1f)" % (d["e"] - w["e"], d["f"] - w["f"]))

    # The keyboard: Tab reaches the graph; arrows pan, '-' zooms out, '0' fits.
    b.js("document.querySelector('#graph-controls button[data-zoom=natural]').focus()")
    b.key("Tab", "Tab", 9)
    k = b.js(STATE)
    if not k["focused"]:
        fail("Tab from the zoom buttons does not reach the graph")
    b.key("ArrowRight", "ArrowRight", 39)
    r = b.js(STATE)
    if abs(r["e"] - (k["e"] - 60)) > 1:
        fail("ArrowRight did not pan by 60 px: %.1f -> %.1f" % (k["e"], r["e"]))
    b.key("-", "Minus", 189, "-")
    m = b.js(STATE)
    if not m["zoom"] < r["zoom"]:
        fail("'-' did not zoom out: %r -> %r" % (r["zoom"], m["zoom"]))
    b.key("0", "Digit0", 48, "0")
    f = b.js(STATE)
    inside = (f["picture"][0] >= f["box"][0] - 1 and f["picture"][1] >= f["box"][1] - 1 and
              f["picture"][2] <= f["box"][2] + 1 and f["picture"][3] <= f["box"][3] + 1)
    if not inside or f["zoom"] > 1:
        fail("'0' did not fit the picture into its box: %r in %r" % (f["picture"], f["box"]))
    b.screenshot(os.path.join(shots, "graph-fit.png"))
    print("graph fitted: zoom %s" % f["readout"])

    # The buttons, clicked with the mouse.
    click(b, *button_centre(b, "in"))
    i = b.js(STATE)
    if abs(i["zoom"] - min(f["zoom"] * 1.25, 8)) > 0.002:
        fail("'+' zoomed %r -> %r, want x1.25" % (f["zoom"], i["zoom"]))
    click(b, *button_centre(b, "natural"))
    n = b.js(STATE)
    if n["zoom"] != 1 or n["min_px"] < 10:
        fail("'1:1' did not bring the picture back to its own size: %r" % n["zoom"])
    click(b, *button_centre(b, "fit"))
    if b.js(STATE)["zoom"] != f["zoom"]:
        fail("'Fit' did not fit as '0' did")


if __name__ == "__main__":
    main()
