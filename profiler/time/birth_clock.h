// The clock of exact mode's slot births (slot_births.h): the CPU's time-stamp counter where it
// is invariant, else CLOCK_MONOTONIC.
//
// In exact mode every allocation and every free reads the clock once with HEAP_PROFILE_LIFETIMES;
// vDSO clock_gettime costs some 20 instructions and a function call each time, rdtsc one
// instruction. The counter is used only where it runs at a constant rate in every power state
// and is the kernel's own clock source: /proc/cpuinfo lists constant_tsc and nonstop_tsc and
// /sys/devices/system/clocksource/clocksource0/current_clocksource is "tsc" (the kernel then
// keeps the CPUs' counters in step). Its rate is measured once, at the first profiling start
// with lifetimes on, against CLOCK_MONOTONIC over about a millisecond (clock reads agree to
// some tens of nanoseconds, so the rate is good to about 1e-4: a lifetime within 0.01 % of a
// decade's bound may land in the neighbouring bin). Resolution: one tick (under 1 ns at
// today's rates), well under the lifetimes' first bound (1 us). Elsewhere the ticks are
// CLOCK_MONOTONIC nanoseconds (1 ns resolution).
// Ticks count from the calibration's moment, so that a birth fits 48 bits for 2^48 ticks
// (a day or more); later births go to the live-object map (slot_births.h).
#pragma once

#include <atomic>
#include <cstdint>

#include "profiler/time/lifetime_table.h"
#include "profiler/base/profiler_basics.h"

namespace heapkit::prof {

struct BirthClock {
  std::atomic<bool> ready{false};  // Calibrate ran
  bool tsc = false;                // ticks are TSC counts, else CLOCK_MONOTONIC ns
  uint64_t base = 0;               // the counter (or ns) at tick 0
  uint64_t ns_per_tick_q32 = 0;    // nanoseconds per tick << 32 (tsc only)
  // The lifetime bins' lower bounds (lifetime_table.h) in ticks, and the bin of 2^b ticks for
  // each b (LifetimeBin's bit-scan table, for ticks), so that a free bins its lifetime in
  // ticks with no conversion.
  int64_t bin_lower_ticks[kLifetimeBins] = {};
  int8_t bin_of_bit[64] = {};
};
extern constinit BirthClock g_birth_clock;

// Decides between the counter and CLOCK_MONOTONIC and measures the rate. Once (later calls
// return at once); malloc-free; at profiling start.
void CalibrateBirthClock();

// True where BirthTicks reads the counter: then it makes no call (a path that must stay free of
// calls tests this first and leaves the other clock to an out-of-line copy).
inline bool BirthTicksFromCounter() {
#if defined(__x86_64__)
  return __builtin_expect(g_birth_clock.tsc, 1);
#else
  return false;
#endif
}

// BirthTicks when BirthTicksFromCounter() is true.
inline uint64_t CounterBirthTicks() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc() - g_birth_clock.base;
#else
  return 0;
#endif
}

inline uint64_t BirthTicks() {
  if (BirthTicksFromCounter()) return CounterBirthTicks();
  return static_cast<uint64_t>(NowNs()) - g_birth_clock.base;
}

inline int64_t BirthTicksToNs(int64_t ticks) {
  if (!g_birth_clock.tsc) return ticks;
  if (ticks <= 0) return 0;
  return static_cast<int64_t>(
      (static_cast<unsigned __int128>(ticks) * g_birth_clock.ns_per_tick_q32) >> 32);
}

// The lifetime bin (lifetime_table.h) of a lifetime in ticks; LifetimeBin(BirthTicksToNs(t))
// but for ticks within a tick of a bound.
inline int LifetimeBinOfTicks(int64_t ticks) {
  if (ticks <= 0) return 0;
  const int bin = g_birth_clock.bin_of_bit[63 - __builtin_clzll(static_cast<uint64_t>(ticks))];
  return bin + 1 < kLifetimeBins && ticks >= g_birth_clock.bin_lower_ticks[bin + 1] ? bin + 1 : bin;
}

}  // namespace heapkit::prof
