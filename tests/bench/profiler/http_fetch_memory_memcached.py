#!/usr/bin/env python3
"""What symbolized /debug/pprof/heap fetches leave in Debian's memcached (stripped; libevent,
libsasl2, libssl, libcrypto): its 64 MiB cache filled with 80,000 values of 1000 bytes, then
RSS (smaps_rollup) and heapkit_heap_inuse_bytes before, after the 1st and after the 100th fetch,
each read 1.5 s after the last fetch.

  http_fetch_memory_memcached.py BUILD_DIR      (memcached from tests/scripts/install_deps.sh)
"""
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

build = sys.argv[1]
env = dict(os.environ, HEAPKIT_HTTP="127.0.0.1:0", LD_PRELOAD=os.path.join(build, "libheapkit.so"))
env.pop("TCMALLOC_SAMPLE_PARAMETER", None)
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
p = subprocess.Popen(["memcached", "-m", "64", "-u", "root", "-p", str(port), "-U", "0",
                      "-l", "127.0.0.1"], stderr=subprocess.PIPE, env=env)
url = "http://" + re.search(r"listening on (\S+)", p.stderr.readline().decode()).group(1)
time.sleep(0.5)
client = socket.create_connection(("127.0.0.1", port))
value = b"x" * 1000
for i in range(80000):
    client.sendall(b"set key%d 0 0 %d noreply\r\n%s\r\n" % (i, len(value), value))
client.sendall(b"get key1\r\n")
client.recv(4096)


def get(path):
    with urllib.request.urlopen(url + path, timeout=60) as r:
        return r.read()


def settled(tag):
    time.sleep(1.5)
    with open("/proc/%d/smaps_rollup" % p.pid) as f:
        rss = int(re.search(r"^Rss:\s+(\d+) kB", f.read(), re.M).group(1)) / 1024
    inuse = float(re.search(rb"^heapkit_heap_inuse_bytes (\S+)$", get("/metrics"),
                            re.M).group(1)) / 2**20
    print("%-10s RSS %7.2f MiB  heapkit_heap_inuse_bytes %7.2f MiB" % (tag, rss, inuse))


get("/metrics")
settled("before")
get("/debug/pprof/heap")
settled("after 1")
for _ in range(99):
    get("/debug/pprof/heap")
settled("after 100")
p.terminate()
p.wait(timeout=30)
