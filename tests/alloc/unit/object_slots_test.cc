// The profiler's per-object side slots (alloc/object_slots.h) over the global allocator (driven
// through heapkit::alloc::Malloc, not through the malloc override).
#include "alloc/object_slots.h"

#include <gtest/gtest.h>

#include <vector>

#include "alloc/allocator.h"
#include "alloc/live_objects.h"

namespace heapkit::alloc {
namespace {

constexpr uint64_t kTag = 0x5107ull << 32;  // marks this test's slot values

const Span* SpanOf(const void* p) {
  return g_state.pagemap.GetSpan(reinterpret_cast<uintptr_t>(p) >> kPageShift);
}

uint64_t IndexOf(const Span* span, const void* p) {
  return g_state.sizemap.ObjectIndexOf(span->sizeclass_,
                                       reinterpret_cast<uintptr_t>(p) - span->StartAddress());
}

struct Seen {
  const std::vector<void*>* objects;
  int found = 0;
  int wrong = 0;
  void Count(const void* object, uint64_t value) {
    if ((value & ~uint64_t{0xffffffff}) != kTag) return;  // not one of ours
    const uint64_t i = value & 0xffffffffu;
    if (i < objects->size() && (*objects)[i] == object)
      ++found;
    else
      ++wrong;
  }
};

TEST(ObjectSlotsTest, OneSlotPerSmallObjectFoundTakenAndEnumerated) {
  constexpr int kN = 2000;  // several spans of three classes
  std::vector<void*> objects;
  for (int i = 0; i < kN; ++i) objects.push_back(Malloc(40 + (i % 3) * 200));
  std::vector<std::atomic<uint64_t>*> slots;
  for (int i = 0; i < kN; ++i) {
    std::atomic<uint64_t>* slot = ObjectSlotForAlloc(objects[i], nullptr, nullptr);
    ASSERT_NE(slot, nullptr) << i;
    EXPECT_EQ(slot->load(), 0u);
    slot->store(kTag | static_cast<uint64_t>(i));
    slots.push_back(slot);
  }
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(FindObjectSlot(objects[i]), slots[i]) << i;
    ASSERT_EQ(ObjectSlotForAlloc(objects[i], nullptr, nullptr), slots[i]) << i;
    const Span* span = SpanOf(objects[i]);
    ASSERT_EQ(SlotOfNewObject(span, objects[i]), slots[i]) << i;
    ASSERT_EQ(OwnedCachedSlot(span, IndexOf(span, objects[i])), slots[i]) << i;
  }
  Seen all{&objects};
  ForEachObjectSlot([](void* c, const void* o, uint64_t v) { static_cast<Seen*>(c)->Count(o, v); },
                    &all);
  EXPECT_EQ(all.found, kN);
  EXPECT_EQ(all.wrong, 0);
  Seen live{&objects};
  ForEachLiveObjectWithSlot(
      [](void* c, void* o, size_t, uint64_t v) { static_cast<Seen*>(c)->Count(o, v); }, &live);
  EXPECT_EQ(live.found, kN);
  EXPECT_EQ(live.wrong, 0);
  // Taking a slot returns its value once and leaves it empty.
  for (int i = 0; i < kN; ++i) {
    const Span* span = SpanOf(objects[i]);
    ASSERT_EQ(TakeObjectSlot(span, objects[i], IndexOf(span, objects[i])),
              kTag | static_cast<uint64_t>(i))
        << i;
    ASSERT_EQ(TakeObjectSlot(span, objects[i], IndexOf(span, objects[i])), 0u) << i;
    EXPECT_EQ(slots[i]->load(), 0u);
  }
  Seen after{&objects};
  ForEachObjectSlot([](void* c, const void* o, uint64_t v) { static_cast<Seen*>(c)->Count(o, v); },
                    &after);
  EXPECT_EQ(after.found, 0);
  for (void* p : objects) Free(p);
}

TEST(ObjectSlotsTest, LargeObjectsAndForeignAddressesHaveNoSlot) {
  void* big = Malloc(1 << 20);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(ObjectSlotForAlloc(big, nullptr, nullptr), nullptr);
  EXPECT_EQ(FindObjectSlot(big), nullptr);
  EXPECT_EQ(SlotOfNewObject(SpanOf(big), big), nullptr);
  EXPECT_EQ(TakeObjectSlot(SpanOf(big), big, 0), 0u);
  Free(big);
  int local = 0;
  EXPECT_EQ(FindObjectSlot(&local), nullptr);
  EXPECT_EQ(ObjectSlotForAlloc(&local, nullptr, nullptr), nullptr);
}

// Birth words: arrays made while SetSlotBirths(true) carry one per object, beside the slots; the
// walk with births and the slot-free hook hand each object's own.
struct TakenBirth {
  const void* object = nullptr;
  uint64_t value = 0;
  std::atomic<uint64_t>* birth = nullptr;
};
TakenBirth g_taken;

TEST(ObjectSlotsTest, BirthWordsBesideTheSlots) {
  SetSlotBirths(true);
  constexpr int kN = 600;  // a class no other test here records
  std::vector<void*> objects;
  std::vector<std::atomic<uint64_t>*> births;
  for (int i = 0; i < kN; ++i) {
    void* p = Malloc(5000);
    std::atomic<uint64_t>* slot = ObjectSlotForAlloc(p, nullptr, nullptr);
    std::atomic<uint64_t>* birth = OwnedObjectBirth(p);
    ASSERT_NE(slot, nullptr) << i;
    ASSERT_NE(birth, nullptr) << i;
    EXPECT_NE(birth, slot);
    EXPECT_EQ(BirthOfSlot(OwnedCachedArray(SpanOf(p)), slot), birth) << i;
    slot->store(kTag | static_cast<uint64_t>(i));
    birth->store(0xb1000000u + static_cast<uint64_t>(i));
    objects.push_back(p);
    births.push_back(birth);
  }
  struct Walk {
    const std::vector<void*>* objects;
    int found = 0, wrong = 0;
  } walk{&objects};
  ForEachObjectSlotWithBirth(
      [](void* c, const void* o, uint64_t v, uint64_t b) {
        auto* w = static_cast<Walk*>(c);
        if ((v & ~uint64_t{0xffffffff}) != kTag) return;
        const uint64_t i = v & 0xffffffffu;
        if (i < w->objects->size() && (*w->objects)[i] == o && b == 0xb1000000u + i)
          ++w->found;
        else
          ++w->wrong;
      },
      &walk);
  EXPECT_EQ(walk.found, kN);
  EXPECT_EQ(walk.wrong, 0);
  SetSlotFreeHook([](const void* o, uint64_t v, std::atomic<uint64_t>* b, const uintptr_t*) {
    g_taken = {o, v, b};
  });
  for (int i = 0; i < kN; ++i) {
    const Span* span = SpanOf(objects[i]);
    ASSERT_EQ(TakeObjectSlot(span, objects[i], IndexOf(span, objects[i])),
              kTag | static_cast<uint64_t>(i));
    EXPECT_EQ(g_taken.object, objects[i]);
    EXPECT_EQ(g_taken.value, kTag | static_cast<uint64_t>(i));
    EXPECT_EQ(g_taken.birth, births[i]);
  }
  SetSlotFreeHook(nullptr);
  SetSlotBirths(false);
  for (void* p : objects) Free(p);
}

}  // namespace
}  // namespace heapkit::alloc
