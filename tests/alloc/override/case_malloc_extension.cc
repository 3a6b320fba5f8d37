// MallocExtension numbers move exactly with known allocations; nallocx, GetAllocatedSize,
// GetOwnership, GetStats, ReleaseFreeMemory and mallinfo2 give real answers.
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include <initializer_list>

#include "probe.h"

namespace heapkit::probe {

PROBE_CASE(current_allocated_bytes_exact) {
  RequireExt();
  const size_t sizes[] = {8, 16, 100, 1000, 4000, 10000, 100000, 262144, 262145, 1 << 20, 10 << 20};
  for (int round = 0; round < 3; ++round) {
    for (size_t n : sizes) {
      const size_t before = Property("generic.current_allocated_bytes");
      void* p = malloc(n);
      const size_t mid = Property("generic.current_allocated_bytes");
      const size_t usable = malloc_usable_size(p);
      free(p);
      const size_t after = Property("generic.current_allocated_bytes");
      PROBE_CHECK_MSG(mid - before == usable,
                      "malloc(%zu): allocated bytes rose by %zu, usable size %zu", n, mid - before,
                      usable);
      PROBE_CHECK_MSG(after == before, "after free(malloc(%zu)): %zu != %zu", n, after, before);
    }
  }
  // Many objects: the delta is the sum of their usable sizes.
  std::vector<void*> keep(5000);
  size_t sum = 0;
  const size_t before = Property("generic.current_allocated_bytes");
  for (size_t i = 0; i < keep.size(); ++i) {
    keep[i] = malloc(1 + i * 7 % 3000);
    sum += malloc_usable_size(keep[i]);
  }
  const size_t mid = Property("generic.current_allocated_bytes");
  for (void* p : keep) free(p);
  const size_t after = Property("generic.current_allocated_bytes");
  PROBE_CHECK_MSG(mid - before == sum, "5000 objects: rose by %zu, usable sum %zu", mid - before,
                  sum);
  PROBE_CHECK_MSG(after == before, "after freeing them: %zu != %zu", after, before);
}

PROBE_CASE(heap_size_covers_allocated) {
  RequireExt();
  std::vector<void*> keep;
  for (int i = 0; i < 20000; ++i) keep.push_back(malloc(size_t(i % 700) * 3 + 1));
  keep.push_back(malloc(40 << 20));
  const size_t heap = Property("generic.heap_size");
  const size_t alloc = Property("generic.current_allocated_bytes");
  PROBE_CHECK_MSG(heap >= alloc, "heap_size %zu < allocated %zu", heap, alloc);
  PROBE_CHECK(alloc >= (40u << 20));
  size_t v;
  for (const char* name : {"tcmalloc.pageheap_free_bytes", "tcmalloc.pageheap_unmapped_bytes",
                           "tcmalloc.max_total_thread_cache_bytes"}) {
    PROBE_CHECK_MSG(TryProperty(name, &v), "property %s unknown", name);
  }
  PROBE_CHECK(!TryProperty("no.such.property", &v));
  for (void* p : keep) free(p);
  // Settable property round-trips.
  const size_t want = 48u << 20;
  PROBE_CHECK(Ext().set_numeric("tcmalloc.max_total_thread_cache_bytes", want) != 0);
  PROBE_CHECK(Property("tcmalloc.max_total_thread_cache_bytes") == want);
}

PROBE_CASE(release_free_memory) {
  const MallocExt& e = RequireExt();
  const size_t rss0 = RssBytes();
  constexpr int kBlocks = 256;
  constexpr size_t kSize = 256 * 1024 + 4096;  // large: straight from the page heap
  void* blocks[kBlocks];
  for (auto& b : blocks) {
    b = malloc(kSize);
    memset(b, 7, kSize);
  }
  const size_t rss1 = RssBytes();
  for (auto& b : blocks) free(b);
  const size_t rss2 = RssBytes();
  const size_t unmapped2 = Property("tcmalloc.pageheap_unmapped_bytes");
  e.release_free_memory();
  const size_t rss3 = RssBytes();
  const size_t unmapped3 = Property("tcmalloc.pageheap_unmapped_bytes");
  const size_t free3 = Property("tcmalloc.pageheap_free_bytes");
  printf(
      "rss %zu -> %zu (touched) -> %zu (freed) -> %zu (released); unmapped %zu -> %zu; "
      "free %zu\n",
      rss0 >> 20, rss1 >> 20, rss2 >> 20, rss3 >> 20, unmapped2 >> 20, unmapped3 >> 20,
      free3 >> 20);
  const size_t total = kBlocks * kSize;
  PROBE_CHECK(rss1 >= rss0 + total / 2);
  // Released: RSS back near where it started, and the freed bytes are counted as unmapped.
  PROBE_CHECK_MSG(rss3 < rss0 + total / 4, "RSS after release %zu MiB (start %zu MiB)", rss3 >> 20,
                  rss0 >> 20);
  PROBE_CHECK_MSG(unmapped3 >= total / 2, "unmapped bytes %zu after release", unmapped3);
  PROBE_CHECK_MSG(free3 < total / 4, "pageheap_free_bytes %zu after release", free3);
  // ReleaseToSystem(n) releases at least something when there is free memory.
  void* again = malloc(8 << 20);
  memset(again, 1, 8 << 20);
  free(again);
  const size_t u_before = Property("tcmalloc.pageheap_unmapped_bytes");
  const size_t f_before = Property("tcmalloc.pageheap_free_bytes");
  e.release_to_system(1 << 20);
  const size_t u_after = Property("tcmalloc.pageheap_unmapped_bytes");
  if (f_before >= (1u << 20)) {
    PROBE_CHECK_MSG(u_after >= u_before + (1u << 20) - 8192, "ReleaseToSystem: %zu -> %zu",
                    u_before, u_after);
  }
}

PROBE_CASE(stats_and_ownership) {
  const MallocExt& e = RequireExt();
  static char buf[1 << 16];
  memset(buf, 'x', sizeof(buf));
  e.get_stats(buf, sizeof(buf));
  const size_t len = strnlen(buf, sizeof(buf));
  PROBE_CHECK_MSG(len > 0 && len < sizeof(buf), "GetStats length %zu", len);
  PROBE_CHECK_MSG(strpbrk(buf, "0123456789") != nullptr, "GetStats has no numbers: %s", buf);
  // A tiny buffer is respected (NUL-terminated, nothing written past it).
  char small[32];
  memset(small, 'y', sizeof(small));
  e.get_stats(small, 16);
  PROBE_CHECK(strnlen(small, 16) < 16);
  for (size_t i = 16; i < sizeof(small); ++i) PROBE_CHECK(small[i] == 'y');

  int on_stack = 0;
  static int in_data = 0;
  void* small_obj = malloc(24);
  void* large_obj = malloc(3 << 20);
  PROBE_CHECK(e.get_ownership(small_obj) == 1);  // kOwned
  PROBE_CHECK(e.get_ownership(large_obj) == 1);
  PROBE_CHECK(e.get_ownership(&on_stack) == 2);  // kNotOwned
  PROBE_CHECK(e.get_ownership(&in_data) == 2);
  PROBE_CHECK(e.get_allocated_size(small_obj) == malloc_usable_size(small_obj));
  PROBE_CHECK(e.get_allocated_size(large_obj) == malloc_usable_size(large_obj));
  free(small_obj);
  free(large_obj);
}

PROBE_CASE(nallocx_matches) {
  const MallocExt& e = RequireExt();
  for (size_t n = 1; n <= (1u << 20); n = n < 4096 ? n + 1 : n + 61) {
    void* p = malloc(n);
    const size_t usable = malloc_usable_size(p);
    PROBE_CHECK_MSG(e.nallocx(n, 0) == usable, "nallocx(%zu) %zu, usable %zu", n, e.nallocx(n, 0),
                    usable);
    PROBE_CHECK_MSG(e.get_estimated_allocated_size(n) == usable,
                    "GetEstimatedAllocatedSize(%zu) %zu, usable %zu", n,
                    e.get_estimated_allocated_size(n), usable);
    free(p);
  }
}

PROBE_CASE(mallinfo2_sane) {
  if (Expected() == Allocator::kTcmalloc) Skip("tcmalloc 2.10 has no mallinfo2");
  struct mallinfo2 before = mallinfo2();
  std::vector<void*> keep;
  for (int i = 0; i < 10000; ++i) keep.push_back(malloc(1000));
  void* big = malloc(32 << 20);
  memset(big, 1, 32 << 20);
  struct mallinfo2 mid = mallinfo2();
  const size_t in_use_before = before.uordblks + before.hblkhd;
  const size_t in_use_mid = mid.uordblks + mid.hblkhd;
  printf("in use %zu -> %zu; arena %zu -> %zu\n", in_use_before, in_use_mid, before.arena,
         mid.arena);
  PROBE_CHECK_MSG(in_use_mid >= in_use_before + 10000 * 1000 + (32u << 20),
                  "in-use bytes rose by only %zu", in_use_mid - in_use_before);
  PROBE_CHECK_MSG(mid.arena + mid.hblkhd >= mid.uordblks + mid.hblkhd,
                  "arena %zu smaller than in-use %zu", mid.arena, mid.uordblks);
  for (void* p : keep) free(p);
  free(big);
  struct mallinfo2 after = mallinfo2();
  PROBE_CHECK_MSG(after.uordblks + after.hblkhd < in_use_mid - 10000 * 1000,
                  "in-use bytes did not fall after free");
}

PROBE_CASE(large_heap_fragmentation) {
  // Allocate-and-free ever larger blocks (with a small live object in between each time, as in
  // a growing buffer): the heap must reuse/coalesce, not grow with the sum of all sizes.
  RequireExt();
  std::vector<void*> small;
  size_t peak = 0;
  for (size_t n = 1 << 20; n <= (64u << 20); n += 1 << 20) {
    void* p = malloc(n);
    PROBE_CHECK(p != nullptr);
    memset(p, 3, 4096);
    small.push_back(malloc(64));
    free(p);
    peak = n;
  }
  const size_t heap = Property("generic.heap_size");
  printf("heap_size %zu MiB after blocks up to %zu MiB\n", heap >> 20, peak >> 20);
  PROBE_CHECK_MSG(heap < 4 * peak, "heap_size %zu MiB for a peak of %zu MiB", heap >> 20,
                  peak >> 20);
  for (void* p : small) free(p);
}

// gperftools' large_heap_fragmentation_unittest, under CPU contention: blocks freed at once and
// requested again 20 000 bytes larger, 100 MB growing to 500 MB, three passes; the heap (system
// bytes, "generic.heap_size") must stay under 1 GiB after every step. Spinning threads keep
// this one preempted, and the case runs with TCMALLOC_RELEASE_RATE=100 (time-driven release
// after 5 ms) and TCMALLOC_SAMPLE_PARAMETER=524288 (CMakeLists.txt), so freed runs are released
// at arbitrary points between a free and the next request, and the big blocks are sampled:
// adjacent free memory of both kinds (backed and released) must still serve the next request,
// and address space that cannot must not pile up.
PROBE_CASE(large_heap_fragmentation_contended) {
  // gperftools 2.10 itself fails this (1037 MiB at a 402 MB block in one of two runs here): its
  // forced coalescing runs at most once per 128 MiB of growth (alloc/README.md, "Release to the
  // OS"), so the tcmalloc reference is not run.
  if (!ExpectHeapkit()) Skip("a bound gperftools 2.10 misses under contention");
  RequireExt();
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 3; ++i) {
    spinners.emplace_back([&stop, i] {
      // Small allocations too: other threads' slow paths run the page heap's release ticks.
      uint64_t x = static_cast<uint64_t>(i) + 1;
      while (!stop.load(std::memory_order_relaxed)) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        void* p = malloc(16 + (x >> 40) % 4000);
        Escape(p);
        free(p);
      }
    });
  }
  size_t max_heap = 0;
  for (int pass = 1; pass <= 3; ++pass) {
    for (size_t size = 100u << 20; size < (500u << 20); size += 20000) {
      void* p = malloc(size);
      PROBE_CHECK(p != nullptr);
      Escape(p);
      free(p);
      const size_t heap = Property("generic.heap_size");
      if (heap > max_heap) max_heap = heap;
      PROBE_CHECK_MSG(heap < (size_t{1} << 30), "pass %d, block of %zu MiB: heap_size %zu MiB",
                      pass, size >> 20, heap >> 20);
    }
  }
  stop.store(true);
  for (auto& t : spinners) t.join();
  printf("largest heap_size %zu MiB\n", max_heap >> 20);
}

// The contended case's interleaving, forced on one thread: at every step where the heap grows
// for the block, a span is taken while the block is in use (a 300 KiB block: best fit carves it
// from the start of the previous, now too small free run, which the new mapping usually ends
// next to, as a spinning thread's central list does in the contended case) and kept until the
// next such step. Right after each growth the heap stays within twice the memory in use
// (alloc/page_heap.h); before that bound this case grew the heap by a third block at every
// growth (100, 300, 900 MiB) and only the progression's luck kept it under 1 GiB.
PROBE_CASE(large_heap_fragmentation_pinned) {
  if (!ExpectHeapkit()) Skip("checks heapkit's growth bound");
  RequireExt();
  void* pin = nullptr;
  size_t max_heap = 0;
  size_t heap_before = Property("generic.heap_size");  // a free never grows the heap
  for (int pass = 1; pass <= 3; ++pass) {
    for (size_t size = 100u << 20; size < (500u << 20); size += 20000) {
      void* p = malloc(size);
      PROBE_CHECK(p != nullptr);
      Escape(p);
      size_t heap = Property("generic.heap_size");
      if (heap > heap_before) {
        const size_t free_bytes =
            Property("tcmalloc.pageheap_free_bytes") + Property("tcmalloc.pageheap_unmapped_bytes");
        const size_t in_use = heap - free_bytes;
        PROBE_CHECK_MSG(heap <= 2 * in_use,
                        "pass %d, block of %zu MiB: the heap grew to %zu MiB, %zu MiB in use", pass,
                        size >> 20, heap >> 20, in_use >> 20);
        void* q = malloc(300 << 10);
        Escape(q);
        free(pin);
        pin = q;
        heap = Property("generic.heap_size");  // the 300 KiB block may grow it too
      }
      free(p);
      heap_before = heap;
      if (heap > max_heap) max_heap = heap;
      PROBE_CHECK_MSG(heap < (size_t{1} << 30), "pass %d, block of %zu MiB: heap_size %zu MiB",
                      pass, size >> 20, heap >> 20);
    }
  }
  free(pin);
  printf("largest heap_size %zu MiB\n", max_heap >> 20);
}

}  // namespace heapkit::probe
