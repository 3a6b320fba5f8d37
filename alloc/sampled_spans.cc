#include "alloc/sampled_spans.h"

#include <cstdint>

#include "alloc/internal/spin_lock.h"

namespace heapkit::alloc::sampled_spans {
namespace {

constexpr int kStripes = 64;  // LockFor takes the top 6 bits of a hash
// One lock per cache line: sampled events of different spans on different threads must not
// contend on a shared line.
struct alignas(64) Stripe {
  internal::SpinLock lock;
};
constinit Stripe stripes[kStripes];

internal::SpinLock& LockFor(const Span* span) {
  const uint64_t a = reinterpret_cast<uintptr_t>(span);
  return stripes[(a * 0x9e3779b97f4a7c15ULL) >> 58].lock;  // top 6 bits: kStripes = 64
}

void SetBit(PageMap* map, Span* span, bool on) {
  // A large (class 0) span needs no page bits: its frees always reach FreeSlow, which reads
  // sampled_, and its interior pages map to nothing. Marking them cost a write per page under
  // the stripe lock on every sampled allocation and free of a large block (64 000 pages for
  // 500 MB), stalling every thread that hashes to the stripe.
  const Length pages = span->sizeclass_ != 0 ? span->npages_ : 0;
  for (Length i = 0; i < pages; ++i) {
    const uint32_t info = map->GetInfo(span->start_ + i);
    map->SetInfo(span->start_ + i, on ? info | PageMap::kSampledBit : info & ~PageMap::kSampledBit);
  }
  __atomic_store_n(&span->sampled_, on, __ATOMIC_RELAXED);  // FreeSlow reads it unlocked
}

}  // namespace

void AddSlow(PageMap* map, Span* span, bool exact) {
  if (exact) {
    // No count: every object is recorded, so the span stays routed until it is freed whole.
    internal::SpinLockHolder h(&LockFor(span));
    __atomic_store_n(&span->exact_marked_, true, __ATOMIC_RELAXED);
    if (!span->sampled_) SetBit(map, span, true);
    return;
  }
  internal::SpinLockHolder h(&LockFor(span));
  if (span->live_sampled_++ == 0 && !span->sampled_) SetBit(map, span, true);
}

void RemoveSlow(PageMap* map, Span* span) {
  internal::SpinLockHolder h(&LockFor(span));
  if (span->live_sampled_ > 0) --span->live_sampled_;
  if (span->live_sampled_ == 0 && span->sampled_ && !span->exact_marked_) SetBit(map, span, false);
}

void ReleaseIfUnusedSlow(PageMap* map, Span* span) {
  internal::SpinLockHolder h(&LockFor(span));
  if (span->live_sampled_ == 0 && span->sampled_ && !span->exact_marked_) SetBit(map, span, false);
}

// Every stripe, held across fork (analysis off: an array of locks).
void LockAll() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  for (Stripe& s : stripes) s.lock.Lock();
}

void UnlockAll() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  for (int i = kStripes - 1; i >= 0; --i) stripes[i].lock.Unlock();
}

}  // namespace heapkit::alloc::sampled_spans
