// Lifetimes and ages of sampled objects: heapkit dumps written with HEAP_PROFILE_LIFETIMES=1 /
// HEAP_PROFILE_AGES=1 carry them as comment lines (profiler/output/object_times_dump.h):
//
//   # heapkit: lifetime <bin ns> <same|cross|live> <count> <bytes> <estimated bytes> @ <pcs> [|
//   <free pcs>] # heapkit: ages at dump <n> # heapkit: age <interval> <count> <bytes> @ <pcs>
//
// The parser keeps them here; report/object_time_views.h turns them into the profile's
// samples (--lifetime, --since).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace heapkit::pprof {

struct LifetimeLine {
  enum class End { kSameThread, kOtherThread, kLive };
  uint64_t bin_ns = 0;  // lower bound of the lifetime decade (0, 1000, ..., 3600e9)
  End end = End::kSameThread;
  double count = 0, bytes = 0;     // raw (sampled)
  double estimated_bytes = 0;      // un-sampled by the writer, object by object
  std::vector<uint64_t> pcs;       // allocation stack, leaf first
  std::vector<uint64_t> free_pcs;  // free stack (HEAP_PROFILE_FREE_STACKS), else empty
};

struct AgeLine {
  uint32_t interval = 0;        // allocated after dump `interval`, before dump interval + 1
  double count = 0, bytes = 0;  // raw (sampled), one bucket's
  std::vector<uint64_t> pcs;
};

struct ObjectTimes {
  std::vector<LifetimeLine> lifetimes;
  std::vector<AgeLine> ages;
  int ages_dump = 0;  // "ages at dump <n>"; 0: no age lines
};

// Keeps the line in `times` when it is one of the lines above; returns whether it was.
bool ParseObjectTimeLine(std::string_view line, ObjectTimes* times);

}  // namespace heapkit::pprof
