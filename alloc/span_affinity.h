// Thread affinity of a small span: the thread cache its objects are handed to.
//
// The central list hands the objects of one span to one thread cache at a time (rules in
// central_free_list.h), so that in the common case the objects of one span -- and so of one
// cache line -- are live in one thread: no false sharing of user data between threads
// (alloc/README.md, "Thread-affine spans").
//
// An owner is named by the address of its cache's tag word and the tag it held. The tag is a
// fresh number for every cache and is cleared when the thread exits (ThreadCacheRegistry::Destroy),
// so an owner whose word no longer holds its tag is gone and its spans and batches are anybody's.
// Thread caches live in arena memory that is never unmapped, so reading a stale word is safe; it
// is read with relaxed atomics (a stale answer only makes a hand-off less affine).
#pragma once

#include <cstdint>

namespace heapkit::alloc {

struct SpanAffinity {
  const uint64_t* word = nullptr;  // the owner's tag word; nullptr: no owner (or no requester)
  uint64_t tag = 0;

  bool none() const { return word == nullptr; }
  bool Alive() const { return word != nullptr && __atomic_load_n(word, __ATOMIC_RELAXED) == tag; }
  bool operator==(const SpanAffinity& o) const { return word == o.word && tag == o.tag; }
  // May objects owned by `owner` be handed to this requester? Its own, unowned or orphaned
  // objects; a requester without affinity (a thread with no cache, unit tests) takes anything.
  bool MayTake(const SpanAffinity& owner) const {
    return none() || owner == *this || !owner.Alive();
  }
};

}  // namespace heapkit::alloc
