// Page heap: free spans by length, best fit for large runs, coalescing, release to the OS.
//
// Free spans live on one of four kinds of lists: normal (backed) or returned (madvised), each
// exact-length for lengths < kMaxPages and one list (best-fit search) for longer runs. Adjacent
// free spans of the same kind are always coalesced. Fresh memory from the OS starts on the
// normal lists (it is untouched, so it costs no RSS).
//
// Growth: when no free span holds a request, free memory could, and the memory in use is less
// than the request (a heap mostly left free by requests like this one), the growth would come
// from fragmentation: a run of adjacent free spans of both kinds (backed and released spans are
// not coalesced) that holds the request is merged into one backed span (the released pages
// fault when used, as they would anyway); failing that, every released free span of kMaxPages
// or more gives its address space back to the OS (munmap) before the heap grows. Backed free
// spans are kept (reusing them costs no page faults) as long as the heap after the growth stays
// within twice the memory in use, the request included; beyond that the coldest large ones are
// unmapped too. That bound holds after every growth: demand-driven growth (free memory less than
// the request) stays within it by itself, and fragmentation can no longer stack up runs that
// each hold a little less than the request (a span another thread takes between a freed block
// and the free run next to it splits them for good). gperftools' large_heap_fragmentation
// pattern (blocks growing from 100 to 500 MB, freed each time) so keeps its heap at 800 MiB,
// and below 2 x (500 MiB + memory in use) whatever the release ticks or other threads' spans
// did in between.

// Release (gperftools semantics): every freed page decrements a counter; when it reaches zero one
// free span is returned to the OS and the counter restarts at 1000/rate pages per released page
// (TCMALLOC_RELEASE_RATE, default 1; 0 = never release incrementally). ReleaseAtLeastNPages
// releases on demand (MallocExtension::ReleaseFreeMemory / ReleaseToSystem).
//
// Release by time (so that memory freed before a phase of light activity, which frees few
// pages, still goes back): allocator slow paths (page-heap New/Delete, central batch moves,
// the sampling counter's periodic recheck every 16 MiB) call ReleaseTick, which at most every
// kReleaseTickNs returns every free backed span that has stayed free for kReleaseAgeNs / rate
// (0.5 s at the default rate 1, 50 ms at 10; rate 0 = never). A span's age is the page-weighted
// average over coalesced parts, so a small block freed next to a long-idle run barely makes it
// younger, while memory reused within the delay is never released (no re-faulting). No
// background thread: a process that makes no allocator calls at all releases nothing.
//
// Page map coverage: free spans and large (class 0) in-use spans map their first and last page
// only; their interior pages map to nothing (like gperftools), so a large allocation or free
// writes two page-map entries, not one per page. RegisterSizeClass maps every page of a small
// span (the free fast path reads the entry of whichever page a pointer is in). InUseSpanContaining
// finds the span of an interior page of a large span by walking down to its first page.
//
// Locking: all public methods take lock_ themselves (callers may hold a central list lock: the
// order is central -> page heap). The page map is written only under lock_, except the
// size-class/sampled info (and span pointers) of the pages of in-use small spans, which their
// owner writes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/page_map.h"
#include "alloc/span.h"

namespace heapkit::alloc {

struct PageHeapStats {
  size_t system_bytes = 0;    // obtained from the OS (mapped)
  size_t free_bytes = 0;      // free and backed (normal lists)
  size_t unmapped_bytes = 0;  // free and released (returned lists)
  size_t free_spans = 0;
  size_t in_use_bytes = 0;
  size_t in_use_spans = 0;
  size_t system_allocs = 0;  // number of times the heap grew
};

class PageHeap {
 public:
  static constexpr Length kMaxPages = 128;        // exact lists for lengths < kMaxPages
  static constexpr Length kMinSystemPages = 256;  // grow by at least 2 MiB
  static constexpr double kDefaultReleaseRate = 1.0;

  constexpr PageHeap() = default;
  void Init(PageMap* map, double release_rate, size_t heap_limit_bytes);

  // An in-use span of exactly n pages (first and last page mapped to it, class 0), or nullptr.
  Span* New(Length n);
  // Same, starting at a multiple of align_pages (a power of two).
  Span* NewAligned(Length n, Length align_pages);
  // Returns an in-use span to the free lists.
  void Delete(Span* span);

  // Maps every page of the (in-use, owned) span to it with the size-class info.
  void RegisterSizeClass(Span* span, uint32_t cls, size_t object_size);
  // The in-use span containing page, or nullptr: the page's own entry, or for the interior of
  // a large span the nearest mapped page below it. Lock-free reads like the page map's; for
  // queries about pointers the caller holds or with the world stopped.
  Span* InUseSpanContaining(PageId page) const;

  // Releases free backed spans until at least n pages were released (or none is left).
  Length ReleaseAtLeastNPages(Length n);
  // Time-driven release (see above). Any thread, no allocator lock held (or a central lock).
  void ReleaseTick();
  static constexpr int64_t kReleaseTickNs = 10 * 1000 * 1000;
  static constexpr double kReleaseAgeNs = 0.5e9;  // divided by the release rate

  void SetReleaseRate(double rate);
  double release_rate() const { return release_rate_; }
  void SetHeapLimit(size_t bytes);
  void set_aggressive_decommit(bool on) { aggressive_decommit_ = on; }
  bool aggressive_decommit() const { return aggressive_decommit_; }
  // Heap growth in transparent huge pages (TCMALLOC_HUGE_PAGES): each growth a multiple of
  // 2 MiB, aligned to 2 MiB and advised MADV_HUGEPAGE. Set once, before the first growth.
  void set_huge_pages(bool on) { huge_pages_ = on; }

  PageHeapStats Stats();
  // Calls fn(span) once per span the page map knows (in use, free, released), in address order,
  // under lock_: fn must not allocate. Small spans' allocated_ counts are read racily.
  template <class Fn>
  void ForEachSpan(Fn&& fn) {
    internal::SpinLockHolder h(&lock_);
    map_->ForEachEntry([&](PageId page, Span* span) {
      if (span->start_ == page) fn(*span);
    });
  }
  // Free spans by length: counts[i] normal and returned spans of i pages (i < kMaxPages),
  // large spans are counted in counts[0]. For GetStats.
  void FreeSpanHistogram(size_t normal[kMaxPages], size_t returned[kMaxPages]);

  PageMap* pagemap() const { return map_; }
  internal::SpinLock lock_;

 private:
  // Everything below runs with lock_ held, but ClaimTick (lock-free).
  Span* AllocLocked(Length n) HEAPKIT_REQUIRES(lock_);
  // A free span of at least n pages, carved to n (nullptr if none).
  Span* SearchLocked(Length n) HEAPKIT_REQUIRES(lock_);
  // No free span holds n pages, but a run of adjacent free spans of both kinds (backed and
  // released, which are not coalesced) may: makes the released members of the first such run
  // backed (no system call) so that it coalesces into one span. True if it did.
  bool MergeMixedRun(Length n) HEAPKIT_REQUIRES(lock_);
  // Gives the address space of every released free span of kMaxPages or more back to the OS.
  // Called before a growth that free memory could have served had it been contiguous, so that
  // the heap (system bytes, reserved and released) does not grow by every request that fits no
  // run.
  void UnmapLargeReleasedSpans() HEAPKIT_REQUIRES(lock_);
  // Before any growth by n pages: unmaps free spans of kMaxPages or more (released ones first,
  // then backed ones, coldest first) while the heap after the growth would exceed twice the
  // memory in use including the request. Growth that demand forces (free memory less than the
  // request) stays within that bound anyway; growth that fragmentation forces (free runs that
  // together hold the request, split by in-use spans or separate mappings) does not: without
  // this, runs that each hold a little less than the request survive one growth after another.
  void KeepGrowthWithinTwiceDemand(Length n) HEAPKIT_REQUIRES(lock_);
  void UnmapFreeSpan(Span* span) HEAPKIT_REQUIRES(lock_);
  Span* Carve(Span* span, Length n) HEAPKIT_REQUIRES(lock_);
  void InsertFree(Span* span, bool count_release) HEAPKIT_REQUIRES(lock_);
  // A free span (location_ says which kind) onto its list, its end pages mapped, the free
  // statistics counting it; RemoveFree undoes both.
  void PushFree(Span* span) HEAPKIT_REQUIRES(lock_);
  void RemoveFree(Span* span) HEAPKIT_REQUIRES(lock_);
  SpanList* ListFor(Length n, Span::Location loc) HEAPKIT_REQUIRES(lock_);
  bool GrowHeap(Length n) HEAPKIT_REQUIRES(lock_);
  void SetBoundary(Span* span) HEAPKIT_REQUIRES(lock_);
  void ClearPage(PageId page) HEAPKIT_REQUIRES(lock_);
  Length ReleaseSpan(Span* span) HEAPKIT_REQUIRES(lock_);
  void IncrementalScavenge(Length n) HEAPKIT_REQUIRES(lock_);
  Length ReleaseLocked(Length n) HEAPKIT_REQUIRES(lock_);
  // The free backed span to release next (nullptr if none).
  Span* ReleaseVictim() HEAPKIT_REQUIRES(lock_);
  // Called with lock_ held: the time-driven release if a tick is due.
  void ReleaseTickLocked() HEAPKIT_REQUIRES(lock_);
  // True (and *now set) if this caller won the tick that is due.
  bool ClaimTick(int64_t* now);
  // Releases the free backed spans free since `cutoff` or longer.
  void ReleaseIdleLocked(int64_t now) HEAPKIT_REQUIRES(lock_);

  PageMap* map_ = nullptr;  // set once by Init
  internal::ArenaFreeList<Span> span_alloc_ HEAPKIT_GUARDED_BY(lock_);
  // Free lists by length (see above). Not written by Init (SpanList: a zero head is empty).
  SpanList normal_[kMaxPages] HEAPKIT_GUARDED_BY(lock_);
  SpanList returned_[kMaxPages] HEAPKIT_GUARDED_BY(lock_);
  SpanList large_normal_ HEAPKIT_GUARDED_BY(lock_);
  SpanList large_returned_ HEAPKIT_GUARDED_BY(lock_);
  PageHeapStats stats_ HEAPKIT_GUARDED_BY(lock_);
  int64_t scavenge_counter_ HEAPKIT_GUARDED_BY(lock_) = 0;
  size_t heap_limit_ HEAPKIT_GUARDED_BY(lock_) = 0;
  // Not guarded, by design: written under lock_ but read without it (relaxed atomic accesses:
  // ClaimTick's rate test, InUseSpanContaining's walk bound), or a flag MallocExtension sets
  // without the lock.
  double release_rate_ = 0;  // set by Init (zero-initialised globals live in .bss)
  Length longest_span_ = 0;  // the most pages any carved span had (bounds InUseSpanContaining)
  std::atomic<int64_t> last_tick_ns_{0};  // time of the last release tick
  bool aggressive_decommit_ = false;
  bool huge_pages_ = false;
};

}  // namespace heapkit::alloc
