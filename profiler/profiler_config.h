// HEAPPROFILE's settings (README.md "Environment variables"). The settings of a feature with a
// file of its own (rss_limit.h, timeline.h) are read by that file; this one gathers them.
//
// The settings are read once per profiling start, under the state lock, into the profiler
// state (profiler_state.h, ProfilerState::config), which says who may write them afterwards.
#pragma once

#include <cstdint>

#include "profiler/base/profiler_basics.h"
#include "profiler/time/rss_limit.h"
#include "profiler/capture/stack_capture.h"

namespace heapkit::prof {

inline constexpr int64_t kDefaultSampleParameter = 512 * 1024;

// HEAP_PROFILE_FORMAT: the files a dump or peak profile is written as (proto_profile_file.h).
enum class ProfileFormat { kLegacy, kProto, kBoth };

struct ProfilerConfig {
  int64_t allocation_interval = int64_t{1} << 30;
  int64_t deallocation_interval = 0;
  int64_t inuse_interval = 100 * kMiB;
  int64_t time_interval_sec = 0;
  int stack_depth = kMaxStackDepth;
  int dump_signal = 0;
  bool peak_profile = false;       // HEAP_PROFILE_PEAK: <prefix>.peak.heap (peak_profile.h)
  RssLimitSetting rss_limit;       // HEAP_PROFILE_RSS_LIMIT (rss_limit.h); implies peak_profile
  int64_t timeline_period_ms = 0;  // HEAP_PROFILE_TIMELINE (timeline.h); implies peak_profile
  ProfileFormat format = ProfileFormat::kLegacy;  // HEAP_PROFILE_FORMAT (proto_profile_file.h)
};
// Reads HEAP_PROFILE_FORMAT: legacy (also unset or empty), proto or both; another value is one
// line and legacy.
ProfileFormat ReadProfileFormat();
// Reads the HEAP_PROFILE_* variables and HEAPPROFILESIGNAL.
ProfilerConfig ReadProfilerConfig();

// The triggers advance with the sampled estimates, one sample (~ one period) at a time: an
// interval shorter than a few periods fires late and irregularly. Below 8 periods of `config`'s
// smallest interval, samples every interval/8 bytes for this run instead.
void FitSamplingToIntervals(const ProfilerConfig& config);

}  // namespace heapkit::prof
