// HEAP_PROFILE_RSS_LIMIT: a dump — with the peak profiles (HEAP_PROFILE_PEAK is implied) — the
// moment the process's memory crosses a limit, so that a process the OOM killer ends leaves
// the profile of what it held just before.
//
// The value is either bytes (k/m/g suffixes: compared with the process's RSS, from
// /proc/self/statm) or a percentage `N%` (1..100) of the memory limit of the process's own
// cgroup v2 (the smaller of memory.max and memory.high, compared with memory.current: what the
// kernel's OOM decision for the cgroup looks at), or of MemTotal against RSS when that cgroup
// has no limit (or there is no cgroup v2 memory controller). A malformed value is one line and
// no RSS-limit dumps.
//
// Who checks: the profiler's helper thread (profiler_thread.h), every kPollMs, reading the one
// figure with pread on a descriptor opened at the start (no allocation, no path lookup per
// check). Once per crossing: a dump is written when the figure goes from below the limit to
// at or above it; the next one needs the figure to fall under 90 % of the limit first, so a
// figure hovering at the limit does not write a dump per check.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

struct RssLimitSetting {
  int64_t bytes = 0;  // > 0: RSS against this many bytes
  int percent = 0;    // > 0: percent of the cgroup's (or the machine's) memory
};

// HEAP_PROFILE_RSS_LIMIT ("" or unset: off). A bad value prints one line naming the cause and
// gives off.
RssLimitSetting ReadRssLimitSetting();
// Exposed for the unit test: false for a malformed value.
bool ParseRssLimit(const char* text, RssLimitSetting* out);

inline constexpr int kRssLimitPollMs = 100;

// Profiling start (state lock held): opens what the check reads and fixes the limit in bytes;
// one line if the figure cannot be read (then off). Verbose: says what is compared with what.
void BeginRssLimit(const RssLimitSetting& setting);
// Whether a check is armed (the helper thread polls every kRssLimitPollMs).
bool RssLimitOn();
// The helper thread's check, state lock held, profiling on: true at a crossing, with the dump's
// reason ("RSS 100 MB reached the limit of 96 MB") in reason[0..size); the caller dumps.
bool CheckRssLimitLocked(char* reason, size_t size);

}  // namespace heapkit::prof
