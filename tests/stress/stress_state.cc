// Checked allocation helpers and shared state of the stress program (see stress_state.h).
#include "stress_state.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "allocation_calls.h"
#include "pattern.h"

namespace heapkit::stress {

Options g_options;
Stats g_stats;
SlotQueue g_queues[kQueues];
std::atomic<bool> g_stop{false};
Slot g_canaries[kCanaries];

bool SlotQueue::TryPush(const Slot& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (q_.size() >= kCapacity) return false;
  q_.push_back(s);
  return true;
}

bool SlotQueue::TryPop(Slot* s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (q_.empty()) return false;
  *s = q_.front();
  q_.pop_front();
  return true;
}

size_t Rng::Size() {
  uint64_t r = Below(1000);
  if (r < 700) return 1 + Below(256);
  if (r < 990) return 257 + Below(8192 - 256);
  return 8193 + Below(256 * 1024);
}

void Fail(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if (n > static_cast<int>(sizeof buf) - 2) n = sizeof buf - 2;
  buf[n++] = '\n';
  // write(2): stdio may be locked by an interrupted thread.
  ssize_t w = write(2, "stress: FAIL: ", 14);
  w = write(2, buf, n);
  (void)w;
  _exit(3);
}

void SleepMicros(long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

void CountLive(int64_t bytes, int64_t objects) {
  int64_t b = g_stats.live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t o = g_stats.live_objects.fetch_add(objects, std::memory_order_relaxed) + objects;
  int64_t pb = g_stats.peak_live_bytes.load(std::memory_order_relaxed);
  while (b > pb && !g_stats.peak_live_bytes.compare_exchange_weak(pb, b)) {
  }
  int64_t po = g_stats.peak_live_objects.load(std::memory_order_relaxed);
  while (o > po && !g_stats.peak_live_objects.compare_exchange_weak(po, o)) {
  }
}

Slot Allocate(size_t size, How how, size_t align, uint64_t counter) {
  Slot s;
  s.size = size;
  s.how = how;
  s.align = align;
  switch (how) {
    case How::kMalloc:
    case How::kRealloc: s.p = calls::Malloc(size); break;
    case How::kCalloc: {
      size_t n = size % 7 == 0 ? 7 : 1;  // exercise the count*size product sometimes
      s.p = calls::Calloc(n, size / n);
      s.size = size = n * (size / n);
      if (s.p == nullptr) break;
      const auto* b = static_cast<const unsigned char*>(s.p);
      for (size_t i = 0; i < size; ++i)
        if (b[i] != 0)
          Fail("calloc(%zu) returned %p with byte %zu = %u, not zero", size, s.p, i, b[i]);
      break;
    }
    case How::kNew: s.p = calls::New(size); break;
    case How::kNewArray: s.p = calls::NewArray(size); break;
    case How::kAligned: {
      switch (counter % 5) {
        case 0:
          if (calls::PosixMemalign(&s.p, align, size) != 0) s.p = nullptr;
          break;
        case 1:
          s.size = size = (size + align - 1) / align * align;  // C11 aligned_alloc contract
          s.p = calls::AlignedAlloc(align, size);
          break;
        case 2: s.p = calls::Memalign(align, size); break;
        case 3:
          s.p = calls::Valloc(size);
          align = static_cast<size_t>(sysconf(_SC_PAGESIZE));
          break;
        default:
          s.p = calls::Pvalloc(size);
          align = static_cast<size_t>(sysconf(_SC_PAGESIZE));
          break;
      }
      break;
    }
    case How::kAlignedNew: s.p = calls::NewAligned(size, align); break;
  }
  if (s.p == nullptr)
    Fail("allocation of %zu bytes (kind %d, alignment %zu) returned NULL", size,
         static_cast<int>(how), align);
  if (align != 0 && reinterpret_cast<uintptr_t>(s.p) % align != 0)
    Fail("allocation of %zu bytes (kind %d) returned %p, not aligned to %zu", size,
         static_cast<int>(how), s.p, align);
  if (calls::UsableSize(s.p) < size)
    Fail("malloc_usable_size(%p) = %zu < requested %zu", s.p, calls::UsableSize(s.p), size);
  s.seed = SeedFor(s.p, counter);
  Fill(s.p, size, s.seed);
  CountLive(static_cast<int64_t>(size), 1);
  g_stats.allocations.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void Verify(const Slot& s, const char* where) {
  size_t bad = FirstMismatch(s.p, s.size, s.seed);
  if (bad != SIZE_MAX)
    Fail(
        "corruption in %s: object %p of %zu bytes (kind %d) differs from its pattern at offset %zu",
        where, s.p, s.size, static_cast<int>(s.how), bad);
  g_stats.verified_bytes.fetch_add(s.size, std::memory_order_relaxed);
}

void Release(const Slot& s, const char* where) {
  Verify(s, where);
  CountLive(-static_cast<int64_t>(s.size), -1);
  switch (s.how) {
    case How::kNew:
      if (s.size % 3 == 0)
        calls::DeleteSized(s.p, s.size);
      else
        calls::Delete(s.p);
      break;
    case How::kNewArray: calls::DeleteArray(s.p); break;
    case How::kAlignedNew: calls::DeleteAligned(s.p, s.align); break;
    default: calls::Free(s.p); break;
  }
}

}  // namespace heapkit::stress
