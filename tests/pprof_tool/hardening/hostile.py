"""Shared by the hardening checks: hostile profiles and a bounded pprof-tool runner."""
import os
import resource
import subprocess
import time


def raw_profile(path, names):
    """A --raw legacy profile (symbols embedded: no binary needed), one sample per name, each
    stack `name -> main`."""
    with open(path, "w") as f:
        f.write("--- symbol\nbinary=hostile\n")
        for i, name in enumerate(names):
            f.write("0x%x %s\n" % (0x1000 + 0x10 * i, name))
        f.write("0x%x main\n---\n" % 0x900000)
        f.write("heap profile: %d: %d [%d: %d] @ heapprofile\n"
                % (len(names), 100 * len(names), len(names), 100 * len(names)))
        for i in range(len(names)):
            f.write("1: 100 [1: 100] @ 0x%x 0x%x\n" % (0x1000 + 0x10 * i, 0x900001))


def run(cmd, timeout):
    """Runs cmd; returns (exit status or None on timeout, stdout, stderr, seconds, max RSS MiB
    of the children so far)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, "", "timeout"
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return rc, out, err, time.monotonic() - t0, rss


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num, value):
    """One protobuf field: int -> varint, bytes/str -> length-delimited."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def proto_profile(path, functions):
    """An uncompressed heap profile.proto (hand-encoded, google/pprof's schema): one sample per
    (name, filename, line) in `functions`, each a one-frame stack with its Line."""
    strings = [b""]

    def s(text):
        if isinstance(text, str):
            text = text.encode()
        if text not in strings:
            strings.append(text)
        return strings.index(text)

    msg = b""
    for t, u in [("alloc_objects", "count"), ("alloc_space", "bytes"),
                 ("inuse_objects", "count"), ("inuse_space", "bytes")]:
        msg += _field(1, _field(1, s(t)) + _field(2, s(u)))
    for i, (name, filename, line) in enumerate(functions, start=1):
        msg += _field(2, _field(1, i) + b"".join(_field(2, v) for v in (1, 100, 1, 100)))
        msg += _field(4, _field(1, i) + _field(3, 0x1000 * i) + _field(4, _field(1, i) + _field(2, line)))
        msg += _field(5, _field(1, i) + _field(2, s(name)) + _field(3, s(name)) + _field(4, s(filename)))
    for text in strings:
        msg += _field(6, text)
    with open(path, "wb") as f:
        f.write(msg)
