// The birth of a sampled object: when (CLOCK_MONOTONIC), on which thread and in which dump
// interval it was allocated. Recorded with every live-object-map record (live_object_map.h)
// while HEAP_PROFILE_LIFETIMES or HEAP_PROFILE_AGES is on, for the lifetimes
// (lifetime_table.h) and the age breakdown of the dumps (object_times_dump.h).
//
// Cost: nothing on the unsampled path. A sampled allocation reads the clock once: vDSO
// clock_gettime(CLOCK_MONOTONIC), ~20 ns, 1 ns resolution. CLOCK_MONOTONIC_COARSE would be
// cheaper but ticks every 1-4 ms, which would put every lifetime under a millisecond into one
// bin; at the default period (one sample per 512 KiB allocated) the precise clock is a
// negligible part of a sample (the stack walk alone is ~300 instructions), and in exact mode it
// is paid only when one of the two settings asks for it.
//
// Thread numbers: 1, 2, ... in the order threads first record a sampled allocation or free
// (never reused, unlike kernel thread ids); 0 in a birth means "not recorded".
// Dump interval: the number of HEAPPROFILE dumps written before the allocation, so an object
// of interval k was allocated after dump k (dump 0: profiling start) and before dump k + 1.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapkit::prof {

struct ObjectBirth {
  int64_t time_ns = 0;    // CLOCK_MONOTONIC at the allocation; 0: no birth recorded
  uint32_t thread = 0;    // ThisThreadNumber() of the allocating thread
  uint32_t interval = 0;  // dumps written before the allocation
};
static_assert(sizeof(ObjectBirth) == 16, "16 bytes per live-object-map record");

// The settings (read at each profiling start, ReadObjectTimeSettings) and the dump interval.
struct ObjectTimeState {
  std::atomic<bool> births{false};       // lifetimes || ages: records carry a birth
  std::atomic<bool> lifetimes{false};    // HEAP_PROFILE_LIFETIMES
  std::atomic<bool> free_stacks{false};  // HEAP_PROFILE_FREE_STACKS (with lifetimes)
  std::atomic<bool> ages{false};         // HEAP_PROFILE_AGES
  std::atomic<uint32_t> interval{0};     // dumps written so far
};
extern constinit ObjectTimeState g_object_times;

inline bool BirthsOn() { return g_object_times.births.load(std::memory_order_relaxed); }

// Reads HEAP_PROFILE_LIFETIMES, HEAP_PROFILE_FREE_STACKS and HEAP_PROFILE_AGES (booleans,
// default off; a privileged process reads none; a malformed value: one line, default used).
// Called at profiling start under the state lock. before_publishing (may be nullptr) is called
// with the lifetimes setting before any setting is stored (slot_births.h's SetSlotBirths: the
// births' clock is ready before an allocation can see lifetimes on).
void ReadObjectTimeSettings(void (*before_publishing)(bool lifetimes));

// A dump was written: later allocations belong to the next interval.
inline void AdvanceDumpInterval() {
  g_object_times.interval.fetch_add(1, std::memory_order_relaxed);
}

// This thread's number (assigned on first use; never 0).
extern __thread uint32_t tls_thread_number __attribute__((tls_model("initial-exec")));
uint32_t NewThreadNumber();
inline uint32_t ThisThreadNumber() {
  const uint32_t n = tls_thread_number;
  return __builtin_expect(n != 0, 1) ? n : NewThreadNumber();
}

// The birth of an object allocated now, on this thread.
ObjectBirth BirthNow();

}  // namespace heapkit::prof
