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
//  - next_/prev_ (SpanLinks) link the span into at most one SpanList of its owner (page heap
//    or central list).
//  - affinity_ (small in-use spans): the thread cache the central list last handed objects of
//    this span to (span_affinity.h); written under the class's central lock, reset when the
//    span comes from the page heap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/span_affinity.h"

namespace heapkit::alloc {

struct Span;

// A span's list links, and a list head: two pointers. The page heap's 258 list heads and the
// central lists' two each are SpanLinks, not whole Spans (a Span is ~100 bytes).
struct SpanLinks {
  SpanLinks* next_ = nullptr;
  SpanLinks* prev_ = nullptr;
};

struct Span : SpanLinks {
  enum Location : uint8_t { kInUse = 0, kOnNormalFreelist = 1, kOnReturnedFreelist = 2 };

  PageId start_ = 0;
  Length npages_ = 0;
  void* freelist_ = nullptr;
  uint32_t allocated_ = 0;
  uint32_t carved_ = 0;
  uint32_t live_sampled_ = 0;  // recorded sampled objects not yet freed (sampled_spans.h)
  uint8_t sizeclass_ = 0;
  Location location_ = kInUse;
  bool sampled_ = false;       // the page map's kSampledBit is set on its pages (sampled_spans.h)
  bool exact_marked_ = false;  // marked in exact mode: routed until freed whole (sampled_spans.h)
  bool zero_ = false;          // every byte is known to be zero (fresh from the OS or released)
  uint64_t scratch_ = 0;       // used by live-object enumeration while the world is stopped
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
};

// Circular doubly linked list of spans with a two-pointer sentinel (head_). A head of two
// null pointers (as zero-initialised .bss leaves it) is an empty list that links itself on
// its first Push: nobody writes a list before a span goes on it, so the lists of a size class
// or span length a program never uses cost no RSS (a small program uses few of them).
class SpanList {
 public:
  constexpr SpanList() = default;
  SpanList(const SpanList&) = delete;
  SpanList& operator=(const SpanList&) = delete;

  bool empty() const { return head_.next_ == nullptr || head_.next_ == &head_; }
  // First (most recently pushed) and last span, nullptr when empty.
  Span* first() const { return empty() ? nullptr : AsSpan(head_.next_); }
  Span* last() const { return empty() ? nullptr : AsSpan(head_.prev_); }
  // The span after `span` (on this list), nullptr at the end.
  Span* next(const Span* span) const {
    return span->next_ == &head_ ? nullptr : AsSpan(span->next_);
  }
  size_t size() const {  // walks the list
    size_t n = 0;
    for (const Span* s = first(); s != nullptr; s = next(s)) ++n;
    return n;
  }
  void Push(Span* span) {  // at the front
    if (head_.next_ == nullptr) head_.next_ = head_.prev_ = &head_;
    span->next_ = head_.next_;
    span->prev_ = &head_;
    head_.next_->prev_ = span;
    head_.next_ = span;
  }
  void PushBack(Span* span) {  // at the end
    if (head_.next_ == nullptr) head_.next_ = head_.prev_ = &head_;
    span->prev_ = head_.prev_;
    span->next_ = &head_;
    head_.prev_->next_ = span;
    head_.prev_ = span;
  }
  // Unlinks span from whichever list holds it.
  static void Remove(Span* span) {
    span->prev_->next_ = span->next_;
    span->next_->prev_ = span->prev_;
    span->next_ = span->prev_ = nullptr;
  }

 private:
  static Span* AsSpan(SpanLinks* links) { return static_cast<Span*>(links); }
  SpanLinks head_;
};

}  // namespace heapkit::alloc
