// The memory figures heapkit's profiler writes into each heap dump ("# heapkit: memory <key>
// <bytes>", profiler/output/memory_breakdown.h) and the table `pprof-tool --memory` makes of them:
// the process's RSS at the dump, line by line, each with bytes and share of RSS.
//
// The resident lines partition RSS: the allocator's tiers (measured page by page in the
// process), its metadata, and the mappings malloc did not make (from /proc/self/smaps). What
// they do not cover is printed as "unexplained". Address space that holds no memory (pages
// returned to the OS, mapped but never touched, reserved metadata) is listed apart, below.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace heapkit::pprof {

struct Profile;

// Keeps the line's figures in the profile when `line` is a "# heapkit: memory <key> <bytes>"
// or "# heapkit: size_class <field>=<n>..." comment; other lines are ignored. Returns true when
// the line was one.
bool ParseMemoryFigure(std::string_view line, Profile* profile);

// The --memory report's second table: size classes by the bytes of free objects stranded in
// their spans, largest first, at most `max_rows`.
std::string SizeClassTable(const Profile& profile, size_t max_rows, bool show_bytes, int64_t rss);

struct MemoryRow {
  std::string label;
  int depth = 0;         // 0: a section heading or total, 1: a line within a section
  int64_t bytes = 0;     // may be negative only for "unexplained"
  bool in_rss = true;    // false: address space shown for reference, not a share of RSS
  bool heading = false;  // a section title with no number
};

// The table for one dump. False (with *error) when the profile carries no memory figures.
bool BuildMemoryTable(const Profile& profile, std::vector<MemoryRow>* rows, int64_t* rss,
                      std::string* error);

// The value of `key` in the profile's figures (0 when absent).
uint64_t MemoryFigure(const Profile& profile, std::string_view key);

}  // namespace heapkit::pprof
