#include "profiler/profiler_config.h"

#include <string.h>

#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "alloc/observer_hooks.h"
#include "profiler/time/timeline.h"
#include "alloc/sampling_period.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {

static_assert(ProfilerSetting("HEAP_PROFILE_STACK_DEPTH").default_value == kMaxStackDepth &&
              ProfilerSetting("HEAP_PROFILE_STACK_DEPTH").max == kMaxStackDepth);

ProfilerConfig ReadProfilerConfig() {
  using internal::SettingInt64;
  ProfilerConfig c;
  c.allocation_interval = SettingInt64(ProfilerSetting("HEAP_PROFILE_ALLOCATION_INTERVAL"));
  c.deallocation_interval = SettingInt64(ProfilerSetting("HEAP_PROFILE_DEALLOCATION_INTERVAL"));
  c.inuse_interval = SettingInt64(ProfilerSetting("HEAP_PROFILE_INUSE_INTERVAL"));
  c.time_interval_sec = SettingInt64(ProfilerSetting("HEAP_PROFILE_TIME_INTERVAL"));
  c.stack_depth = static_cast<int>(SettingInt64(ProfilerSetting("HEAP_PROFILE_STACK_DEPTH")));
  c.dump_signal = static_cast<int>(SettingInt64(ProfilerSetting("HEAPPROFILESIGNAL")));
  c.peak_profile = internal::SettingBool(ProfilerSetting("HEAP_PROFILE_PEAK"));
  c.rss_limit = ReadRssLimitSetting();
  c.timeline_period_ms = ReadTimelinePeriodMs();
  c.format = ReadProfileFormat();
  if (c.rss_limit.bytes > 0 || c.rss_limit.percent > 0 || c.timeline_period_ms > 0)
    c.peak_profile = true;
  return c;
}

ProfileFormat ReadProfileFormat() {
  const char* value = internal::SettingText(ProfilerSetting("HEAP_PROFILE_FORMAT"));
  if (value == nullptr || value[0] == '\0' || strcmp(value, "legacy") == 0) {
    return ProfileFormat::kLegacy;
  }
  if (strcmp(value, "proto") == 0) return ProfileFormat::kProto;
  if (strcmp(value, "both") == 0) return ProfileFormat::kBoth;
  char shown[internal::kPrintableValueSize];
  internal::Log(
      "ignoring HEAP_PROFILE_FORMAT='%s': expected legacy, proto or both; using "
      "default legacy",
      internal::PrintableValue(value, shown, sizeof(shown)));
  return ProfileFormat::kLegacy;
}

// (A 10 KB interval at the default 512 KiB period wrote 195 dumps instead of ~1,300.)
void FitSamplingToIntervals(const ProfilerConfig& config) {
  int64_t smallest = 0;
  for (int64_t v :
       {config.allocation_interval, config.deallocation_interval, config.inuse_interval}) {
    if (v > 0 && (smallest == 0 || v < smallest)) smallest = v;
  }
  const int64_t period = alloc::SamplingPeriod();
  if (smallest == 0 || period <= 1 || smallest >= 8 * period) return;
  const int64_t lowered = smallest / 8 > 1 ? smallest / 8 : 1;
  alloc::SetSamplingPeriod(lowered);
  if (internal::Verbose())
    internal::Log(
        "heap profiler: a dump interval of %lld bytes is below 8 sampling periods of "
        "%lld bytes; sampling every %lld bytes for this run",
        static_cast<long long>(smallest), static_cast<long long>(period),
        static_cast<long long>(lowered));
}

}  // namespace heapkit::prof
