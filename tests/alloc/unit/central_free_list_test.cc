#include "alloc/central_free_list.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "alloc/allocator.h"
#include "alloc/internal/system_memory.h"
#include "tier_fixture.h"

namespace heapkit::alloc {
namespace {

std::vector<void*> Collect(void* head, int n) {
  std::vector<void*> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(head);
    head = *static_cast<void**>(head);
  }
  return out;
}

void Link(const std::vector<void*>& v) {
  for (size_t i = 0; i + 1 < v.size(); ++i) *static_cast<void**>(v[i]) = v[i + 1];
}

TEST(CentralFreeListTest, RemoveInsertAndSpanReturn) {
  auto t = std::make_unique<testing::Tiers>();
  const uint32_t cls = t->sizemap.SizeClass(48);
  const size_t size = t->sizemap.ClassSize(cls);
  CentralFreeList& cl = t->central[cls];
  const int batch = t->sizemap.NumToMove(cls);
  const uint32_t per_span = t->sizemap.ObjectsPerSpan(cls);
  std::set<void*> seen;
  std::vector<void*> all;
  // Take more than one span's worth, in partial batches (not through the transfer cache).
  while (all.size() < per_span * 2 + 5) {
    void* head;
    void* tail;
    int got = cl.RemoveRange(&head, &tail, 7);
    ASSERT_EQ(got, 7);
    std::vector<void*> v = Collect(head, got);
    EXPECT_EQ(v.back(), tail);
    for (void* p : v) {
      EXPECT_TRUE(seen.insert(p).second) << "object handed out twice";
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
      Span* s = t->map->GetSpan(reinterpret_cast<uintptr_t>(p) >> kPageShift);
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(s->sizeclass_, cls);
      EXPECT_EQ((reinterpret_cast<uintptr_t>(p) - s->StartAddress()) % size, 0u);
      all.push_back(p);
    }
  }
  EXPECT_EQ(cl.NumSpans(), 3u);
  EXPECT_EQ(t->heap.Stats().in_use_spans, 3u);
  // Return them in odd-sized groups: the spans go back to the page heap.
  for (size_t i = 0; i < all.size(); i += 5) {
    std::vector<void*> group(all.begin() + i, all.begin() + std::min(all.size(), i + 5));
    Link(group);
    cl.InsertRange(group.front(), group.back(), static_cast<int>(group.size()));
  }
  EXPECT_EQ(cl.NumSpans(), 0u);
  EXPECT_EQ(cl.FreeObjectsInSpans(), 0u);
  EXPECT_EQ(t->heap.Stats().in_use_spans, 0u);
  (void)batch;
}

TEST(CentralFreeListTest, TransferCacheParksFullBatches) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(1000);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch), batch);
  std::vector<void*> v = Collect(head, batch);
  const size_t in_spans = cl.FreeObjectsInSpans();
  cl.InsertRange(head, tail, batch);
  EXPECT_EQ(cl.TransferObjects(), static_cast<size_t>(batch));
  EXPECT_EQ(cl.FreeObjectsInSpans(), in_spans) << "a full batch must not touch the spans";
  void* head2;
  void* tail2;
  ASSERT_EQ(cl.RemoveRange(&head2, &tail2, batch), batch);
  EXPECT_EQ(Collect(head2, batch), v);
  EXPECT_EQ(cl.TransferObjects(), 0u);
}

// ReleaseTransferCache (the HTTP endpoint after it freed its symbolizer): every parked batch
// goes back to its spans, and spans whose objects all came back go to the page heap.
TEST(CentralFreeListTest, ReleaseTransferCacheReturnsParkedBatchesToThePageHeap) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(1000);
  void* heads[2];
  void* tails[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(cl.RemoveRange(&heads[i], &tails[i], batch), batch);
  for (int i = 0; i < 2; ++i) cl.InsertRange(heads[i], tails[i], batch);
  ASSERT_EQ(cl.TransferObjects(), static_cast<size_t>(2 * batch));
  ASSERT_GT(t->heap.Stats().in_use_spans, 0u) << "parked objects keep their spans";
  cl.ReleaseTransferCache();
  EXPECT_EQ(cl.TransferObjects(), 0u);
  EXPECT_EQ(cl.NumSpans(), 0u);
  EXPECT_EQ(t->heap.Stats().in_use_spans, 0u);
  // The list works on: a refill carves a fresh span.
  ASSERT_EQ(cl.RemoveRange(&heads[0], &tails[0], batch), batch);
  cl.InsertRange(heads[0], tails[0], batch);
  cl.ReleaseTransferCache();
  EXPECT_EQ(t->heap.Stats().in_use_spans, 0u);
}

// A thread cache giving back the far end of its list passes no tail: the chain already ends
// with a null link. It is parked as is and handed out null-terminated.
TEST(CentralFreeListTest, ParksNullTerminatedBatchWithoutTail) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(2048);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch), batch);
  EXPECT_EQ(*static_cast<void**>(tail), nullptr);
  std::vector<void*> v = Collect(head, batch);
  cl.InsertRange(head, nullptr, batch);
  EXPECT_EQ(cl.TransferObjects(), static_cast<size_t>(batch));
  void* head2;
  void* tail2;
  ASSERT_EQ(cl.RemoveRange(&head2, &tail2, batch), batch);
  EXPECT_EQ(tail2, nullptr) << "not known";
  std::vector<void*> got;
  for (void* p = head2; p != nullptr; p = *static_cast<void**>(p)) got.push_back(p);
  EXPECT_EQ(got, v);
  // A batch with a tail gets its null link when parked (garbage link before).
  *static_cast<void**>(v.back()) = &got;
  cl.InsertRange(v.front(), v.back(), batch);
  ASSERT_EQ(cl.RemoveRange(&head2, &tail2, batch), batch);
  EXPECT_EQ(tail2, v.back());
  EXPECT_EQ(*static_cast<void**>(tail2), nullptr);
  cl.InsertRange(head2, tail2, batch);
}

// A request smaller than a batch (a thread cache in slow start) takes the front of the newest
// parked chain rather than carving spans; the rest stays parked and a later full request gets
// what is left.
TEST(CentralFreeListTest, SmallRequestTakesFrontOfParkedChain) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(512);
  ASSERT_GT(batch, 8);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch), batch);
  std::vector<void*> v = Collect(head, batch);
  cl.InsertRange(head, tail, batch);
  const size_t in_spans = cl.FreeObjectsInSpans();
  ASSERT_EQ(cl.RemoveRange(&head, &tail, 5), 5);
  std::vector<void*> front;
  for (void* p = head; p != nullptr; p = *static_cast<void**>(p)) front.push_back(p);
  EXPECT_EQ(front, std::vector<void*>(v.begin(), v.begin() + 5));
  EXPECT_EQ(tail, v[4]);
  EXPECT_EQ(cl.TransferObjects(), static_cast<size_t>(batch - 5));
  EXPECT_EQ(cl.FreeObjectsInSpans(), in_spans) << "nothing carved";
  void* head2;
  void* tail2;
  ASSERT_EQ(cl.RemoveRange(&head2, &tail2, batch), batch - 5) << "what the split left";
  std::vector<void*> rest;
  for (void* p = head2; p != nullptr; p = *static_cast<void**>(p)) rest.push_back(p);
  EXPECT_EQ(rest, std::vector<void*>(v.begin() + 5, v.end()));
  EXPECT_EQ(cl.TransferObjects(), 0u);
  cl.InsertRange(head, tail, 5);
  cl.InsertRange(head2, tail2, batch - 5);
  EXPECT_EQ(cl.NumSpans(), 0u);
}

// Thread affinity (span_affinity.h): two owners, each a tag word as a thread cache holds it.
struct Owner {
  uint64_t word;
  explicit Owner(uint64_t tag) : word(tag) {}
  SpanAffinity affinity() const { return SpanAffinity{&word, word}; }
  void Exit() { word = 0; }
};

std::set<Span*> SpansOf(testing::Tiers& t, void* head, int n) {
  std::set<Span*> spans;
  for (void* p : Collect(head, n)) {
    spans.insert(t.map->GetSpan(reinterpret_cast<uintptr_t>(p) >> kPageShift));
  }
  return spans;
}

// A batch one owner parked goes back to that owner; another live owner gets a span of its own
// instead (so the two never hold objects of one span, or of one cache line).
TEST(CentralFreeListTest, ParkedBatchGoesBackToItsOwner) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(16);
  Owner a(1), b(2);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, a.affinity()), batch);
  const std::set<Span*> a_spans = SpansOf(*t, head, batch);
  std::vector<void*> parked = Collect(head, batch);
  cl.InsertRange(head, tail, batch);
  ASSERT_EQ(cl.TransferObjects(), static_cast<size_t>(batch));
  void* bh;
  void* bt;
  ASSERT_EQ(cl.RemoveRange(&bh, &bt, batch, b.affinity()), batch);
  for (Span* s : SpansOf(*t, bh, batch)) {
    EXPECT_EQ(a_spans.count(s), 0u) << "b got objects of a's span";
    EXPECT_EQ(s->affinity_, b.affinity());
  }
  EXPECT_EQ(cl.TransferObjects(), static_cast<size_t>(batch)) << "a's batch stays parked";
  ASSERT_EQ(cl.RemoveRange(&head, &tail, 7, a.affinity()), 7);
  EXPECT_EQ(Collect(head, 7), std::vector<void*>(parked.begin(), parked.begin() + 7));
  cl.InsertRange(head, tail, 7);
  cl.InsertRange(bh, bt, batch);
  EXPECT_EQ(cl.GetCounters().foreign_batches, 0u);
}

// Batches and spans of an owner that exited belong to nobody: the next taker reuses them.
TEST(CentralFreeListTest, OrphanedBatchesAndSpansAreReused) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(64);
  Owner a(1), b(2);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, a.affinity()), batch);
  std::vector<void*> v = Collect(head, batch);
  void* h5;
  void* t5;
  ASSERT_EQ(cl.RemoveRange(&h5, &t5, 5, a.affinity()), 5);  // a span of a's with free objects
  cl.InsertRange(head, tail, batch);
  a.Exit();
  const size_t spans = cl.NumSpans();
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, b.affinity()), batch);
  EXPECT_EQ(Collect(head, batch), v) << "the orphaned batch";
  void* h3;
  void* t3;
  ASSERT_EQ(cl.RemoveRange(&h3, &t3, 3, b.affinity()), 3);
  EXPECT_EQ(cl.NumSpans(), spans) << "the orphaned span's free objects, no new span";
  cl.InsertRange(head, tail, batch);
  cl.InsertRange(h5, t5, 5);
  cl.InsertRange(h3, t3, 3);
}

// A transfer cache at least 3/4 full of another live owner's batches hands them out (a thread
// that frees what another allocated must not fill it for good); counted as foreign batches.
TEST(CentralFreeListTest, CrowdedTransferCacheHandsOutForeignBatches) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(1024);
  const int slots = static_cast<int>(CentralFreeList::kTransferBytesPerClass /
                                     (t->sizemap.ClassSize(cls) * static_cast<size_t>(batch)));
  ASSERT_GE(slots, 4);
  Owner a(1), b(2);
  std::vector<std::pair<void*, void*>> taken;
  const int crowded = (slots * 3 + 3) / 4;
  for (int i = 0; i < crowded; ++i) {
    void* head;
    void* tail;
    ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, a.affinity()), batch);
    taken.push_back({head, tail});
  }
  for (int i = 0; i < crowded - 1; ++i) cl.InsertRange(taken[i].first, taken[i].second, batch);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, b.affinity()), batch);
  EXPECT_NE(head, taken[crowded - 2].first) << "below 3/4: b carves its own";
  cl.InsertRange(taken[crowded - 1].first, taken[crowded - 1].second, batch);  // now 3/4 of a's
  void* head2;
  void* tail2;
  ASSERT_EQ(cl.RemoveRange(&head2, &tail2, batch, b.affinity()), batch);
  EXPECT_EQ(head2, taken[crowded - 1].first) << "crowded: the newest batch, a's";
  EXPECT_EQ(cl.GetCounters().foreign_batches, 1u);
  cl.InsertRange(head, tail, batch);
  cl.InsertRange(head2, tail2, batch);
}

// Partial requests of two owners, interleaved, some given back: at every step no span holds
// objects of both owners.
TEST(CentralFreeListTest, SpansServeOneOwnerAtATime) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(32);
  Owner a(1), b(2);
  struct Chain {
    void* head;
    void* tail;
    int owner;
  };
  std::vector<Chain> chains;
  for (int i = 0; i < 400; ++i) {
    Owner& o = i % 2 ? b : a;
    void* head;
    void* tail;
    ASSERT_EQ(cl.RemoveRange(&head, &tail, 7, o.affinity()), 7);
    chains.push_back({head, tail, i % 2});
    if (i % 5 == 4) {  // give some back: they return to their spans
      cl.InsertRange(chains[i / 3].head, chains[i / 3].tail, 7);
      chains.erase(chains.begin() + i / 3);
    }
    std::set<Span*> spans[2];
    for (const Chain& c : chains) {
      for (Span* s : SpansOf(*t, c.head, 7)) spans[c.owner].insert(s);
    }
    for (Span* s : spans[0]) {
      ASSERT_EQ(spans[1].count(s), 0u) << "a span serves both owners, step " << i;
    }
  }
  for (const Chain& c : chains) cl.InsertRange(c.head, c.tail, 7);
  EXPECT_EQ(cl.NumSpans(), 0u);
}

// Remote frees (central_free_list.h): a batch another thread freed is parked as nobody's, so
// any thread reuses it at once instead of it waiting for its span's owner.
TEST(CentralFreeListTest, BatchFreedByAnotherThreadIsAnybodys) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(48);
  Owner a(1), b(2), c(3);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, a.affinity()), batch);
  const std::vector<void*> objects = Collect(head, batch);
  cl.InsertRange(head, tail, batch, b.affinity());  // b frees what a allocated
  const size_t spans = cl.NumSpans();
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, c.affinity()), batch);
  EXPECT_EQ(Collect(head, batch), objects) << "c reuses the remote-freed batch";
  EXPECT_EQ(cl.NumSpans(), spans) << "no span carved for c";
  EXPECT_EQ(cl.GetCounters().foreign_batches, 0u) << "not the crowded rule";
  cl.InsertRange(head, tail, batch, c.affinity());
}

// The owner's own batch stays its own (the other half of the rule above).
TEST(CentralFreeListTest, BatchFreedByItsOwnerStaysItsOwn) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(48);
  Owner a(1), c(3);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, a.affinity()), batch);
  void* parked = head;
  cl.InsertRange(head, tail, batch, a.affinity());
  ASSERT_EQ(cl.RemoveRange(&head, &tail, batch, c.affinity()), batch);
  EXPECT_NE(head, parked) << "c must not get a's own batch while a lives";
  EXPECT_EQ(cl.TransferObjects(), static_cast<size_t>(batch));
  cl.InsertRange(head, tail, batch, c.affinity());
}

// Objects another thread returns to a span (a partial batch) make the span nobody's: its free
// objects go to the next taker rather than staying out of use while the owner does not need
// them; objects the owner returns keep the span its own.
TEST(CentralFreeListTest, RemoteFreeToASpanDropsItsOwner) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(96);
  Owner a(1), b(2);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, 6, a.affinity()), 6);
  std::vector<void*> v = Collect(head, 6);
  Span* span = t->map->GetSpan(reinterpret_cast<uintptr_t>(v[0]) >> kPageShift);
  cl.InsertRange(v[0], v[0], 1, a.affinity());  // the owner's free
  EXPECT_EQ(span->affinity_, a.affinity());
  void* h;
  void* tl;
  ASSERT_EQ(cl.RemoveRange(&h, &tl, 1, b.affinity()), 1);
  EXPECT_NE(t->map->GetSpan(reinterpret_cast<uintptr_t>(h) >> kPageShift), span)
      << "a live owner's span is not b's";
  cl.InsertRange(h, h, 1, b.affinity());
  const size_t spans = cl.NumSpans();
  cl.InsertRange(v[1], v[1], 1, b.affinity());  // b frees an object of a's span
  EXPECT_TRUE(span->affinity_.none());
  ASSERT_EQ(cl.RemoveRange(&h, &tl, 1, b.affinity()), 1);
  EXPECT_EQ(t->map->GetSpan(reinterpret_cast<uintptr_t>(h) >> kPageShift), span);
  EXPECT_EQ(span->affinity_, b.affinity()) << "the taker owns it now";
  EXPECT_EQ(cl.NumSpans(), spans);
  cl.InsertRange(h, h, 1, b.affinity());
  for (int i = 2; i < 6; ++i) cl.InsertRange(v[i], v[i], 1, a.affinity());
  EXPECT_EQ(cl.NumSpans(), 0u);
}

// A refill that looks past spans of live owners moves them to the back of the list, so that an
// orphaned span behind more than kAffinityScan of them is reached by a later refill instead of
// staying out of use while fresh spans are carved.
TEST(CentralFreeListTest, ScanReachesOrphanedSpansBehindBusyOnes) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(1024);
  const int per_span = static_cast<int>(t->sizemap.ObjectsPerSpan(cls));
  ASSERT_LE(per_span, batch);
  Owner x(1), a(2), b(3), c(4);
  void* xh;
  void* xt;
  ASSERT_EQ(cl.RemoveRange(&xh, &xt, 1, x.affinity()), 1);
  Span* orphan = t->map->GetSpan(reinterpret_cast<uintptr_t>(xh) >> kPageShift);
  const int busy = CentralFreeList::kAffinityScan + 4;
  std::vector<std::vector<void*>> full;
  for (int i = 0; i < busy; ++i) {  // a's whole spans, then one object back to each
    void* h;
    void* tl;
    ASSERT_EQ(cl.RemoveRange(&h, &tl, per_span, a.affinity()), per_span);
    full.push_back(Collect(h, per_span));
  }
  for (auto& f : full) cl.InsertRange(f[0], f[0], 1, a.affinity());
  x.Exit();
  const size_t spans = cl.NumSpans();
  void* bh;
  void* bt;
  ASSERT_EQ(cl.RemoveRange(&bh, &bt, 1, b.affinity()), 1);  // looks at 16 of a's, carves
  EXPECT_EQ(cl.NumSpans(), spans + 1);
  void* ch;
  void* ct;
  ASSERT_EQ(cl.RemoveRange(&ch, &ct, 1, c.affinity()), 1);
  EXPECT_EQ(t->map->GetSpan(reinterpret_cast<uintptr_t>(ch) >> kPageShift), orphan);
  EXPECT_EQ(cl.NumSpans(), spans + 1) << "no span carved for c";
  cl.InsertRange(xh, xh, 1);
  cl.InsertRange(bh, bh, 1);
  cl.InsertRange(ch, ch, 1);
  for (auto& f : full) {
    for (int k = 1; k < per_span; ++k) cl.InsertRange(f[size_t(k)], f[size_t(k)], 1);
  }
  EXPECT_EQ(cl.NumSpans(), 0u);
}

// Two threads, each freeing only what the other allocated (every free remote), at once: the
// remote-freed objects circulate (batches parked as nobody's, spans losing their owner), the
// spans stay few, and everything goes back at the end. Run under TSan too (label tsan): the
// owner words are read by the other thread while their owner writes its own spans' owners.
TEST(CentralFreeListTest, ConcurrentRemoteFreesCirculate) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(64);
  constexpr int kRounds = 3000;
  struct Exchange {
    std::mutex mu;
    std::vector<std::pair<void*, int>> chains;  // head, count (null-terminated chains)
  } to[2];
  std::atomic<size_t> max_spans{0};
  std::atomic<int> done{0};
  auto body = [&](int me) {
    Owner self(static_cast<uint64_t>(me) + 1);
    for (int r = 0; r < kRounds; ++r) {
      const int n = r % 3 == 0 ? batch : 1 + r % 7;
      void* head;
      void* tail;
      const int got = cl.RemoveRange(&head, &tail, n, self.affinity());
      ASSERT_GT(got, 0);
      for (;;) {  // at most 4 chains in flight to the other thread (it may be descheduled)
        {
          std::lock_guard<std::mutex> g(to[1 - me].mu);
          if (to[1 - me].chains.size() < 4 || done.load() > 0) {  // the other one stopped
            to[1 - me].chains.push_back({head, got});
            break;
          }
        }
        std::vector<std::pair<void*, int>> mine;
        {
          std::lock_guard<std::mutex> g(to[me].mu);
          mine.swap(to[me].chains);
        }
        for (auto& [h, k] : mine) cl.InsertRange(h, nullptr, k, self.affinity());
        std::this_thread::yield();
      }
      std::vector<std::pair<void*, int>> mine;
      {
        std::lock_guard<std::mutex> g(to[me].mu);
        mine.swap(to[me].chains);
      }
      for (auto& [h, k] : mine) cl.InsertRange(h, nullptr, k, self.affinity());
      if (done.load() > 0) continue;  // the other one stopped: nothing bounds the flow now
      size_t spans = cl.NumSpans();
      size_t seen = max_spans.load();
      while (spans > seen && !max_spans.compare_exchange_weak(seen, spans)) {
      }
    }
    done.fetch_add(1);
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
  for (auto& x : to) {
    for (auto& [h, k] : x.chains) cl.InsertRange(h, nullptr, k);
  }
  // In flight: at most 4 chains each way plus the transfer cache's 16 parked batches (a batch
  // is one span of this class); without reuse the run would carve ~340 spans.
  EXPECT_LE(max_spans.load(), 48u);
  // Every object is back: free in its span or parked.
  EXPECT_EQ(cl.FreeObjectsInSpans() + cl.TransferObjects(),
            cl.NumSpans() * t->sizemap.ObjectsPerSpan(cls));
}

// Refills and releases count their lock acquisitions, and those that found the lock held.
TEST(CentralFreeListTest, CountsContendedLockAcquisitions) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(128);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, 4), 4);
  cl.InsertRange(head, tail, 4);
  EXPECT_EQ(cl.GetCounters().lock_acquisitions, 2u);
  EXPECT_EQ(cl.GetCounters().lock_contended, 0u);
  std::atomic<bool> started{false};
  cl.lock_.Lock();
  std::thread other([&] {
    started.store(true);
    void* h;
    void* tl;
    ASSERT_EQ(cl.RemoveRange(&h, &tl, 4), 4);
    cl.InsertRange(h, tl, 4);
  });
  while (!started.load()) std::this_thread::yield();
  // The other thread cannot get past the lock while it is held here; give it time to try.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  cl.lock_.Unlock();
  other.join();
  const CentralFreeList::Counters k = cl.GetCounters();
  EXPECT_EQ(k.lock_acquisitions, 4u);
  EXPECT_GE(k.lock_contended, 1u);
}

TEST(CentralFreeListTest, StatsCountUncarvedObjectsAsFree) {
  auto t = std::make_unique<testing::Tiers>();
  auto [cls, cl, batch] = t->ClassFor(4096);
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, 1), 1);
  EXPECT_EQ(cl.FreeObjectsInSpans(), t->sizemap.ObjectsPerSpan(cls) - 1);
  EXPECT_EQ(cl.SpanTailBytes(),
            t->sizemap.ClassPages(cls) * kPageSize - t->sizemap.ObjectsPerSpan(cls) * 4096);
  cl.InsertRange(head, head, 1);
  EXPECT_EQ(cl.NumSpans(), 0u);
}

// Resident OS pages of [start, start + bytes) (mincore).
size_t ResidentPages(uintptr_t start, size_t bytes) {
  const size_t page = 4096;
  std::vector<unsigned char> vec((bytes + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(start), bytes, vec.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

// A span of objects of 4 KiB or more (span up to 128 KiB) is backed when the list takes it
// from the page heap (see "Prefault" in central_free_list.h); smaller objects and larger spans
// stay lazily faulted.
TEST(CentralFreeListTest, SpansOfMultiPageObjectsArePrefaulted) {
  auto t = std::make_unique<testing::Tiers>();
  struct Case {
    size_t size;
    bool prefaulted;
  };
  for (Case c : {Case{48, false}, Case{16384, true}, Case{4096, true}, Case{200 << 10, false}}) {
    const uint32_t cls = t->sizemap.SizeClass(c.size);
    void* head;
    void* tail;
    ASSERT_EQ(t->central[cls].RemoveRange(&head, &tail, 1), 1);
    const Span* span = t->map->GetSpan(reinterpret_cast<uintptr_t>(head) >> kPageShift);
    ASSERT_NE(span, nullptr);
    const size_t pages = span->Bytes() / 4096;
    const size_t resident = ResidentPages(span->StartAddress(), span->Bytes());
    if (c.prefaulted) {
      EXPECT_EQ(resident, pages) << c.size << " B: span of " << pages << " OS pages";
    } else {
      EXPECT_LT(resident, pages) << c.size << " B: span of " << pages << " OS pages";
    }
    t->central[cls].InsertRange(head, tail, 1);
  }
}

// The allocator's lists start zero and initialise on their first refill (Ready), with the size
// map and page heap InitSlow gave SetLazyInit: here the global allocator's, on a private list.
TEST(CentralFreeListTest, ReadyInitialisesAZeroListOnFirstUse) {
  EnsureInit();
  auto cl = std::make_unique<CentralFreeList>();
  const uint32_t cls = g_state.sizemap.SizeClass(96);
  EXPECT_EQ(cl->size_class(), 0u);  // untouched: Init has not run
  EXPECT_EQ(&cl->Ready(cls), cl.get());
  EXPECT_EQ(cl->size_class(), cls);
  void* head;
  void* tail;
  ASSERT_EQ(cl->Ready(cls).RemoveRange(&head, &tail, 3), 3);
  for (void* p : Collect(head, 3)) {
    const Span* s = g_state.pagemap.GetSpan(reinterpret_cast<uintptr_t>(p) >> kPageShift);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->sizeclass_, cls);
  }
  EXPECT_EQ(cl->NumSpans(), 1u);
  cl->InsertRange(head, tail, 3);
  EXPECT_EQ(cl->NumSpans(), 0u);  // the span went back to the global page heap
}

// Threads refilling from a list nobody used yet: one Init, every object handed out once.
TEST(CentralFreeListTest, ConcurrentFirstUseInitialisesOnce) {
  EnsureInit();
  auto cl = std::make_unique<CentralFreeList>();
  const uint32_t cls = g_state.sizemap.SizeClass(200);
  constexpr int kThreads = 4;
  constexpr int kEach = 5;
  void* got[kThreads][kEach] = {};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
      }
      for (int i = 0; i < kEach; ++i) {
        void* head;
        void* tail;
        if (cl->Ready(cls).RemoveRange(&head, &tail, 1) == 1) got[t][i] = head;
      }
    });
  }
  go.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(cl->size_class(), cls);
  std::set<void*> seen;
  for (auto& row : got) {
    for (void* p : row) {
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(seen.insert(p).second) << "object handed out twice";
    }
  }
  for (void* p : seen) cl->InsertRange(p, p, 1);
  EXPECT_EQ(cl->NumSpans(), 0u);
}

// SystemPrefault backs every page and keeps what is there.
TEST(SystemMemoryTest, PrefaultBacksPagesAndKeepsContent) {
  const size_t bytes = 64 * 1024;
  auto* p = static_cast<unsigned char*>(internal::SystemAlloc(bytes, 4096));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(ResidentPages(reinterpret_cast<uintptr_t>(p), bytes), 0u);
  for (size_t i = 0; i < 4096; ++i) p[3 * 4096 + i] = static_cast<unsigned char>(i * 7 + 1);
  internal::SystemPrefault(p, bytes);
  EXPECT_EQ(ResidentPages(reinterpret_cast<uintptr_t>(p), bytes), bytes / 4096);
  for (size_t i = 0; i < bytes; ++i) {
    const unsigned char want = i / 4096 == 3 ? static_cast<unsigned char>(i * 7 + 1) : 0;
    ASSERT_EQ(p[i], want) << i;
  }
  internal::SystemFree(p, bytes);
}

}  // namespace
}  // namespace heapkit::alloc
