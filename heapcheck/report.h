// The leak report (stderr) and the leak profile (<dir>/<prog>.<pid>.<name>-end.heap).
// Steps, each in its own file: group the records (leak_groups.h), symbolize what will be looked
// at (leak_symbols.h), drop suppressed (suppressions.h) and filtered groups, write the profile,
// print.
//
// Runs AFTER the world is restarted and with allocation recording off: the symbolizer
// (profiler/symbolize, libdwfl over /proc/self/maps) uses the normal heap. Leaks are grouped
// by (allocation stack, direct/indirect) and sorted by bytes. Suppressions (HEAPCHECK_SUPPRESSIONS)
// work on symbolized frames, so they are applied before the totals line is printed. Lines go out
// through the malloc-free logger, in one write per line and never truncated.
#pragma once

#include <cstdint>

#include "heapcheck/flood.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/leak_groups.h"

namespace heapkit::check {

struct ReportOptions {
  const char* check_name = "_main_";
  int64_t max_leaks = 20;               // HEAP_CHECK_MAX_LEAKS (<= 0: all)
  bool identify_leaks = false;          // HEAP_CHECK_IDENTIFY_LEAKS
  const char* dump_directory = "/tmp";  // HEAP_CHECK_DUMP_DIRECTORY
  const char* suppressions = nullptr;   // HEAPCHECK_SUPPRESSIONS file
  bool test_pointer_alignment = false;
  FloodOptions flood;  // the check's pointer rule (what a suppressed leak owns)
  // libdw's standard debug-info search: build-id under /usr/lib/debug, .gnu_debuglink, and
  // debuginfod when the environment has DEBUGINFOD_URLS. false (a privileged process, decided
  // at start-up): build-id directories only, never the network.
  bool standard_debuginfo_search = false;
};

using ReportTotals = LeakTotals;

// Prints the report for result.leaks (if any survive suppression) and writes the .heap file.
// Returns the totals reported (0/0: nothing reported; the caller prints "No leaks found").
ReportTotals ReportLeaks(const CheckResult& result, const ReportOptions& options);

// The verbose line on the anonymous memory scanned as roots (PERFTOOLS_VERBOSE > 0).
void LogAnonymousRootsFigures(const char* check_name, const CheckResult& result);

// `No leaks found for check "<name>" (but no 100% guarantee ...): found N reachable ...`
void ReportNoLeaks(const CheckResult& result, const char* check_name);

}  // namespace heapkit::check
