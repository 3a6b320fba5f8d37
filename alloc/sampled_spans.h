// Which spans send their frees to the slow path because they hold live sampled objects.
//
// The free fast path must not pay for sampling, yet the sampler observer must hear about every
// free of a sampled object. The page map's kSampledBit routes frees of a span to FreeSlow; this
// file decides when that bit is set and cleared:
//  - Span::live_sampled_ counts the span's objects that the observer recorded and has not yet
//    seen freed. The bit is set on every page of the span while the count is positive.
//  - When the count drops to zero the bit is cleared again.
//  - Exact mode (sample parameter 1: every object recorded) keeps no count: the next allocation
//    from the span would set the bit again at once. The span is flagged exact_marked_ and stays
//    routed until it goes back to the page heap, which resets bit, flag and count
//    (PageHeap::New/Delete). Because the flag is never cleared while the span lives, objects
//    recorded in exact mode are always reported freed, even if the rate changes meanwhile.
//  - A span left marked with a zero count (the observer went away) is cleared by the next free
//    that finds it so (ReleaseIfUnused).
// The count and bit of a span change only under one of kStripes spin locks chosen by the span's
// address: leaf locks, taken with no other allocator lock held and holding none inside. A
// thread that samples an object sets the bit before returning the object, so any later free of
// it — on whatever thread the program hands it to — sees the bit.
#pragma once

#include "alloc/page_map.h"
#include "alloc/span.h"

namespace heapkit::alloc::sampled_spans {

void AddSlow(PageMap* map, Span* span, bool exact);
void RemoveSlow(PageMap* map, Span* span);
void ReleaseIfUnusedSlow(PageMap* map, Span* span);
inline bool ExactMarked(const Span* span) {
  return __atomic_load_n(&span->exact_marked_, __ATOMIC_RELAXED);
}

// A recorded sampled object was allocated from span (in use, owned by the caller's object);
// exact: the sampler records every object.
inline void Add(PageMap* map, Span* span, bool exact) {
  if (!(exact && ExactMarked(span))) AddSlow(map, span, exact);
}
// A recorded sampled object of span was freed (before its memory is reused).
inline void Remove(PageMap* map, Span* span) {
  if (!ExactMarked(span)) RemoveSlow(map, span);
}
// A free reached the slow path through the bit but the object was not a recorded sample:
// clears the bit if the span has no live sampled object and was never marked in exact mode.
inline void ReleaseIfUnused(PageMap* map, Span* span) {
  if (!ExactMarked(span)) ReleaseIfUnusedSlow(map, span);
}

// fork(): held across it so that the child never inherits a taken stripe.
void LockAll();
void UnlockAll();

}  // namespace heapkit::alloc::sampled_spans
