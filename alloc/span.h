// Span: a run of contiguous pages (see common.h glossary).
//
// Invariants:
//  - location_ == kInUse: every page of the span maps to it in the page map. sizeclass_ == 0
//    means one large object starting at the first page; otherwise objects of that class are
//    carved from the span start: objects [0, carved_) have been carved, the others are free and
//    untouched; freelist_ links carved objects that are free in the span; allocated_ counts
//    objects handed to the central tier (and beyond).
//  - location_ is kOnNormalFreelist / kOnReturnedFreelist: the span is free in the page heap;
//    only its first and last page map to it (interior entries are cleared).
//  - zero_ is true only for memory never written since it came from the OS or was released;
//    calloc skips memset for large objects carved from such spans.
//  - next_/prev_ link the span into exactly one list of its owner (page heap or central).
//  - affinity_ (small in-use spans): the thread cache the central list last handed objects of
//    this span to (span_affinity.h); written under the class's central lock, reset when the
//    span comes from the page heap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/span_affinity.h"

namespace heapkit::alloc {

struct Span {
  enum Location : uint8_t { kInUse = 0, kOnNormalFreelist = 1, kOnReturnedFreelist = 2 };

  PageId start_ = 0;
  Length npages_ = 0;
  Span* next_ = nullptr;
  Span* prev_ = nullptr;
  void* freelist_ = nullptr;
  uint32_t allocated_ = 0;
  uint32_t carved_ = 0;
  uint32_t live_sampled_ = 0;  // recorded sampled objects not yet freed (sampled_spans.h)
  uint8_t sizeclass_ = 0;
  Location location_ = kInUse;
  bool sampled_ = false;  // the page map's kSampledBit is set on its pages (sampled_spans.h)
  bool exact_marked_ = false;  // marked in exact mode: routed until freed whole (sampled_spans.h)
  bool zero_ = false;     // every byte is known to be zero (fresh from the OS or released)
  uint64_t scratch_ = 0;  // used by live-object enumeration while the world is stopped
  // The span's object slot array and its install stamp, cached by alloc/object_slots.cc
  // (exact mode). The array is reset (nullptr) when the span comes into use and when it is
  // freed, so an owner of one of its objects trusts it as is; racy readers validate it with
  // the stamp (see "Span cache" there). Accessed with relaxed atomics.
  void* slot_array_ = nullptr;
  uint64_t slot_stamp_ = 0;
  // Free backed spans: when they became free (coarse monotonic ns; page-weighted average over
  // coalesced parts), for the page heap's time-driven release.
  int64_t free_since_ns_ = 0;
  SpanAffinity affinity_;  // small in-use spans: see above (central_free_list.h)

  uintptr_t StartAddress() const { return start_ << kPageShift; }
  size_t Bytes() const { return npages_ << kPageShift; }
  bool IsFree() const { return location_ != kInUse; }
};

// Circular doubly linked list with a sentinel.
inline void SpanListInit(Span* list) { list->next_ = list->prev_ = list; }
inline bool SpanListEmpty(const Span* list) { return list->next_ == list; }
inline void SpanListRemove(Span* span) {
  span->prev_->next_ = span->next_;
  span->next_->prev_ = span->prev_;
  span->next_ = span->prev_ = nullptr;
}
inline void SpanListPush(Span* list, Span* span) {
  span->next_ = list->next_;
  span->prev_ = list;
  list->next_->prev_ = span;
  list->next_ = span;
}

}  // namespace heapkit::alloc
