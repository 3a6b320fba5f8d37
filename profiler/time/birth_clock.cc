// The births' clock (birth_clock.h).
#include "profiler/time/birth_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "alloc/internal/log.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {

constinit BirthClock g_birth_clock;

namespace {

// Reads the start of `path` into buf (NUL-terminated); false if it cannot be read.
bool ReadStart(const char* path, char* buf, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t got = 0;
  while (got + 1 < size) {
    const ssize_t n = read(fd, buf + got, size - 1 - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  buf[got] = '\0';
  return got > 0;
}

// True if the first "flags" line of `text` holds the word `flag`.
bool HasFlag(const char* text, const char* flag) {
  const char* line = strstr(text, "\nflags");
  if (line == nullptr) return false;
  const char* end = strchr(line + 1, '\n');
  const size_t n = strlen(flag);
  for (const char* p = strstr(line, flag); p != nullptr && (end == nullptr || p < end);
       p = strstr(p + 1, flag)) {
    if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')) return true;
  }
  return false;
}

bool InvariantTscIsTheClock() {
#if defined(__x86_64__)
  static char buf[16384];  // the first CPU's block holds its flags line
  if (!ReadStart("/proc/cpuinfo", buf, sizeof(buf)) || !HasFlag(buf, "constant_tsc") ||
      !HasFlag(buf, "nonstop_tsc"))
    return false;
  char source[32];
  if (!ReadStart("/sys/devices/system/clocksource/clocksource0/current_clocksource", source,
                 sizeof(source)))
    return false;
  return strcmp(source, "tsc\n") == 0;
#else
  return false;
#endif
}

// The bins' bounds in ticks (rounded up: a lifetime of t ticks is in bin i iff t reaches the
// bound's tick count) and the bin of each power of two.
void ComputeBinTicks() {
  BirthClock& c = g_birth_clock;
  for (int i = 0; i < kLifetimeBins; ++i) {
    if (!c.tsc) {
      c.bin_lower_ticks[i] = kLifetimeBinLowerNs[i];
      continue;
    }
    const unsigned __int128 scaled = static_cast<unsigned __int128>(kLifetimeBinLowerNs[i]) << 32;
    c.bin_lower_ticks[i] =
        static_cast<int64_t>((scaled + c.ns_per_tick_q32 - 1) / c.ns_per_tick_q32);
  }
  for (int b = 0; b < 64; ++b) {
    const int64_t low = b == 63 ? INT64_MAX : int64_t{1} << b;
    int i = 0;
    while (i + 1 < kLifetimeBins && low >= c.bin_lower_ticks[i + 1]) ++i;
    c.bin_of_bit[b] = static_cast<int8_t>(i);
  }
}

}  // namespace

void CalibrateBirthClock() {
  if (g_birth_clock.ready.load(std::memory_order_acquire)) return;
#if defined(__x86_64__)
  // HEAP_PROFILE_BIRTH_TSC=0: CLOCK_MONOTONIC even where the counter qualifies (tests of the
  // fallback, or a machine whose counter the kernel trusts wrongly).
  if (internal::SettingBool(ProfilerSetting("HEAP_PROFILE_BIRTH_TSC")) &&
      InvariantTscIsTheClock()) {
    const int64_t ns0 = NowNs();
    const uint64_t t0 = __builtin_ia32_rdtsc();
    int64_t ns1;
    uint64_t t1;
    do {  // about a millisecond
      ns1 = NowNs();
      t1 = __builtin_ia32_rdtsc();
    } while (ns1 - ns0 < 1000000);
    if (t1 > t0) {
      g_birth_clock.ns_per_tick_q32 =
          static_cast<uint64_t>((static_cast<unsigned __int128>(ns1 - ns0) << 32) / (t1 - t0));
      g_birth_clock.base = t1;
      g_birth_clock.tsc = true;
    }
  }
#endif
  if (!g_birth_clock.tsc) g_birth_clock.base = static_cast<uint64_t>(NowNs()) - 1;
  ComputeBinTicks();
  if (internal::Verbose())
    internal::Log("lifetimes: birth clock %s", g_birth_clock.tsc
                                                   ? "TSC (calibrated against CLOCK_MONOTONIC)"
                                                   : "CLOCK_MONOTONIC");
  g_birth_clock.ready.store(true, std::memory_order_release);
}

}  // namespace heapkit::prof
