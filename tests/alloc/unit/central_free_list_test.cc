#include "alloc/central_free_list.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

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
  const uint32_t cls = t->sizemap.SizeClass(1000);
  CentralFreeList& cl = t->central[cls];
  const int batch = t->sizemap.NumToMove(cls);
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

// A thread cache giving back the far end of its list passes no tail: the chain already ends
// with a null link. It is parked as is and handed out null-terminated.
TEST(CentralFreeListTest, ParksNullTerminatedBatchWithoutTail) {
  auto t = std::make_unique<testing::Tiers>();
  const uint32_t cls = t->sizemap.SizeClass(2048);
  CentralFreeList& cl = t->central[cls];
  const int batch = t->sizemap.NumToMove(cls);
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
  const uint32_t cls = t->sizemap.SizeClass(512);
  CentralFreeList& cl = t->central[cls];
  const int batch = t->sizemap.NumToMove(cls);
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

TEST(CentralFreeListTest, StatsCountUncarvedObjectsAsFree) {
  auto t = std::make_unique<testing::Tiers>();
  const uint32_t cls = t->sizemap.SizeClass(4096);
  CentralFreeList& cl = t->central[cls];
  void* head;
  void* tail;
  ASSERT_EQ(cl.RemoveRange(&head, &tail, 1), 1);
  EXPECT_EQ(cl.FreeObjectsInSpans(), t->sizemap.ObjectsPerSpan(cls) - 1);
  EXPECT_EQ(cl.SpanTailBytes(), t->sizemap.ClassPages(cls) * kPageSize -
                                    t->sizemap.ObjectsPerSpan(cls) * 4096);
  cl.InsertRange(head, head, 1);
  EXPECT_EQ(cl.NumSpans(), 0u);
}

}  // namespace
}  // namespace heapkit::alloc
