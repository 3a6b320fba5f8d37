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


def proto_bomb(path, kind, n):
    """A heap profile.proto with one sample or location carrying n nested repeated entries of
    `kind`: "location_ids" (packed, 1 byte each), "labels" (empty Label messages, 2 bytes each),
    "lines" (Lines of one location naming a function with a 4 KiB name, ~4 bytes each)."""
    strings = [b"", b"inuse_objects", b"count", b"inuse_space", b"bytes", b"f" * 4096, b"/src/f.cc"]
    msg = _field(1, _field(1, 1) + _field(2, 2)) + _field(1, _field(1, 3) + _field(2, 4))
    values = _field(2, 1) + _field(2, 100)
    if kind == "location_ids":
        msg += _field(2, _field(1, b"\x01" * n) + values)
    elif kind == "labels":
        msg += _field(2, _field(1, 1) + values + _field(3, b"") * n)
    else:
        msg += _field(2, _field(1, 1) + values)
    line = _field(4, _field(1, 1) + _field(2, 1))
    msg += _field(4, _field(1, 1) + _field(3, 0x1000) + (line * n if kind == "lines" else line))
    msg += _field(5, _field(1, 1) + _field(2, 5) + _field(4, 6))
    for text in strings:
        msg += _field(6, text)
    with open(path, "wb") as f:
        f.write(msg)


def proto_spread_bomb(path, kind, per, count, name_bytes=4096):
    """Like proto_bomb, but `count` samples (kind "location_ids") or locations (kind "lines"),
    each with `per` entries: at the per-message caps, the totals decide."""
    strings = [b"", b"inuse_objects", b"count", b"inuse_space", b"bytes", b"f" * name_bytes, b"/src/f.cc"]
    parts = [_field(1, _field(1, 1) + _field(2, 2)), _field(1, _field(1, 3) + _field(2, 4))]
    values = _field(2, 1) + _field(2, 100)
    line = _field(4, _field(1, 1) + _field(2, 1))
    if kind == "location_ids":
        ids = _field(1, b"\x01" * per)
        parts += [_field(2, ids + values)] * count
        parts.append(_field(4, _field(1, 1) + _field(3, 0x1000) + line))
    else:
        parts.append(_field(2, _field(1, 1) + values))
        lines = line * per
        for i in range(1, count + 1):
            parts.append(_field(4, _field(1, i) + _field(3, 0x1000 * i) + lines))
    parts.append(_field(5, _field(1, 1) + _field(2, 5) + _field(4, 6)))
    parts += [_field(6, t) for t in strings]
    with open(path, "wb") as f:
        f.write(b"".join(parts))
