// HEAPCHECK's settings and their parsing from the environment (gperftools' variables and
// meanings, and heapkit's additions; README.md "Environment").
//
// Modes (gperftools' names and meanings; see README.md):
//   minimal    at exit, before global destructors; only objects allocated after main() started
//   normal     at exit, before global destructors; roots = globals + thread stacks/registers/TLS
//   strict     like normal but AFTER global destructors: memory a destructor forgot (dropped the
//              pointer without freeing) is reported
//   draconian  after global destructors, no roots at all: every object not freed is a leak
//   as-is      timing and roots from HEAP_CHECK_AFTER_DESTRUCTORS, HEAP_CHECK_IGNORE_GLOBAL_LIVE,
//              HEAP_CHECK_IGNORE_THREAD_LIVE
//   local      no whole-program check; only named HeapLeakChecker checks
// Anything else: one line, no checking and no recording.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "heapcheck/leak_check.h"
#include "heapcheck/report.h"

namespace heapkit::check {

enum class Mode { kOff, kMinimal, kNormal, kStrict, kDraconian, kAsIs, kLocal };

struct Settings {
  Mode mode = Mode::kOff;
  bool after_destructors = false;  // whole-program check timing
  bool global_check_pending = false;
  int exit_code = 1;                // HEAP_CHECK_ERROR_EXIT_CODE
  pid_t pid = 0;                    // the process that started checking (a fork's parent)
  bool check_children = true;       // HEAP_CHECK_CHILDREN: forked children check at exit too
  bool at_underscore_exit = false;  // HEAP_CHECK_AT_UNDERSCORE_EXIT (underscore_exit.h)
  // HEAP_CHECK_REPORT_CLEAN: whether a clean check prints gperftools' "No leaks found" line.
  // Unset: only where a person reads it (stderr is a terminal, the HEAP_CHECK_REPORT_PATH
  // file, or PERFTOOLS_VERBOSE > 0), so a parent parsing its child's stderr sees what it sees
  // without heapkit; true/false force it (scripts that want proof the check ran).
  int report_clean = -1;
  const char* report_path = nullptr;  // HEAP_CHECK_REPORT_PATH (report_destination.h)
  const char* at_signal = nullptr;    // HEAP_CHECK_AT_SIGNAL (signal_check.h)
  // HEAP_CHECK_FORK_SNAPSHOT=all: the checks of a process about to end (at exit, at a signal)
  // flood in a forked snapshot too (config.fork_snapshot is for the checks of a running one).
  bool snapshot_ending_checks = false;
  // HEAP_CHECK_LIVE_MIN_INTERVAL_MS: the least time between two live checks (live_leak_check.h).
  int64_t live_min_interval_ms = 1000;
  CheckConfig config;
  ReportOptions report;
};

// Reads HEAPCHECK and the HEAP_CHECK_* variables into *s (paths copied: programs may overwrite
// their environment strings later). False when no mode is active (unset, empty or unknown:
// the latter with one line). Bad values print one line and keep the default.
bool ReadCheckerConfig(Settings* s);

}  // namespace heapkit::check
