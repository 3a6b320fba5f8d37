// Births of sampled objects (object_birth.h).
#include "profiler/table/object_birth.h"

#include "alloc/internal/log.h"
#include "profiler/base/profiler_basics.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {

constinit ObjectTimeState g_object_times;

namespace {

std::atomic<uint32_t> g_thread_numbers{0};

}  // namespace

__thread uint32_t tls_thread_number __attribute__((tls_model("initial-exec"))) = 0;

void ReadObjectTimeSettings(void (*before_publishing)(bool lifetimes)) {
  const bool lifetimes = internal::SettingBool(ProfilerSetting("HEAP_PROFILE_LIFETIMES"));
  bool free_stacks = internal::SettingBool(ProfilerSetting("HEAP_PROFILE_FREE_STACKS"));
  if (free_stacks && !lifetimes) {
    internal::Log(
        "ignoring HEAP_PROFILE_FREE_STACKS: free stacks are kept with "
        "HEAP_PROFILE_LIFETIMES=1 only");
    free_stacks = false;
  }
  const bool ages = internal::SettingBool(ProfilerSetting("HEAP_PROFILE_AGES"));
  g_object_times.lifetimes.store(lifetimes, std::memory_order_relaxed);
  g_object_times.free_stacks.store(free_stacks, std::memory_order_relaxed);
  g_object_times.ages.store(ages, std::memory_order_relaxed);
  if (before_publishing != nullptr) before_publishing(lifetimes);
  g_object_times.births.store(lifetimes || ages, std::memory_order_release);
}

uint32_t NewThreadNumber() {
  const uint32_t n = g_thread_numbers.fetch_add(1, std::memory_order_relaxed) + 1;
  tls_thread_number = n;
  return n;
}

ObjectBirth BirthNow() {
  return {NowNs(), ThisThreadNumber(), g_object_times.interval.load(std::memory_order_relaxed)};
}

}  // namespace heapkit::prof
