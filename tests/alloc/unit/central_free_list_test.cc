#include "alloc/central_free_list.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>

#include <memory>
#include <set>
#include <vector>

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
