#include "alloc/central_free_list.h"

#include "alloc/internal/arena.h"
#include "alloc/internal/dcheck.h"
#include "alloc/internal/log.h"
#include "alloc/internal/system_memory.h"

namespace heapkit::alloc {

using internal::SpinLockHolder;

void CentralFreeList::Init(uint32_t cls, const SizeMap* sizemap, PageHeap* heap) {
  HEAPKIT_DCHECK(cls > 0 && cls < static_cast<uint32_t>(sizemap->num_classes()));
  cls_ = cls;
  sizemap_ = sizemap;
  heap_ = heap;
  object_size_ = sizemap->ClassSize(cls);
  objects_per_span_ = sizemap->ObjectsPerSpan(cls);
  const size_t span_bytes = size_t{sizemap->ClassPages(cls)} << kPageShift;
  prefault_ = object_size_ >= kPrefaultMinObject && span_bytes <= kPrefaultMaxSpan;
  affine_ = object_size_ <= kAffinityMaxObject;
  num_to_move_ = sizemap->NumToMove(cls);
  size_t batch_bytes = object_size_ * static_cast<size_t>(num_to_move_);
  size_t slots = kTransferBytesPerClass / batch_bytes;
  if (slots < 1) slots = 1;
  if (slots > kMaxSlots) slots = kMaxSlots;
  max_slots_ = static_cast<int>(slots);
  ready_.store(true, std::memory_order_release);
}

namespace {
const SizeMap* lazy_sizemap = nullptr;
PageHeap* lazy_heap = nullptr;
}  // namespace

void CentralFreeList::SetLazyInit(const SizeMap* sizemap, PageHeap* heap) {
  lazy_sizemap = sizemap;
  lazy_heap = heap;
}

void CentralFreeList::InitOnFirstUse(uint32_t cls) {
  HEAPKIT_DCHECK(lazy_sizemap != nullptr);
  SpinLockHolder h(&lock_);
  if (!ready_.load(std::memory_order_relaxed)) Init(cls, lazy_sizemap, lazy_heap);
}

bool CentralFreeList::HaveSlots() {
  if (HEAPKIT_LIKELY(slots_ != nullptr)) return true;
  // Lock order central -> arena (allocator.h). Out of memory: the batch goes to the spans.
  slots_ = static_cast<Batch*>(
      internal::ArenaAlloc(sizeof(Batch) * static_cast<size_t>(max_slots_), alignof(Batch)));
  return slots_ != nullptr;
}

namespace {
// Holds a central list's lock for a scope and counts the acquisition (and whether the lock was
// found held) in the list's counters, which are written only under that lock.
class HEAPKIT_SCOPED_CAPABILITY CountedLockHolder {
 public:
  CountedLockHolder(internal::SpinLock* lock, CentralFreeList::Counters* counters)
      HEAPKIT_ACQUIRE(lock)
      : lock_(lock) {
    if (HEAPKIT_UNLIKELY(!lock_->TryLock())) {
      lock_->Lock();
      ++counters->lock_contended;
    }
    ++counters->lock_acquisitions;
  }
  ~CountedLockHolder() HEAPKIT_RELEASE() { lock_->Unlock(); }
  CountedLockHolder(const CountedLockHolder&) = delete;
  CountedLockHolder& operator=(const CountedLockHolder&) = delete;

 private:
  internal::SpinLock* lock_;
};
}  // namespace

bool CentralFreeList::Populate(const SpanAffinity& who) {
  Span* span = heap_->New(sizemap_->ClassPages(cls_));
  if (span == nullptr) return false;
  heap_->RegisterSizeClass(span, cls_, object_size_);
  HEAPKIT_DCHECK(heap_->pagemap()->GetSpan(span->start_ + span->npages_ - 1) == span);
  if (prefault_) {
    internal::SystemPrefault(reinterpret_cast<void*>(span->StartAddress()), span->Bytes());
  }
  span->carved_ = 0;
  span->allocated_ = 0;
  span->freelist_ = nullptr;
  span->affinity_ = who;
  nonempty_.Push(span);
  ++num_spans_;
  free_in_spans_ += objects_per_span_;
  return true;
}

Span* CentralFreeList::FindSpan(const SpanAffinity& who) {
  Span* s = nonempty_.first();
  for (int looked = 0; s != nullptr && looked < kAffinityScan; ++looked) {
    if (who.MayTake(s->affinity_)) return s;
    // Another thread's span, busy: to the back, so that the next scans reach the spans behind
    // it (orphaned spans would otherwise stay out of reach, and out of use).
    Span* next = nonempty_.next(s);
    SpanList::Remove(s);
    nonempty_.PushBack(s);
    s = next;
  }
  return nullptr;
}

int CentralFreeList::FetchFromSpans(void** head, void** tail, int n, const SpanAffinity& who) {
  void* first = nullptr;
  void* last = nullptr;
  int got = 0;
  SpanAffinity taker = who;
  while (got < n) {
    Span* span = FindSpan(taker);
    if (span == nullptr) {
      if (Populate(who)) continue;
      // Out of memory: other threads' batches, then their spans, rather than failing.
      if (got == 0 && used_slots_ > 0) return TakeFromBatch(used_slots_ - 1, head, tail, n);
      if (taker.none() || nonempty_.empty()) break;
      taker = SpanAffinity{};
      continue;
    }
    HEAPKIT_DCHECK(span->location_ == Span::kInUse && span->sizeclass_ == cls_);
    if (!who.none()) span->affinity_ = who;
    while (got < n) {
      void* object;
      if (span->freelist_ != nullptr) {
        object = span->freelist_;
        // A span's free list holds only its own carved objects.
        HEAPKIT_DCHECK(reinterpret_cast<uintptr_t>(object) - span->StartAddress() <
                       span->carved_ * object_size_);
        span->freelist_ = *static_cast<void**>(object);
      } else if (span->carved_ < objects_per_span_) {
        object = reinterpret_cast<void*>(span->StartAddress() + span->carved_ * object_size_);
        ++span->carved_;
      } else {
        break;
      }
      ++span->allocated_;
      --free_in_spans_;
      if (first == nullptr) {
        first = object;
      } else {
        *static_cast<void**>(last) = object;
      }
      last = object;
      ++got;
    }
    if (span->freelist_ == nullptr && span->carved_ == objects_per_span_) {
      SpanList::Remove(span);
      empty_.Push(span);
    }
  }
  if (last != nullptr) *static_cast<void**>(last) = nullptr;
  *head = first;
  *tail = last;
  return got;
}

void CentralFreeList::ReleaseToSpans(void* object, const SpanAffinity& who) {
  HEAPKIT_DCHECK(lock_.IsHeld());
  uintptr_t a = reinterpret_cast<uintptr_t>(object);
  Span* span = heap_->pagemap()->GetSpan(a >> kPageShift);
  // Cheap consistency checks that catch double frees which reached the central tier: a span
  // with no object out, or an object that was never carved.
  if (span == nullptr || span->location_ != Span::kInUse || span->sizeclass_ != cls_ ||
      span->allocated_ == 0 || (a - span->StartAddress()) / object_size_ >= span->carved_) {
    internal::Fatal("attempt to free invalid pointer %p", object);
  }
  if (span->freelist_ == nullptr && span->carved_ == objects_per_span_) {
    SpanList::Remove(span);
    nonempty_.Push(span);
  }
  // A remote free: the span's objects are already live in two threads, so it stops being its
  // owner's (the next thread that takes from it becomes the owner).
  if (!who.none() && !(span->affinity_ == who)) span->affinity_ = SpanAffinity{};
  *static_cast<void**>(object) = span->freelist_;
  span->freelist_ = object;
  --span->allocated_;
  ++free_in_spans_;
  if (span->allocated_ == 0) {
    SpanList::Remove(span);
    --num_spans_;
    free_in_spans_ -= objects_per_span_;
    heap_->Delete(span);
  }
}

namespace {
[[noreturn]] __attribute__((noinline, cold)) void DuplicateInBatch(void* head, int released) {
  // The released objects' links were rewritten by their spans, so the duplicate itself can no
  // longer be identified: name the batch head.
  internal::Fatal(
      "attempt to free invalid pointer %p (double free: a batch of %d freed objects "
      "holds one object twice)",
      head, released);
}
}  // namespace

int CentralFreeList::FindBatch(const SpanAffinity& who) const {
  for (int i = used_slots_ - 1; i >= 0; --i) {
    if (who.MayTake(slots_[i].owner)) return i;
  }
  return -1;
}

int CentralFreeList::TakeFromBatch(int i, void** head, void** tail, int n) {
  Batch& b = slots_[i];
  if (n >= b.count) {  // the whole parked chain (a full batch, or what a split left)
    *head = b.head;
    *tail = b.tail;
    const int count = b.count;
    for (int k = i + 1; k < used_slots_; ++k) slots_[k - 1] = slots_[k];  // keep the age order
    --used_slots_;
    return count;
  }
  // A smaller request (a thread cache in slow start) takes the front of the chain, so that
  // parked memory is reused rather than left behind while spans are carved.
  void* last = b.head;
  for (int k = 1; k < n; ++k) {
    last = *static_cast<void**>(last);
    if (HEAPKIT_UNLIKELY(last == nullptr)) DuplicateInBatch(b.head, k);
  }
  *head = b.head;
  *tail = last;
  b.head = *static_cast<void**>(last);
  if (HEAPKIT_UNLIKELY(b.head == nullptr)) DuplicateInBatch(*head, n);
  *static_cast<void**>(last) = nullptr;
  b.count -= n;
  return n;
}

int CentralFreeList::RemoveRange(void** head, void** tail, int n, const SpanAffinity& requester) {
  const SpanAffinity who = affine_ ? requester : SpanAffinity{};
  heap_->ReleaseTick();  // time-driven release (page_heap.h) from a slow path
  CountedLockHolder h(&lock_, &counters_);
  if (used_slots_ > 0) {
    const int i = FindBatch(who);
    if (i >= 0) return TakeFromBatch(i, head, tail, n);
    // Crowded with other threads' batches: take the newest rather than carve.
    if (used_slots_ * 4 >= max_slots_ * 3) {
      ++counters_.foreign_batches;
      return TakeFromBatch(used_slots_ - 1, head, tail, n);
    }
  }
  return FetchFromSpans(head, tail, n, who);
}

void CentralFreeList::InsertRange(void* head, void* tail, int n, const SpanAffinity& requester) {
  const SpanAffinity who = affine_ ? requester : SpanAffinity{};
  HEAPKIT_DCHECK(ready_.load(std::memory_order_relaxed));
  heap_->ReleaseTick();
  // A parked chain must end with a null link; write it before taking the lock (the object may
  // not be in this CPU's cache). Harmless when the batch goes to the spans instead.
  if (n == num_to_move_ && tail != nullptr) *static_cast<void**>(tail) = nullptr;
  CountedLockHolder h(&lock_, &counters_);
  if (n == num_to_move_ && used_slots_ < max_slots_ && HaveSlots()) {
    const Span* span = heap_->pagemap()->GetSpan(reinterpret_cast<uintptr_t>(head) >> kPageShift);
    SpanAffinity owner = span != nullptr ? span->affinity_ : SpanAffinity{};
    // Freed by a thread other than the owner of its first object's span: anybody's batch (the
    // owner did not free these objects and may not want them back soon).
    if (!who.none() && !(owner == who)) owner = SpanAffinity{};
    slots_[used_slots_++] = Batch{head, tail, n, owner};
    return;
  }
  void* p = head;
  for (int i = 0; i < n; ++i) {
    // A batch that ends early holds some object twice (a double free made the thread-cache
    // list a cycle; releasing the duplicate rewrote its link): name the duplicate and stop.
    if (HEAPKIT_UNLIKELY(p == nullptr)) DuplicateInBatch(head, i);
    void* next = *static_cast<void**>(p);
    ReleaseToSpans(p, who);
    p = next;
  }
}

void CentralFreeList::ReleaseTransferCache() {
  if (!ready_.load(std::memory_order_acquire)) return;
  SpinLockHolder h(&lock_);
  for (int i = 0; i < used_slots_; ++i) {
    void* p = slots_[i].head;
    for (int k = 0; k < slots_[i].count && p != nullptr; ++k) {
      void* next = *static_cast<void**>(p);
      ReleaseToSpans(p, SpanAffinity{});
      p = next;
    }
  }
  used_slots_ = 0;
}

size_t CentralFreeList::FreeObjectsInSpans() {
  SpinLockHolder h(&lock_);
  return free_in_spans_;
}

size_t CentralFreeList::TransferObjects() {
  SpinLockHolder h(&lock_);
  size_t n = 0;
  for (int i = 0; i < used_slots_; ++i) n += static_cast<size_t>(slots_[i].count);
  return n;
}

size_t CentralFreeList::SpanTailBytes() {
  SpinLockHolder h(&lock_);
  if (num_spans_ == 0) return 0;  // also a list never used (sizemap_ not set)
  size_t span_bytes = sizemap_->ClassPages(cls_) << kPageShift;
  return num_spans_ * (span_bytes - objects_per_span_ * object_size_);
}

CentralFreeList::Counters CentralFreeList::GetCounters() {
  SpinLockHolder h(&lock_);
  return counters_;
}

size_t CentralFreeList::NumSpans() {
  SpinLockHolder h(&lock_);
  return num_spans_;
}

}  // namespace heapkit::alloc
