"""Checks that every leak report in a stderr capture is well formed, and summarises them.

    check_leak_reports.py <stderr-file> <pprof-tool> [--expect-all-groups]

Lines relayed by a parent with a "remote: " prefix (git's sideband) count as the child's.
For each "Leak check _main_ detected leaks of N bytes in M objects" block (one per process):
- "The K largest leaks:" matches the number of "Leak of X bytes in Y objects allocated from:
  (direct leak|indirect leak)" groups printed, each with at least one "@ " frame line;
- the groups' sums do not exceed N and M, and equal them when fewer than
  HEAP_CHECK_MAX_LEAKS (20) groups were printed or --expect-all-groups is given;
- the suggested pprof-tool command names a .heap file that exists, whose header holds the
  report's totals (all groups, printed or not), and that `pprof-tool --text <binary> <file>` reads (exit 0, a total line);
- the block ends with gperftools' 'Exiting with error code (instead of crashing) because of
  whole-program memory leaks'.
Prints one line per problem, then a summary line (last line):
  checked P processes: L leaking (B bytes in O objects: direct D B, indirect I B), C clean
Exit status 1 if any problem was found.
"""
import os
import re
import subprocess
import sys

LEAK_CHECK = re.compile(r"^Leak check _main_ detected leaks of (\d+) bytes in (\d+) objects$")
LARGEST = re.compile(r"^The (\d+) largest leaks:$")
GROUP = re.compile(r"^Leak of (\d+) bytes in (\d+) objects allocated from: \((direct|indirect) leak\)$")
PPROF_CMD = re.compile(r'^(?:/\S*/)?pprof-tool (\S+) "([^"]+)" --inuse_objects')
EXITING = re.compile(r'^Exiting with error code \(instead of crashing\) because of whole-program '
                     r'memory leaks$')
NO_LEAKS = re.compile(r'^No leaks found for check "_main_"')
HEADER = re.compile(r"^heap profile: +(\d+): +(\d+) \[ *(\d+): +(\d+)\] @ heapprofile$")


def main():
    path, pprof = sys.argv[1], sys.argv[2]
    expect_all = "--expect-all-groups" in sys.argv[3:]
    problems = []
    blocks = []
    clean = 0
    cur = None
    with open(path, errors="replace") as f:
        for raw in f:
            # Reports relayed by a parent carry its prefix (git's sideband: "remote: ", padded).
            line = raw.rstrip("\n").rstrip(" ")
            if line.startswith("remote: "):
                line = line[len("remote: "):]
            m = LEAK_CHECK.match(line)
            if m:
                cur = {"bytes": int(m.group(1)), "objects": int(m.group(2)), "largest": None,
                       "groups": [], "cmd": None, "exit": None}
                blocks.append(cur)
                continue
            if NO_LEAKS.match(line):
                clean += 1
                continue
            if cur is None:
                continue
            if (m := LARGEST.match(line)):
                cur["largest"] = int(m.group(1))
            elif (m := GROUP.match(line)):
                cur["groups"].append([int(m.group(1)), int(m.group(2)), m.group(3), 0])
            elif line.startswith("\t@ ") and cur["groups"]:
                cur["groups"][-1][3] += 1
            elif (m := PPROF_CMD.match(line)):
                cur["cmd"] = (m.group(1), m.group(2))
            elif (m := EXITING.match(line)):
                cur["exit"] = True
                cur = None

    direct = indirect = 0
    for i, b in enumerate(blocks):
        where = f"report {i + 1} ({b['bytes']} bytes)"
        g = b["groups"]
        if b["largest"] is None or b["largest"] != len(g):
            problems.append(f"{where}: 'The K largest leaks' says {b['largest']}, {len(g)} groups printed")
        if any(x[3] == 0 for x in g):
            problems.append(f"{where}: a group has no stack frames")
        gb, go = sum(x[0] for x in g), sum(x[1] for x in g)
        all_printed = expect_all or len(g) < 20
        if gb > b["bytes"] or go > b["objects"] or (all_printed and (gb, go) != (b["bytes"], b["objects"])):
            problems.append(f"{where}: groups sum to {gb} bytes in {go} objects, total says "
                            f"{b['bytes']} in {b['objects']}")
        direct += sum(x[0] for x in g if x[2] == "direct")
        indirect += sum(x[0] for x in g if x[2] == "indirect")
        if b["exit"] is None:
            problems.append(f"{where}: no 'Exiting with error code' line")
        if b["cmd"] is None:
            problems.append(f"{where}: no pprof-tool command line")
            continue
        binary, heap = b["cmd"]
        if not os.path.exists(heap):
            problems.append(f"{where}: leak profile {heap} does not exist")
            continue
        with open(heap, errors="replace") as hf:
            hdr = hf.readline().rstrip("\n")
        m = HEADER.match(hdr)
        if not m:
            problems.append(f"{where}: {heap}: bad header {hdr!r}")
        elif (int(m.group(2)), int(m.group(1))) != (b["bytes"], b["objects"]):
            problems.append(f"{where}: {heap} holds {m.group(2)} bytes in {m.group(1)} objects, "
                            f"the report says {b['bytes']} in {b['objects']}")
        try:
            r = subprocess.run([pprof, "--text", binary, heap], capture_output=True, text=True,
                               timeout=60, env={k: v for k, v in os.environ.items()
                                                if k not in ("LD_PRELOAD", "HEAPCHECK")})
            if r.returncode != 0 or " total" not in r.stdout:
                problems.append(f"{where}: pprof-tool --text {binary} {heap}: exit {r.returncode}, "
                                f"{(r.stderr.strip().splitlines() or [''])[-1]}")
        except subprocess.TimeoutExpired:
            problems.append(f"{where}: pprof-tool --text {binary} {heap} timed out")

    for p in problems:
        print(p)
    tb = sum(b["bytes"] for b in blocks)
    to = sum(b["objects"] for b in blocks)
    print(f"checked {len(blocks) + clean} processes: {len(blocks)} leaking ({tb} bytes in {to} "
          f"objects: direct {direct} B, indirect {indirect} B), {clean} clean")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
