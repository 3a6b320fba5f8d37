#!/usr/bin/env python3
"""The web UI against hostile clients on 127.0.0.1.

DNS rebinding and cross-site requests: with the server on 127.0.0.1, a request whose Host is
another name (a rebinding page's own, with or without the port) or the right name on another
port is refused 403 with one line; requests from another site (Sec-Fetch-Site cross-site or
same-site, a foreign Origin) are refused; localhost / 127.0.0.1 / [::1] with the port, a
same-origin browser request and a plain client (curl: neither header) are answered. A server
bound to 0.0.0.0 on purpose answers any Host.

Stalling sockets: 64 idle connections and 16 that send one header byte every second, held open
for a bounded time, must not delay a normal request: each of 10 requests made meanwhile is
answered within 3 s (cpp-httplib's pool of 8 threads made them wait 38 s or forever), and the
server has closed all 80 after 10 s (2 s read timeout, 5 s header deadline). Then SIGTERM ends
the server (exit 0) within a few seconds. Bound to 0.0.0.0, 40 connections from this machine's
non-loopback address (a remote client to the server): 8 are closed at once (32 per client).
Usage: web_guard_check.py <pprof-tool> <work dir>
"""
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import hostile  # noqa: E402
from driver_checks import fail, failures, fresh_dir, verdict  # noqa: E402

pprof, work = sys.argv[1:3]
fresh_dir(work)


prof = os.path.join(work, "small.heap")
hostile.raw_profile(prof, ["app::Load", "app::Parse", "app::Store"])


def start(listen):
    p = subprocess.Popen([pprof, "--http=%s" % listen, "--no_browser", prof],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    port = int(p.stdout.readline().decode().rsplit(":", 1)[1])
    return p, port


def request(port, path, headers, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.putrequest("GET", path, skip_host=True)
        for k, v in headers.items():
            c.putheader(k, v)
        c.endheaders()
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        c.close()


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return fail("server did not stop within 15 s of SIGTERM")
    if rc != 0:
        fail("server exit %d after SIGTERM" % rc)


server, port = start("127.0.0.1:0")
try:
    ok_hosts = ["127.0.0.1:%d" % port, "localhost:%d" % port, "LOCALHOST:%d" % port, "[::1]:%d" % port]
    bad_hosts = ["evil.example:%d" % port, "evil.example", "127.0.0.1", "127.0.0.1:%d" % (port + 1),
                 "localhost.evil.example:%d" % port, ""]
    for h in ok_hosts:
        status, body = request(port, "/ui/top", {"Host": h})
        if status != 200 or "app::Load" not in body:
            fail("Host %r: want 200 with the table, got %d %r" % (h, status, body[:200]))
    for h in bad_hosts:
        status, body = request(port, "/ui/top", {"Host": h} if h else {})
        if status != 403 or len(body.strip().splitlines()) != 1 or "app::Load" in body:
            fail("Host %r: want one line and 403, got %d %r" % (h, status, body[:200]))
    good = {"Host": "127.0.0.1:%d" % port}
    for extra, want in [({"Sec-Fetch-Site": "cross-site"}, 403), ({"Sec-Fetch-Site": "same-site"}, 403),
                        ({"Origin": "http://evil.example"}, 403), ({"Origin": "null"}, 403),
                        ({"Origin": "http://localhost:%d" % (port + 1)}, 403),
                        ({"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:%d" % port}, 200),
                        ({"Sec-Fetch-Site": "none"}, 200), ({}, 200)]:
        status, body = request(port, "/ui/peek?f=Load", dict(good, **extra))
        if status != want:
            fail("%r: want %d, got %d %r" % (extra, want, status, body[:200]))
    print("Host and cross-site: %d requests judged as expected" % (len(ok_hosts) + len(bad_hosts) + 8)
          if not failures else "Host and cross-site: failures above")

    # Stalling sockets, bounded: 64 idle, 16 trickling for at most ~12 s.
    stop_trickle = threading.Event()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
    trickle = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]

    def trickler():
        msg = b"GET /ui/top HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port + b"a" * 1000
        for i in range(len(msg)):
            if stop_trickle.wait(1.0):
                return
            for s in trickle:
                try:
                    s.send(msg[i:i + 1])
                except OSError:
                    pass

    t = threading.Thread(target=trickler)
    t.start()
    worst = 0.0
    try:
        time.sleep(0.5)
        for i in range(10):
            t0 = time.monotonic()
            try:
                status, body = request(port, "/ui/top?i=x%d" % i, good, timeout=30)
            except Exception as e:  # noqa: BLE001
                status, body = None, str(e)
            secs = time.monotonic() - t0
            worst = max(worst, secs)
            if status != 200 or secs > 3.0:
                fail("request %d with 80 stalling sockets open: status %s after %.1f s" % (i, status, secs))
            time.sleep(1.0)
        print("80 stalling sockets: 10 requests, slowest %.2f s" % worst)
        # By now (~11 s) the server has closed every one of them: idle after the 2 s read
        # timeout, trickling at the 5 s header deadline (connection_watch.h).
        open_ones = 0
        for s in idle + trickle:
            s.setblocking(False)
            try:
                open_ones += s.recv(4096) != b""
            except (ConnectionResetError, BrokenPipeError):
                pass
            except BlockingIOError:
                open_ones += 1
        print("stalling sockets still open after %d s: %d of 80" % (10, open_ones))
        if open_ones:
            fail("%d idle or trickling sockets still open after 10 s" % open_ones)
        t0 = time.monotonic()
        stop(server)
        print("SIGTERM with trickling sockets open: stopped in %.1f s" % (time.monotonic() - t0))
    finally:
        stop_trickle.set()
        t.join()
        for s in idle + trickle:
            s.close()
finally:
    if server.poll() is None:
        server.kill()
    server.wait()

server, port = start("0.0.0.0:0")
try:
    status, body = request(port, "/ui/top", {"Host": "profiles.lan.example:%d" % port})
    if status != 200:
        fail("bound to 0.0.0.0 on purpose: another Host should be answered, got %d %r" % (status, body[:200]))
    status, body = request(port, "/ui/top", {"Host": "profiles.lan.example:%d" % port,
                                             "Sec-Fetch-Site": "cross-site"})
    if status != 403:
        fail("bound to 0.0.0.0: a cross-site request should be refused, got %d" % status)
    # Per-client limit: 40 idle connections from this machine's non-loopback address (a remote
    # client as far as the server can tell): the ones above 32 are closed at once.
    local_ip = None
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(("10.255.255.255", 1))  # no packet is sent: picks the outgoing address
        local_ip = probe.getsockname()[0]
        probe.close()
    except OSError:
        pass
    if local_ip and not local_ip.startswith("127."):
        remote = []
        for _ in range(40):  # paced: a burst overflows the listen backlog (5), which drops some
            remote.append(socket.create_connection((local_ip, port)))
            time.sleep(0.01)
        time.sleep(0.5)  # well within the 2 s read timeout: only the limit closes any
        closed = 0
        for s in remote:
            s.setblocking(False)
            try:
                closed += s.recv(1) == b""
            except ConnectionResetError:
                closed += 1
            except BlockingIOError:
                pass
        print("40 connections from %s: %d closed at once" % (local_ip, closed))
        if closed != 8:
            fail("per-client limit: want 8 of 40 connections from %s closed at once, got %d" % (local_ip, closed))
        status, _ = request(port, "/ui/top", {"Host": "127.0.0.1:%d" % port})
        if status != 200:
            fail("a loopback request while a remote client is at its limit: %d" % status)
        for s in remote:
            s.close()
    else:
        print("(no non-loopback address: the per-client limit is not checked)")
    stop(server)
finally:
    if server.poll() is None:
        server.kill()
    server.wait()
sys.exit(verdict('web UI guard'))
