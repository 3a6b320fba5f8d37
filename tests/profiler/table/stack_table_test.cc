// The sampled-allocation table: bucket identity, alloc/free accounting, unknown frees,
// stale entries, growth, and many threads sampling and freeing at once.
#include "profiler/table/stack_table.h"

#include "alloc/sample_weight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace heapkit::prof {
namespace {

StackTable& FreshTable() {
  // Each test gets its own table (the type is big but constant-initialisable).
  static StackTable tables[13];
  static int next = 0;
  StackTable& t = tables[next++];
  EXPECT_TRUE(t.Init());
  return t;
}

void* Pc(uintptr_t v) { return reinterpret_cast<void*>(v); }
const void* Obj(uintptr_t v) { return reinterpret_cast<const void*>(v); }

TEST(StackTable, BucketIdentity) {
  StackTable& t = FreshTable();
  void* a[] = {Pc(0x1000), Pc(0x2000), Pc(0x3000)};
  void* b[] = {Pc(0x1000), Pc(0x2000), Pc(0x3001)};
  Bucket* ba = t.FindOrCreateBucket(a, 3, 0);
  ASSERT_NE(ba, nullptr);
  EXPECT_EQ(t.FindOrCreateBucket(a, 3, 0), ba);
  EXPECT_NE(t.FindOrCreateBucket(b, 3, 0), ba);
  EXPECT_NE(t.FindOrCreateBucket(a, 2, 0), ba);  // prefix is a different stack
  EXPECT_NE(t.FindOrCreateBucket(a, 3, 5), ba);  // different size key
  EXPECT_EQ(t.num_buckets(), 4u);
  EXPECT_EQ(ba->depth, 3);
  void* read[4] = {};
  ASSERT_EQ(t.ReadStack(*ba, read, 4), 3);
  EXPECT_EQ(read[0], Pc(0x1000));
  EXPECT_EQ(read[2], Pc(0x3000));
  Bucket* empty = t.FindOrCreateBucket(nullptr, 0, 0);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->depth, 0);
  int seen = 0;
  t.ForEachBucket([&](const Bucket&) { ++seen; });
  EXPECT_EQ(seen, 5);
}

TEST(StackTable, FreeUpdatesBucketAndUnknownFreeIsIgnored) {
  StackTable& t = FreshTable();
  void* s[] = {Pc(0x42)};
  Bucket* b = t.FindOrCreateBucket(s, 1, 0);
  t.RecordAlloc(Obj(0x10000), b, 100);
  t.RecordAlloc(Obj(0x20000), b, 50);
  EXPECT_EQ(t.InUseCount(*b), 2);
  EXPECT_EQ(t.InUseBytes(*b), 150);
  size_t size = 0;
  EXPECT_TRUE(t.RecordFree(Obj(0x10000), &size));
  EXPECT_EQ(size, 100u);
  EXPECT_EQ(t.InUseCount(*b), 1);
  EXPECT_EQ(t.InUseBytes(*b), 50);
  EXPECT_EQ(b->alloc_count.load(), 2);
  EXPECT_EQ(b->alloc_bytes.load(), 150);
  // Unknown addresses and double frees change nothing.
  EXPECT_FALSE(t.RecordFree(Obj(0x10000), &size));
  EXPECT_FALSE(t.RecordFree(Obj(0x30000), &size));
  EXPECT_EQ(t.InUseCount(*b), 1);
  EXPECT_EQ(t.MapCountsOf(b->id.load())->free_count.load(), 1);
  StackRef found;
  EXPECT_TRUE(t.Lookup(Obj(0x20000), &found, &size));
  EXPECT_EQ(found, (StackRef{b->stack, 0}));
  EXPECT_EQ(size, 50u);
  EXPECT_FALSE(t.Lookup(Obj(0x10000), &found, &size));
}

// The sampling variance a bucket keeps ("Sampling variance", stack_table.h): the sum of every
// sampled record's alloc::SampleVarianceOf for the allocated estimates, of the live ones' for
// the in-use estimates; exact records (rate 1) add nothing.
TEST(StackTable, SampledRecordsKeepTheirVariancePerBucket) {
  StackTable& t = FreshTable();
  constexpr int64_t kRate = 524288;
  void* s[] = {Pc(0x43)};
  Bucket* b = t.FindOrCreateBucket(s, 1, 9);
  const size_t sizes[] = {24, 32, 4096, 1 << 20};
  for (size_t i = 0; i < 4; ++i) t.RecordAlloc(Obj(0x10000 * (i + 1)), b, sizes[i], false, kRate);
  alloc::SampleVariance all{0, 0};
  for (size_t size : sizes) {
    const alloc::SampleVariance one = alloc::SampleVarianceOf(double(size), kRate);
    all.objects += one.objects;
    all.bytes += one.bytes;
  }
  BucketVariance v = t.Variance(*b);
  EXPECT_DOUBLE_EQ(v.alloc_objects, all.objects);
  EXPECT_DOUBLE_EQ(v.alloc_bytes, all.bytes);
  EXPECT_DOUBLE_EQ(v.inuse_objects, all.objects);
  EXPECT_DOUBLE_EQ(v.inuse_bytes, all.bytes);
  // 24 bytes at 512 KiB: p ~ 24/R, so one sample's count variance is about (R/24)^2.
  EXPECT_NEAR(alloc::SampleVarianceOf(24, kRate).objects, (kRate / 24.0) * (kRate / 24.0),
              0.01 * (kRate / 24.0) * (kRate / 24.0));
  // Freeing the 4 KiB object takes its share out of the in-use variance only.
  ASSERT_TRUE(t.RecordFree(Obj(0x30000), nullptr, nullptr, nullptr, kRate));
  const alloc::SampleVariance freed = alloc::SampleVarianceOf(4096, kRate);
  v = t.Variance(*b);
  EXPECT_DOUBLE_EQ(v.alloc_bytes, all.bytes);
  EXPECT_NEAR(v.inuse_bytes, all.bytes - freed.bytes, 1e-9 * all.bytes);
  EXPECT_NEAR(v.inuse_objects, all.objects - freed.objects, 1e-9 * all.objects);
  // Everything freed: nothing in use, not even rounding below 0.
  for (uintptr_t a : {0x10000, 0x20000, 0x40000})
    ASSERT_TRUE(t.RecordFree(Obj(a), nullptr, nullptr, nullptr, kRate));
  v = t.Variance(*b);
  EXPECT_GE(v.inuse_bytes, 0);
  EXPECT_LT(v.inuse_bytes, 1e-6 * all.bytes);
  EXPECT_DOUBLE_EQ(v.alloc_bytes, all.bytes);
  // Exact records: sigma 0.
  void* e[] = {Pc(0x44)};
  Bucket* exact = t.FindOrCreateBucket(e, 1, 0);
  t.RecordAlloc(Obj(0x90000), exact, 64, false, 1);
  v = t.Variance(*exact);
  EXPECT_EQ(v.alloc_bytes, 0);
  EXPECT_EQ(v.inuse_objects, 0);
  EXPECT_EQ(alloc::SampleVarianceOf(64, 1).bytes, 0);
}

TEST(StackTable, FilterCollisionStillIgnoresUnknownFree) {
  // An unknown address whose filter counter is non-zero (shared with a live sampled object)
  // takes the locked path, which must also leave everything unchanged.
  StackTable& t = FreshTable();
  void* s[] = {Pc(0x77)};
  Bucket* b = t.FindOrCreateBucket(s, 1, 0);
  const uintptr_t a = 0x7f0000001000;
  t.RecordAlloc(Obj(a), b, 64);
  const uint64_t mask = (uint64_t{1} << LiveObjectMap::kFilterBits) - 1;
  const uint64_t slot = LiveObjectMap::HashAddress(a) & mask;
  uintptr_t other = 0;
  for (uintptr_t c = a + 16; c < a + (uintptr_t{1} << 32); c += 16) {
    if ((LiveObjectMap::HashAddress(c) & mask) == slot) {
      other = c;
      break;
    }
  }
  ASSERT_NE(other, 0u) << "no colliding address found";
  EXPECT_FALSE(t.RecordFree(Obj(other)));
  EXPECT_EQ(t.InUseCount(*b), 1);
  EXPECT_TRUE(t.RecordFree(Obj(a)));
  EXPECT_FALSE(t.RecordFree(Obj(a)));  // counter back to zero: fast "no"
  EXPECT_EQ(t.InUseCount(*b), 0);
}

TEST(StackTable, StaleEntryIsAccountedAsFreed) {
  StackTable& t = FreshTable();
  void* s1[] = {Pc(1)};
  void* s2[] = {Pc(2)};
  Bucket* b1 = t.FindOrCreateBucket(s1, 1, 0);
  Bucket* b2 = t.FindOrCreateBucket(s2, 1, 0);
  t.RecordAlloc(Obj(0x5000), b1, 10);
  t.RecordAlloc(Obj(0x5000), b2, 20);  // the free of the first was never reported
  EXPECT_EQ(t.InUseCount(*b1), 0);
  EXPECT_EQ(t.InUseBytes(*b2), 20);
  EXPECT_EQ(t.num_live_objects(), 1u);
}

// A fake per-object slot provider: slots for the 16-byte "objects" of [kSlotBase, +64 KiB).
constexpr uintptr_t kSlotBase = 0x7000000;
constexpr size_t kFakeSlots = 4096;
std::atomic<uint64_t> g_fake_slots[kFakeSlots];
int g_fake_stale_calls = 0;

std::atomic<uint64_t>* FakeFind(const void* object) {
  uintptr_t a = reinterpret_cast<uintptr_t>(object);
  if (a < kSlotBase || a >= kSlotBase + kFakeSlots * 16) return nullptr;
  return &g_fake_slots[(a - kSlotBase) / 16];
}
std::atomic<uint64_t>* FakeForAlloc(const void* object, void (*stale)(void*, uint64_t), void* ctx) {
  // Simulates a recycled slot array: object kSlotBase + 16 * 4095 "recycles" slot 4094.
  if (reinterpret_cast<uintptr_t>(object) == kSlotBase + 16 * 4095) {
    uint64_t v = g_fake_slots[4094].exchange(0);
    if (v != 0) {
      ++g_fake_stale_calls;
      if (stale != nullptr) stale(ctx, v);
    }
  }
  return FakeFind(object);
}
void FakeForEach(void (*visit)(void*, const void*, uint64_t), void* ctx) {
  for (size_t i = 0; i < kFakeSlots; ++i) {
    uint64_t v = g_fake_slots[i].load();
    if (v != 0) visit(ctx, reinterpret_cast<const void*>(kSlotBase + i * 16), v);
  }
}
constexpr SlotProvider kFakeProvider = {&FakeForAlloc, &FakeFind, &FakeForEach};

TEST(StackTable, ObjectSlotsHoldExactModeRecords) {
  StackTable& t = FreshTable();
  t.SetSlotProvider(&kFakeProvider);
  void* s1[] = {Pc(0x11)};
  void* s2[] = {Pc(0x22)};
  Bucket* b1 = t.FindOrCreateBucket(s1, 1, 0);
  Bucket* b2 = t.FindOrCreateBucket(s2, 1, 0);
  EXPECT_NE(b1->id.load(), b2->id.load());
  EXPECT_EQ(t.BucketById(b1->id.load()), b1);
  EXPECT_EQ(t.BucketById(b2->id.load()), b2);
  // use_slot: goes to the slot, not the hash map.
  t.RecordAlloc(Obj(kSlotBase), b1, 0);  // a zero-size object still has a non-zero slot
  t.RecordAlloc(Obj(kSlotBase + 16), b1, 12, true);
  t.RecordAlloc(Obj(kSlotBase + 32), b2, 7, true);
  EXPECT_NE(g_fake_slots[1].load(), 0u);
  EXPECT_NE(g_fake_slots[2].load(), 0u);
  EXPECT_EQ(g_fake_slots[0].load(), 0u);  // use_slot false: hash map
  // Outside the provider's range: falls back to the hash map.
  t.RecordAlloc(Obj(0x9990000), b2, 5, true);
  EXPECT_EQ(t.num_live_objects(), 4u);
  StackRef found{};
  size_t size = 0;
  ASSERT_TRUE(t.Lookup(Obj(kSlotBase + 16), &found, &size));
  EXPECT_EQ(found, (StackRef{b1->stack, 0}));
  EXPECT_EQ(size, 12u);
  ASSERT_TRUE(t.DecodeSlot(g_fake_slots[2].load(), &found, &size));
  EXPECT_EQ(found, (StackRef{b2->stack, 0}));
  EXPECT_EQ(size, 7u);
  EXPECT_FALSE(t.DecodeSlot(0, &found, &size));
  ASSERT_TRUE(t.Lookup(Obj(0x9990000), &found, &size));
  EXPECT_EQ(size, 5u);
  size_t visited = 0;
  t.ForEachLiveObject(
      [](void* ctx, const void*, StackRef, size_t) { ++*static_cast<size_t*>(ctx); }, &visited);
  EXPECT_EQ(visited, 4u);
  // Frees: slot, then hash map; unknown objects in the slot range are not found.
  size = 0;
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase + 16), &size));
  EXPECT_EQ(size, 12u);
  EXPECT_EQ(g_fake_slots[1].load(), 0u);
  EXPECT_FALSE(t.RecordFree(Obj(kSlotBase + 16)));
  EXPECT_FALSE(t.RecordFree(Obj(kSlotBase + 48)));
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase)));
  EXPECT_TRUE(t.RecordFree(Obj(0x9990000)));
  // A slot still set when its object is recorded again (its free was never reported), and a
  // recycled slot array: both accounted as freed.
  // Slot records are counted live from the slots when a reader asks for counts.
  auto refresh = [&t] { t.ForEachBucketWithCounts([](const Bucket&) {}); };
  refresh();
  EXPECT_EQ(t.InUseCount(*b2), 1);  // kSlotBase + 32
  EXPECT_EQ(t.InUseBytes(*b2), 7);
  t.RecordAlloc(Obj(kSlotBase + 32), b1, 3, true);
  refresh();
  EXPECT_EQ(t.InUseCount(*b2), 0);
  EXPECT_EQ(t.InUseBytes(*b1), 3);
  t.RecordAlloc(Obj(kSlotBase + 16 * 4094), b2, 9, true);
  t.RecordAlloc(Obj(kSlotBase + 16 * 4095), b1, 1, true);
  EXPECT_EQ(g_fake_stale_calls, 1);
  refresh();
  EXPECT_EQ(t.InUseCount(*b2), 0);
  EXPECT_EQ(t.InUseBytes(*b1), 4);
  EXPECT_EQ(t.AllocCount(*b1), 4);  // every allocation is counted
  EXPECT_EQ(t.AllocCount(*b2), 3);
  EXPECT_EQ(t.AllocBytes(*b1), 0 + 12 + 3 + 1);
  EXPECT_EQ(t.num_live_objects(), 2u);
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase + 32)));
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase + 16 * 4095)));
  EXPECT_EQ(t.num_live_objects(), 0u);
  refresh();
  EXPECT_EQ(t.InUseCount(*b1), 0);
  EXPECT_EQ(t.InUseCount(*b2), 0);
}

// Stack-form slot records (the leak checker alone): the leaf frame is kept in the slot, apart
// from the callers' node, and no bucket exists until a reader counts; lookups, frees and the
// stopped-world answers work from the StackRef; readers then count each live record once, in
// the bucket of (whole stack, 0), as allocated and in use, next to bucket-form records.
TEST(StackTable, StackFormSlotsNeedNoBucketOrLeafNodeUntilCounted) {
  StackTable& t = FreshTable();
  t.SetSlotProvider(&kFakeProvider);
  void* s1[] = {Pc(0x7f0000000051), Pc(0x52)};
  void* s2[] = {Pc(0x61), Pc(0x52)};
  const size_t nodes_before = t.num_stack_nodes();
  const StackRef r1 = t.InsertCallers(s1, 2);
  const StackRef r2 = t.InsertCallers(s2, 2);
  ASSERT_NE(r1.node, StackTable::kNoStack);
  EXPECT_EQ(r1.node, r2.node);  // the same caller
  EXPECT_NE(r1.leaf, r2.leaf);
  EXPECT_NE(r1.leaf, 0u);
  EXPECT_EQ(t.InsertCallers(s1, 2), r1);
  EXPECT_EQ(t.num_stack_nodes(), nodes_before + 1);  // the caller's node only
  EXPECT_EQ(t.InsertCallers(nullptr, 0), (StackRef{0, 0}));
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(t.RecordStackIn(t.SlotForAlloc(Obj(kSlotBase + 16 * i)), r1, 10 + i));
  ASSERT_TRUE(t.RecordStackIn(t.SlotForAlloc(Obj(kSlotBase + 16 * 5)), r2, 7));
  // The largest size of the form.
  ASSERT_TRUE(
      t.RecordStackIn(t.SlotForAlloc(Obj(kSlotBase + 16 * 7)), r2, StackTable::kMaxSlotSize - 1));
  EXPECT_EQ(t.num_buckets(), 0u);  // stacks only
  EXPECT_EQ(t.num_stack_nodes(), nodes_before + 1);
  EXPECT_EQ(t.num_live_objects(), 7u);
  StackRef found{};
  size_t size = 0;
  ASSERT_TRUE(t.Lookup(Obj(kSlotBase + 16 * 3), &found, &size));
  EXPECT_EQ(found, r1);
  EXPECT_EQ(size, 13u);
  ASSERT_TRUE(t.Lookup(Obj(kSlotBase + 16 * 7), &found, &size));
  EXPECT_EQ(size, StackTable::kMaxSlotSize - 1);
  ASSERT_TRUE(t.DecodeSlot(g_fake_slots[5].load(), &found, &size));
  EXPECT_EQ(found, r2);
  EXPECT_EQ(size, 7u);
  EXPECT_EQ(StackTable::SlotSize(g_fake_slots[5].load()), 7u);
  void* read[4] = {};
  ASSERT_EQ(t.ReadStack(found, read, 4), 2);
  EXPECT_EQ(read[0], Pc(0x61));
  EXPECT_EQ(read[1], Pc(0x52));
  ASSERT_EQ(t.ReadStack(r1, read, 1), 1);  // room for the leaf alone
  EXPECT_EQ(read[0], Pc(0x7f0000000051));
  EXPECT_EQ(t.LeafFrame(r1), Pc(0x7f0000000051));
  // A free clears the slot and gives the size back; the record is gone.
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase + 16 * 4), &size));
  EXPECT_EQ(size, 14u);
  EXPECT_FALSE(t.Lookup(Obj(kSlotBase + 16 * 4), &found, &size));
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase + 16 * 7), &size));
  EXPECT_EQ(size, StackTable::kMaxSlotSize - 1);
  EXPECT_EQ(t.num_live_objects(), 5u);
  // A bucket-form record of the same stack (a profile started meanwhile).
  const uint32_t n1 = t.NodeOf(r1);
  ASSERT_NE(n1, StackTable::kNoStack);
  EXPECT_EQ(t.InsertStack(s1, 2), n1);  // the whole stack's node, made once
  Bucket* b1 = t.BucketForStack(n1, 2, 0);
  ASSERT_NE(b1, nullptr);
  EXPECT_EQ(b1->depth, 2);
  t.RecordAllocIn(t.SlotForAlloc(Obj(kSlotBase + 16 * 6)), Obj(kSlotBase + 16 * 6), b1, 100);
  int buckets = 0;
  t.ForEachBucketWithCounts([&](const Bucket&) { ++buckets; });
  EXPECT_EQ(buckets, 2);  // s1's and s2's, the second (and its leaf node) made by the reader
  EXPECT_EQ(t.InUseCount(*b1), 5);  // four stack-form records and the counted one
  EXPECT_EQ(t.InUseBytes(*b1), 10 + 11 + 12 + 13 + 100);
  EXPECT_EQ(t.AllocCount(*b1), 5);  // live stack-form records count as allocated
  EXPECT_EQ(t.AllocBytes(*b1), 10 + 11 + 12 + 13 + 100);
  Bucket* b2 = nullptr;
  t.ForEachBucket([&](const Bucket& b) {
    if (b.stack == t.NodeOf(r2)) b2 = const_cast<Bucket*>(&b);
  });
  ASSERT_NE(b2, nullptr);
  EXPECT_EQ(b2->depth, 2);
  ASSERT_EQ(t.ReadStack(*b2, read, 4), 2);
  EXPECT_EQ(read[0], Pc(0x61));
  EXPECT_EQ(t.InUseCount(*b2), 1);
  EXPECT_EQ(t.AllocBytes(*b2), 7);
  for (int i = 0; i < 7; ++i) t.RecordFree(Obj(kSlotBase + 16 * i));
  EXPECT_EQ(t.num_live_objects(), 0u);
  t.ForEachBucketWithCounts([](const Bucket&) {});
  EXPECT_EQ(t.InUseCount(*b1), 0);
  EXPECT_EQ(t.AllocCount(*b1), 1);  // the counted one; freed stack-form records are not totals
}

// A leaf whose index does not fit the slot's 16 bits is stored as the whole stack's node.
TEST(StackTable, StackFormFallsBackToTheWholeNodeForLateLeaves) {
  StackTable& t = FreshTable();
  t.SetSlotProvider(&kFakeProvider);
  void* caller[] = {Pc(0x4242)};
  const uint32_t callers = t.InsertStack(caller, 1);
  void* late[] = {nullptr, Pc(0x4242)};
  StackRef r{};
  for (uintptr_t i = 0; r.leaf <= 0xffff; ++i) {  // use up 16 bits of pc indices
    late[0] = Pc(0x10000000 + i);
    r = t.InsertCallers(late, 2);
  }
  EXPECT_EQ(r.node, callers);
  ASSERT_TRUE(t.RecordStackIn(t.SlotForAlloc(Obj(kSlotBase)), r, 24));
  StackRef found{};
  size_t size = 0;
  ASSERT_TRUE(t.Lookup(Obj(kSlotBase), &found, &size));
  EXPECT_EQ(found.leaf, 0u);
  EXPECT_EQ(found.node, t.NodeOf(r));
  EXPECT_EQ(size, 24u);
  void* read[2] = {};
  ASSERT_EQ(t.ReadStack(found, read, 2), 2);
  EXPECT_EQ(read[0], late[0]);
  EXPECT_EQ(read[1], Pc(0x4242));
  EXPECT_TRUE(t.RecordFree(Obj(kSlotBase)));
}

// Slot-mode allocation counts are batched per thread; readers see them all, exactly.
TEST(StackTable, BatchedSlotAllocCountsAreExactForReaders) {
  StackTable& t = FreshTable();
  t.SetSlotProvider(&kFakeProvider);
  void* s1[] = {Pc(0x31)};
  void* s2[] = {Pc(0x32)};
  Bucket* b1 = t.FindOrCreateBucket(s1, 1, 0);
  Bucket* b2 = t.FindOrCreateBucket(s2, 1, 0);
  constexpr int kThreads = 4, kPer = 900;
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int i = 0; i < kPer; ++i) {
        uintptr_t a = kSlotBase + 16 * static_cast<uintptr_t>(th * 1000 + i);
        t.RecordAlloc(Obj(a), (i / 10) % 2 ? b2 : b1, 5, true);  // switch call site every 10
        if (i % 3 == 0) {
          ASSERT_TRUE(t.RecordFree(Obj(a)));
        }
      }
    });
  for (auto& th : threads) th.join();
  int64_t allocs = 0, bytes = 0, inuse = 0;
  t.ForEachBucketWithCounts([&](const Bucket& b) {
    allocs += t.AllocCount(b);
    bytes += t.AllocBytes(b);
    inuse += t.InUseCount(b);
  });
  EXPECT_EQ(allocs, kThreads * kPer);
  EXPECT_EQ(bytes, 5 * kThreads * kPer);
  EXPECT_EQ(inuse, kThreads * (kPer - kPer / 3));
  EXPECT_EQ(t.AllocCount(*b1), kThreads * kPer / 2);
  for (int th = 0; th < kThreads; ++th)
    for (int i = 0; i < kPer; ++i)
      if (i % 3 != 0) t.RecordFree(Obj(kSlotBase + 16 * static_cast<uintptr_t>(th * 1000 + i)));
}

TEST(StackTable, GrowsAndFindsEverything) {
  StackTable& t = FreshTable();
  void* s[] = {Pc(7)};
  Bucket* b = t.FindOrCreateBucket(s, 1, 0);
  const uintptr_t kN = 300000;  // >> 64 stripes x 1024 initial heads
  for (uintptr_t i = 0; i < kN; ++i) t.RecordAlloc(Obj(0x100000 + i * 16), b, 16);
  EXPECT_EQ(t.num_live_objects(), kN);
  StackRef found;
  size_t size;
  for (uintptr_t i = 0; i < kN; i += 7)
    ASSERT_TRUE(t.Lookup(Obj(0x100000 + i * 16), &found, &size));
  for (uintptr_t i = 0; i < kN; i += 2) ASSERT_TRUE(t.RecordFree(Obj(0x100000 + i * 16)));
  EXPECT_EQ(t.InUseCount(*b), static_cast<int64_t>(kN / 2));
  size_t visited = 0;
  t.ForEachLiveObject(
      [](void* ctx, const void*, StackRef, size_t) { ++*static_cast<size_t*>(ctx); }, &visited);
  EXPECT_EQ(visited, kN / 2);
}

TEST(StackTable, ConcurrentSamplingAndFreeing) {
  StackTable& t = FreshTable();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  constexpr int kStacks = 37;
  std::atomic<int> go{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      std::vector<uintptr_t> pending;
      while (go.load() == 0) {
      }
      for (int i = 0; i < kPerThread; ++i) {
        void* stack[] = {Pc(0x1000 + static_cast<uintptr_t>(i % kStacks)), Pc(0x99)};
        Bucket* b = t.FindOrCreateBucket(stack, 2, 0);
        uintptr_t addr = (static_cast<uintptr_t>(th) << 40) + static_cast<uintptr_t>(i) * 32;
        t.RecordAlloc(Obj(addr), b, 32);
        // Free all but every 10th: some at once, some later (out of order).
        if (i % 10 != 0) {
          if (i % 3 == 0) {
            pending.push_back(addr);
          } else {
            ASSERT_TRUE(t.RecordFree(Obj(addr)));
          }
        }
        if (pending.size() > 50) {
          for (uintptr_t p : pending) ASSERT_TRUE(t.RecordFree(Obj(p)));
          pending.clear();
        }
      }
      for (uintptr_t p : pending) ASSERT_TRUE(t.RecordFree(Obj(p)));
    });
  }
  go.store(1);
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.num_buckets(), static_cast<size_t>(kStacks));
  int64_t allocs = 0, inuse = 0, inuse_bytes = 0;
  t.ForEachBucket([&](const Bucket& b) {
    allocs += b.alloc_count.load();
    inuse += t.InUseCount(b);
    inuse_bytes += t.InUseBytes(b);
  });
  EXPECT_EQ(allocs, int64_t{kThreads} * kPerThread);
  EXPECT_EQ(static_cast<size_t>(inuse), t.num_live_objects());
  EXPECT_EQ(inuse_bytes, inuse * 32);
  // Exactly the i % 10 == 0 objects survive.
  EXPECT_EQ(inuse, int64_t{kThreads} * (kPerThread / 10));
  StackRef found;
  size_t size;
  for (int th = 0; th < kThreads; ++th)
    for (int i = 0; i < kPerThread; i += 10)
      ASSERT_TRUE(t.Lookup(Obj((static_cast<uintptr_t>(th) << 40) + static_cast<uintptr_t>(i) * 32),
                           &found, &size));
}

}  // namespace
}  // namespace heapkit::prof
