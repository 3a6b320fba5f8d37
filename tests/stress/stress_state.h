// Shared state of the stress program: options, the live-object accounting that the RSS bound is
// derived from, the cross-thread queues, and the checked allocate/verify/free helpers.
//
// Invariants: every object a workload holds is described by a Slot (pointer, requested size,
// seed, how it was allocated) and carries the pattern of its seed (pattern.h); live_bytes and
// live_objects count exactly the objects allocated through Allocate() and not yet Release()d,
// so both are zero once every workload has drained (checked at exit).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include "../common/xorshift_rng.h"

namespace heapkit::stress {

struct Options {
  double seconds = 3;
  int producers = 3;
  int consumers = 3;
  int reallocers = 2;
  int aligners = 1;
  int churners = 1;
#if defined(__SANITIZE_THREAD__)
  bool fork = false;  // ThreadSanitizer cannot start threads in the child of a threaded fork
#else
  bool fork = true;
#endif
  bool signals = true;
  double rss_factor = 2.0;  // RSS bound: start + factor*peak_live + objects*overhead + slack
  size_t rss_object_overhead = 256;  // bytes of allocator/profiler metadata allowed per live object
#if defined(__SANITIZE_THREAD__)
  size_t rss_slack_mb = 1024;  // + ThreadSanitizer's shadow memory (several times the heap)
#else
  size_t rss_slack_mb = 96;  // thread caches, stacks, fragmentation
#endif
  uint64_t seed = 1;
};

enum class How : uint8_t { kMalloc, kCalloc, kNew, kNewArray, kAligned, kAlignedNew, kRealloc };

struct Slot {
  void* p = nullptr;
  size_t size = 0;
  uint64_t seed = 0;
  size_t align = 0;  // for kAlignedNew
  How how = How::kMalloc;
};

struct Stats {
  std::atomic<int64_t> live_bytes{0};
  std::atomic<int64_t> live_objects{0};
  std::atomic<int64_t> peak_live_bytes{0};
  std::atomic<int64_t> peak_live_objects{0};
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> cross_thread_frees{0};
  std::atomic<uint64_t> reallocs{0};
  std::atomic<uint64_t> aligned{0};
  std::atomic<uint64_t> forks{0};
  std::atomic<uint64_t> threads_created{0};
  std::atomic<uint64_t> signals_handled{0};
  std::atomic<uint64_t> verified_bytes{0};
};

// A bounded multi-producer multi-consumer queue of Slots (mutex + deque: the deque's own blocks
// come from the allocator under test, too).
class SlotQueue {
 public:
  static constexpr size_t kCapacity = 512;
  bool TryPush(const Slot& s);
  bool TryPop(Slot* s);

 private:
  std::mutex mu_;
  std::deque<Slot> q_;
};

inline constexpr int kQueues = 8;
inline constexpr int kCanaries = 64;

extern Options g_options;
extern Stats g_stats;
extern SlotQueue g_queues[kQueues];
extern std::atomic<bool> g_stop;
// Immutable objects made before any thread starts and freed after all have joined; signal
// handlers and fork children verify them without locks.
extern Slot g_canaries[kCanaries];

// Per-thread xorshift generator.
class Rng : public testing::XorshiftRng {
 public:
  using XorshiftRng::XorshiftRng;
  // Mostly small, some medium, rarely large (the allocator's three tiers).
  size_t Size();
};

// Allocates size bytes the given way (alignment for the aligned kinds), fills the pattern and
// counts it live. Aborts the program (exit 3) on NULL or a misaligned/undersized result.
Slot Allocate(size_t size, How how, size_t align, uint64_t counter);
// Verifies the whole pattern (exit 3 with a precise line on corruption), uncounts and frees.
void Release(const Slot& s, const char* where);
// Verifies [0, size) of s against its seed; exit 3 on mismatch.
void Verify(const Slot& s, const char* where);
void CountLive(int64_t bytes, int64_t objects);
[[noreturn]] void Fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void SleepMicros(long us);

}  // namespace heapkit::stress
