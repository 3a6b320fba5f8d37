#!/usr/bin/env python3
"""Writes a synthetic legacy heap profile (heapprofile, exact counts) for a non-PIE binary:
<stacks> distinct stacks whose PCs land inside the binary's gen:: functions (leaf first: a
gen::leaf_N, then 3..20 callers), with a MAPPED_LIBRARIES section built from its PT_LOADs.
Usage: gen_profile.py <binary> <stacks> <out.heap> [seed]"""
import random
import re
import subprocess
import sys

binary, nstacks, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 42)
leaves, callers = [], []
for line in subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) != 4 or parts[2] not in "tT":
        continue
    start, size, name = int(parts[0], 16), int(parts[1], 16), parts[3]
    if size < 4:
        continue
    if "leaf_" in name:
        leaves.append((start, size))
    elif "mid_" in name or "BoxILi" in name:
        callers.append((start, size))
main = None
for line in subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 4 and parts[3] == "main":
        main = (int(parts[0], 16), int(parts[1], 16))

# Real code has a few call sites per function: 3 fixed return addresses per function.
sites = {}


def pc_in(fn, ret):
    start, size = fn
    if fn not in sites:
        sites[fn] = [start + rng.randint(1, size - 1) for _ in range(3)]
    return rng.choice(sites[fn])

seen = set()
samples = []
while len(samples) < nstacks:
    depth = rng.randint(3, 20)
    stack = [pc_in(rng.choice(leaves), False)]
    stack += [pc_in(rng.choice(callers), True) for _ in range(depth)]
    stack.append(pc_in(main, True))
    key = tuple(stack)
    if key in seen:
        continue
    seen.add(key)
    n = rng.randint(1, 50)
    size = rng.choice([16, 32, 64, 256, 1024, 4096, 65536])
    alloc_n = n + rng.randint(0, 50)
    samples.append((n, n * size, alloc_n, alloc_n * size, stack))

maps = []
ph = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
for m in re.finditer(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)", ph, re.M):
    off, vaddr, filesz, memsz, flags = (int(m.group(1), 16), int(m.group(2), 16),
                                        int(m.group(3), 16), int(m.group(4), 16), m.group(5))
    lo = vaddr & ~0xfff
    hi = (vaddr + memsz + 0xfff) & ~0xfff
    perms = "r" + ("w" if "W" in flags else "-") + ("x" if "E" in flags else "-") + "p"
    maps.append("%012x-%012x %s %08x 08:01 4242       %s" % (lo, hi, perms, off & ~0xfff, binary))

tot = [sum(s[i] for s in samples) for i in range(4)]
with open(out, "w") as f:
    f.write("heap profile: %6d: %8d [%6d: %8d] @ heapprofile\n" % tuple(tot))
    for s in samples:
        f.write("%6d: %8d [%6d: %8d] @ %s\n" % (s[0], s[1], s[2], s[3],
                                                " ".join("0x%016x" % pc for pc in s[4])))
    f.write("\nMAPPED_LIBRARIES:\n" + "\n".join(maps) + "\n")
print("%s: %d stacks, %d distinct PCs, %d leaf and %d caller functions" % (
    out, len(samples), len({pc for s in samples for pc in s[4]}), len(leaves), len(callers)))
