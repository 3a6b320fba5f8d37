#include "alloc/page_heap.h"

#include <time.h>

#include "alloc/internal/dcheck.h"
#include "alloc/internal/log.h"
#include "alloc/internal/system_memory.h"
#include "alloc/observer_hooks.h"

namespace heapkit::alloc {
namespace {
constexpr int64_t kDefaultReleaseDelay = int64_t{1} << 18;  // pages
constexpr int64_t kMaxReleaseDelay = int64_t{1} << 20;      // pages

int64_t CoarseNowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Page-weighted average of two free times (no overflow for any span length).
int64_t MergedFreeTime(const Span* a, const Span* b) {
  const double wa = static_cast<double>(a->npages_), wb = static_cast<double>(b->npages_);
  return a->free_since_ns_ +
         static_cast<int64_t>(static_cast<double>(b->free_since_ns_ - a->free_since_ns_) * wb /
                              (wa + wb));
}
}  // namespace

using internal::SpinLockHolder;

void PageHeap::Init(PageMap* map, double release_rate, size_t heap_limit_bytes) {
  SpinLockHolder h(&lock_);  // uncontended (initialisation runs once), for the analysis
  map_ = map;
  release_rate_ = release_rate;
  heap_limit_ = heap_limit_bytes;
  scavenge_counter_ = 0;  // like gperftools: the first free may already release
}

SpanList* PageHeap::ListFor(Length n, Span::Location loc) {
  if (n < kMaxPages) return loc == Span::kOnReturnedFreelist ? &returned_[n] : &normal_[n];
  return loc == Span::kOnReturnedFreelist ? &large_returned_ : &large_normal_;
}

void PageHeap::ClearPage(PageId page) { map_->Set(page, nullptr, 0); }

void PageHeap::SetBoundary(Span* span) {
  map_->Set(span->start_, span, 0);
  if (span->npages_ > 1) map_->Set(span->start_ + span->npages_ - 1, span, 0);
}

Span* PageHeap::InUseSpanContaining(PageId page) const {
  Span* span = map_->GetSpan(page);
  if (span == nullptr) {
    // Interior of a large span: its first page is the nearest mapped page below. Walk at most
    // the length of the longest span ever carved.
    const Length longest = __atomic_load_n(&longest_span_, __ATOMIC_RELAXED);
    for (Length back = 1; back < longest && back <= page && span == nullptr; ++back) {
      span = map_->GetSpan(page - back);
    }
  }
  if (span == nullptr || span->location_ != Span::kInUse) return nullptr;
  return span->start_ <= page && page < span->start_ + span->npages_ ? span : nullptr;
}

void PageHeap::PushFree(Span* span) {
  SetBoundary(span);
  ListFor(span->npages_, span->location_)->Push(span);
  if (span->location_ == Span::kOnReturnedFreelist) {
    stats_.unmapped_bytes += span->Bytes();
  } else {
    stats_.free_bytes += span->Bytes();
  }
  ++stats_.free_spans;
}

void PageHeap::RemoveFree(Span* span) {
  SpanList::Remove(span);
  if (span->location_ == Span::kOnReturnedFreelist) {
    stats_.unmapped_bytes -= span->Bytes();
  } else {
    stats_.free_bytes -= span->Bytes();
  }
  --stats_.free_spans;
}

// Coalesces `span` (not on any list, location_ set to its free kind, pages of its interior
// already cleared) with free neighbours of the same kind and puts it on its list.
void PageHeap::InsertFree(Span* span, bool count_release) {
  HEAPKIT_DCHECK(lock_.IsHeld());
  const Span::Location loc = span->location_;
  HEAPKIT_DCHECK(loc == Span::kOnNormalFreelist || loc == Span::kOnReturnedFreelist);
  const Length freed = span->npages_;
  Span* prev = span->start_ > 0 ? map_->GetSpan(span->start_ - 1) : nullptr;
  if (prev != nullptr && prev->location_ == loc && prev->start_ + prev->npages_ == span->start_) {
    RemoveFree(prev);
    if (prev->npages_ > 1) ClearPage(prev->start_ + prev->npages_ - 1);
    ClearPage(span->start_);
    span->free_since_ns_ = MergedFreeTime(span, prev);
    span->start_ = prev->start_;
    span->npages_ += prev->npages_;
    span->zero_ = span->zero_ && prev->zero_;
    span_alloc_.Delete(prev);
  }
  Span* next = map_->GetSpan(span->start_ + span->npages_);
  if (next != nullptr && next->location_ == loc && next->start_ == span->start_ + span->npages_) {
    RemoveFree(next);
    ClearPage(span->start_ + span->npages_ - 1);
    if (next->npages_ > 1) ClearPage(next->start_);
    span->free_since_ns_ = MergedFreeTime(span, next);
    span->npages_ += next->npages_;
    span->zero_ = span->zero_ && next->zero_;
    span_alloc_.Delete(next);
  }
  PushFree(span);
  if (count_release && loc == Span::kOnNormalFreelist) IncrementalScavenge(freed);
}

Span* PageHeap::Carve(Span* span, Length n) {
  HEAPKIT_DCHECK(lock_.IsHeld());
  HEAPKIT_DCHECK(span->location_ != Span::kInUse && span->npages_ >= n);
  RemoveFree(span);
  const Span::Location loc = span->location_;
  if (span->npages_ > n) {
    Span* rest = span_alloc_.New();
    if (rest == nullptr) internal::Fatal("out of metadata memory");
    rest->start_ = span->start_ + n;
    rest->npages_ = span->npages_ - n;
    rest->location_ = loc;
    rest->zero_ = span->zero_;
    rest->free_since_ns_ = span->free_since_ns_;
    span->npages_ = n;
    PushFree(rest);
  }
  if (span->npages_ > longest_span_) {
    __atomic_store_n(&longest_span_, span->npages_, __ATOMIC_RELAXED);
  }
  span->location_ = Span::kInUse;
  span->sizeclass_ = 0;
  span->sampled_ = false;
  span->live_sampled_ = 0;
  span->exact_marked_ = false;
  __atomic_store_n(&span->slot_array_, nullptr, __ATOMIC_RELAXED);  // object_slots.cc
  span->freelist_ = nullptr;
  span->allocated_ = 0;
  span->carved_ = 0;
  SetBoundary(span);  // in use: large spans map their ends; small ones all pages later
  HEAPKIT_DCHECK(map_->GetSpan(span->start_) == span);
  HEAPKIT_DCHECK(map_->GetSpan(span->start_ + span->npages_ - 1) == span);
  return span;
}

Span* PageHeap::SearchLocked(Length n) {
  for (Length len = n; len < kMaxPages; ++len) {
    if (!normal_[len].empty()) return Carve(normal_[len].first(), n);
    if (!returned_[len].empty()) return Carve(returned_[len].first(), n);
  }
  // Best fit among the large spans: the shortest, then the lowest address; backed spans
  // first (reusing them costs no page faults, and leaves released tails released).
  Span* best = nullptr;
  for (const SpanList* list : {&large_normal_, &large_returned_}) {
    for (Span* s = list->first(); s != nullptr; s = list->next(s)) {
      if (s->npages_ < n) continue;
      if (best == nullptr || s->npages_ < best->npages_ ||
          (s->npages_ == best->npages_ && s->start_ < best->start_)) {
        best = s;
      }
    }
    if (best != nullptr) break;
  }
  return best != nullptr ? Carve(best, n) : nullptr;
}

Span* PageHeap::AllocLocked(Length n) {
  if (Span* span = SearchLocked(n)) return span;
  // No free span holds n pages. When free memory could hold the request and the memory in use
  // is less than the request (the heap is mostly free memory left by requests like this one),
  // the growth would be fragmentation, not demand: first merge a run of adjacent free spans of
  // both kinds that holds it; failing that, give the address space of the large released free
  // spans back before growing (using them would fault as much as fresh memory). Backed free
  // spans stay for reuse without page faults.
  const size_t bytes = n << kPageShift;
  if (stats_.in_use_bytes < bytes && stats_.free_bytes + stats_.unmapped_bytes >= bytes) {
    if (MergeMixedRun(n)) {
      Span* span = SearchLocked(n);
      HEAPKIT_DCHECK(span != nullptr);
      if (span != nullptr) return span;
    }
    UnmapLargeReleasedSpans();
  }
  KeepGrowthWithinTwiceDemand(n);
  if (!GrowHeap(n)) return nullptr;
  return SearchLocked(n);
}

bool PageHeap::MergeMixedRun(Length n) {
  HEAPKIT_DCHECK(lock_.IsHeld());
  // Each run of adjacent free spans is walked from its first (leftmost) span.
  auto is_run_start = [&](const Span* s) {
    if (s->start_ == 0) return true;
    const Span* prev = map_->GetSpan(s->start_ - 1);
    return prev == nullptr || prev->location_ == Span::kInUse ||
           prev->start_ + prev->npages_ != s->start_;
  };
  auto run_pages = [&](Span* first) {
    Length total = 0;
    for (Span* s = first; s != nullptr && s->location_ != Span::kInUse;) {
      total += s->npages_;
      Span* next = map_->GetSpan(s->start_ + s->npages_);
      if (next == nullptr || next->start_ != s->start_ + s->npages_) break;
      s = next;
    }
    return total;
  };
  auto try_list = [&](const SpanList& list) HEAPKIT_REQUIRES(lock_) -> bool {
    for (Span* s = list.first(); s != nullptr; s = list.next(s)) {
      if (!is_run_start(s) || run_pages(s) < n) continue;
      // Turn the released members into backed ones (no system call: a backed free span may
      // hold untouched pages, as fresh memory from the OS does), which coalesces the run into
      // one span. Only the released pages fault again when used, as they would anyway.
      for (Span* m = s; m != nullptr && m->location_ != Span::kInUse;) {
        Span* next = map_->GetSpan(m->start_ + m->npages_);
        if (next != nullptr && next->start_ != m->start_ + m->npages_) next = nullptr;
        if (m->location_ == Span::kOnReturnedFreelist) {
          RemoveFree(m);
          m->location_ = Span::kOnNormalFreelist;
          m->zero_ = false;
          InsertFree(m, false);  // may delete its backed neighbours, never `next`'s successor
          next = map_->GetSpan(m->start_ + m->npages_);  // m grew: look again
          if (next != nullptr && next->start_ != m->start_ + m->npages_) next = nullptr;
        }
        m = next;
      }
      return true;
    }
    return false;
  };
  if (try_list(large_normal_) || try_list(large_returned_)) return true;
  for (Length len = 1; len < kMaxPages; ++len) {
    if (try_list(normal_[len]) || try_list(returned_[len])) return true;
  }
  return false;
}

void PageHeap::UnmapFreeSpan(Span* span) {
  HEAPKIT_DCHECK(lock_.IsHeld());
  HEAPKIT_DCHECK(span->location_ != Span::kInUse);
  RemoveFree(span);
  ClearPage(span->start_);
  if (span->npages_ > 1) ClearPage(span->start_ + span->npages_ - 1);
  stats_.system_bytes -= span->Bytes();
  internal::SystemFree(reinterpret_cast<void*>(span->StartAddress()), span->Bytes());
  span_alloc_.Delete(span);
}

void PageHeap::UnmapLargeReleasedSpans() {
  while (!large_returned_.empty()) UnmapFreeSpan(large_returned_.first());
}

void PageHeap::KeepGrowthWithinTwiceDemand(Length n) {
  HEAPKIT_DCHECK(lock_.IsHeld());
  const size_t growth = (n < kMinSystemPages ? kMinSystemPages : n) << kPageShift;
  const size_t bound = 2 * (stats_.in_use_bytes + (n << kPageShift));
  while (stats_.system_bytes + growth > bound) {
    // Released spans first (their pages are gone already), then the backed span freed
    // longest ago (lists are LIFO: the tail).
    Span* victim = !large_returned_.empty() ? large_returned_.last()
                   : !large_normal_.empty() ? large_normal_.last()
                                            : nullptr;
    if (victim == nullptr) return;
    UnmapFreeSpan(victim);
  }
}

bool PageHeap::GrowHeap(Length n) {
  if (n > (kMaxAllocSize >> kPageShift)) return false;
  Length ask = n < kMinSystemPages ? kMinSystemPages : n;
  // Huge pages: whole 2 MiB pages, so that no growth leaves a part of one in small pages.
  constexpr Length kHugePages = internal::kSystemHugePageSize >> kPageShift;
  const size_t alignment = huge_pages_ ? internal::kSystemHugePageSize : kPageSize;
  if (huge_pages_) ask = (ask + kHugePages - 1) & ~(kHugePages - 1);
  auto over_limit = [&](Length pages) HEAPKIT_REQUIRES(lock_) {
    return heap_limit_ != 0 &&
           stats_.system_bytes - stats_.unmapped_bytes + (pages << kPageShift) > heap_limit_;
  };
  if (over_limit(ask)) {
    ask = n;
    if (over_limit(ask)) {
      ReleaseLocked(static_cast<Length>(-1));
      if (over_limit(ask)) return false;
    }
  }
  void* mem = internal::SystemAlloc(ask << kPageShift, alignment);
  if (mem == nullptr && ask > n) {
    ask = n;
    mem = internal::SystemAlloc(ask << kPageShift, alignment);
  }
  if (mem == nullptr) return false;
  if (huge_pages_) internal::SystemAdviseHugePages(mem, ask << kPageShift);
  PageId start = reinterpret_cast<uintptr_t>(mem) >> kPageShift;
  // Also make sure the neighbouring pages have leaves so coalescing lookups stay cheap.
  if (!map_->Ensure(start, ask)) {
    internal::SystemFree(mem, ask << kPageShift);
    return false;
  }
  Span* span = span_alloc_.New();
  if (span == nullptr) {
    internal::SystemFree(mem, ask << kPageShift);
    return false;
  }
  span->start_ = start;
  span->npages_ = ask;
  span->location_ = Span::kOnNormalFreelist;
  span->zero_ = true;
  span->free_since_ns_ = CoarseNowNs();
  stats_.system_bytes += ask << kPageShift;
  ++stats_.system_allocs;
  InsertFree(span, false);
  NoteHeapGrowth(ask << kPageShift);
  return true;
}

Span* PageHeap::New(Length n) {
  if (n == 0) n = 1;
  SpinLockHolder h(&lock_);
  Span* span = AllocLocked(n);
  if (span != nullptr) {
    stats_.in_use_bytes += span->Bytes();
    ++stats_.in_use_spans;
  }
  ReleaseTickLocked();
  return span;
}

Span* PageHeap::NewAligned(Length n, Length align_pages) {
  if (align_pages <= 1) return New(n);
  if (n == 0) n = 1;
  SpinLockHolder h(&lock_);
  Span* span = AllocLocked(n + align_pages - 1);
  if (span == nullptr) return nullptr;
  PageId aligned = (span->start_ + align_pages - 1) & ~(align_pages - 1);
  Length prefix = aligned - span->start_;
  Length suffix = span->npages_ - prefix - n;
  auto give_back = [&](PageId start, Length len) HEAPKIT_REQUIRES(lock_) {
    Span* s = span_alloc_.New();
    if (s == nullptr) internal::Fatal("out of metadata memory");
    s->start_ = start;
    s->npages_ = len;
    s->location_ = Span::kOnNormalFreelist;
    s->zero_ = span->zero_;
    s->free_since_ns_ = span->free_since_ns_;
    InsertFree(s, false);  // interior pages: never mapped (the carved span mapped its ends)
  };
  span->start_ = aligned;
  span->npages_ = n;
  if (prefix > 0) give_back(aligned - prefix, prefix);
  if (suffix > 0) give_back(aligned + n, suffix);
  SetBoundary(span);  // in use: large spans map their ends; small ones all pages later
  stats_.in_use_bytes += span->Bytes();
  ++stats_.in_use_spans;
  return span;
}

void PageHeap::Delete(Span* span) {
  SpinLockHolder h(&lock_);
  HEAPKIT_DCHECK(span->location_ == Span::kInUse);  // not freed twice
  HEAPKIT_DCHECK(map_->GetSpan(span->start_) == span);
  stats_.in_use_bytes -= span->Bytes();
  --stats_.in_use_spans;
  if (span->sizeclass_ != 0) {  // small spans map every page; large ones only their ends
    for (Length i = 1; i + 1 < span->npages_; ++i) ClearPage(span->start_ + i);
  }
  span->location_ = Span::kOnNormalFreelist;
  span->sizeclass_ = 0;
  span->sampled_ = false;
  span->live_sampled_ = 0;
  span->exact_marked_ = false;
  __atomic_store_n(&span->slot_array_, nullptr, __ATOMIC_RELAXED);  // object_slots.cc
  span->freelist_ = nullptr;
  span->zero_ = false;
  span->free_since_ns_ = CoarseNowNs();
  if (aggressive_decommit_) {
    span->location_ = Span::kOnReturnedFreelist;
    span->zero_ =
        internal::SystemRelease(reinterpret_cast<void*>(span->StartAddress()), span->Bytes());
  }
  InsertFree(span, true);
  ReleaseTickLocked();
}

void PageHeap::RegisterSizeClass(Span* span, uint32_t cls, size_t object_size) {
  HEAPKIT_DCHECK(cls > 0 && cls < kNumClassesMax);
  HEAPKIT_DCHECK(span->location_ == Span::kInUse && span->sizeclass_ == 0);
  span->sizeclass_ = static_cast<uint8_t>(cls);
  for (Length i = 0; i < span->npages_; ++i) {
    map_->SetSmall(span->start_ + i, span, cls, object_size, i);
  }
}

Length PageHeap::ReleaseSpan(Span* span) {
  RemoveFree(span);
  Length n = span->npages_;
  const bool released =
      internal::SystemRelease(reinterpret_cast<void*>(span->StartAddress()), span->Bytes());
  span->location_ = Span::kOnReturnedFreelist;
  span->zero_ = released;
  InsertFree(span, false);
  return n;
}

Span* PageHeap::ReleaseVictim() {
  // Lists are LIFO: the tail (prev_) is the span freed longest ago, the coldest to release.
  if (!large_normal_.empty()) return large_normal_.last();
  for (Length len = kMaxPages - 1; len > 0; --len) {
    if (!normal_[len].empty()) return normal_[len].last();
  }
  return nullptr;
}

Length PageHeap::ReleaseLocked(Length n) {
  Length released = 0;
  while (released < n) {
    Span* victim = ReleaseVictim();
    if (victim == nullptr) break;
    released += ReleaseSpan(victim);
  }
  return released;
}

Length PageHeap::ReleaseAtLeastNPages(Length n) {
  SpinLockHolder h(&lock_);
  return ReleaseLocked(n);
}

void PageHeap::IncrementalScavenge(Length n) {
  scavenge_counter_ -= static_cast<int64_t>(n);
  if (scavenge_counter_ >= 0) return;
  if (release_rate_ <= 0) {
    scavenge_counter_ = kMaxReleaseDelay;
    return;
  }
  Length released = ReleaseLocked(1);
  if (released == 0) {
    scavenge_counter_ = kDefaultReleaseDelay;
    return;
  }
  double wait = 1000.0 / release_rate_ * static_cast<double>(released);
  if (wait > static_cast<double>(kMaxReleaseDelay)) wait = static_cast<double>(kMaxReleaseDelay);
  scavenge_counter_ = static_cast<int64_t>(wait);
}

bool PageHeap::ClaimTick(int64_t* now) {
  double rate;
  __atomic_load(&release_rate_, &rate, __ATOMIC_RELAXED);
  if (rate <= 0) return false;
  *now = CoarseNowNs();
  int64_t last = last_tick_ns_.load(std::memory_order_relaxed);
  if (*now - last < kReleaseTickNs) return false;
  return last_tick_ns_.compare_exchange_strong(last, *now, std::memory_order_relaxed);
}

void PageHeap::ReleaseTick() {
  int64_t now;
  if (!ClaimTick(&now)) return;
  SpinLockHolder h(&lock_);
  if (release_rate_ > 0) ReleaseIdleLocked(now);
}

void PageHeap::ReleaseTickLocked() {
  int64_t now;
  if (ClaimTick(&now)) ReleaseIdleLocked(now);
}

void PageHeap::ReleaseIdleLocked(int64_t now) {
  const int64_t cutoff = now - static_cast<int64_t>(kReleaseAgeNs / release_rate_);
  auto release_old = [&](const SpanList& list) HEAPKIT_REQUIRES(lock_) {
    for (Span* s = list.first(); s != nullptr;) {
      Span* next = list.next(s);  // ReleaseSpan moves s to a returned list (and coalesces there)
      if (s->free_since_ns_ <= cutoff) ReleaseSpan(s);
      s = next;
    }
  };
  release_old(large_normal_);
  for (Length len = 1; len < kMaxPages; ++len) release_old(normal_[len]);
}

void PageHeap::SetReleaseRate(double rate) {
  SpinLockHolder h(&lock_);
  double r = rate < 0 ? 0 : rate;  // not const: clang's __atomic_store takes a plain pointer
  __atomic_store(&release_rate_, &r, __ATOMIC_RELAXED);  // ReleaseTick reads it unlocked
  if (scavenge_counter_ > kDefaultReleaseDelay) scavenge_counter_ = kDefaultReleaseDelay;
}

void PageHeap::SetHeapLimit(size_t bytes) {
  SpinLockHolder h(&lock_);
  heap_limit_ = bytes;
}

PageHeapStats PageHeap::Stats() {
  SpinLockHolder h(&lock_);
  return stats_;
}

void PageHeap::FreeSpanHistogram(size_t normal[kMaxPages], size_t returned[kMaxPages]) {
  SpinLockHolder h(&lock_);
  for (Length i = 0; i < kMaxPages; ++i) {
    normal[i] = returned[i] = 0;
    if (i == 0) continue;
    normal[i] = normal_[i].size();
    returned[i] = returned_[i].size();
  }
  normal[0] = large_normal_.size();
  returned[0] = large_returned_.size();
}

}  // namespace heapkit::alloc
