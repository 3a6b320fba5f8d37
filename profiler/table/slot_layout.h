// The layout of a side-slot value (the sampled-allocation table's "Object slots",
// stack_table.h): how one 64-bit word holds a live record of either form, and nothing else —
// pure functions, no state, so that the table, the slot births (profiler/record/slot_births.h)
// and the tests decode a value the same way.
//
// The requested size is in the low 19 bits of both forms (slots hold small objects only, below
// kMaxSlotSize = 512 KiB), so that SlotSize is one mask:
//  - bucket form: bucket id << 32 | extra | size. Bits 19..31 hold the object's dump interval
//    + 1 when ages are recorded (0: none; SlotInterval), bit 62 says that the object's birth
//    word is set (kSlotBirthFlag), bit 63 is clear. Bucket ids stay below 2^30.
//  - stack form: kStackSlotTag | leaf << 47 | node << 19 | size: a StackRef, the trace-tree
//    node of the callers (below 2^28, TraceTree::kMaxNodes) and the pc-dictionary index of the
//    leaf (16 bits; 0: the node is the whole stack).
// A used slot is never 0 (bucket ids start at 1; the tag is set).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/table/object_birth.h"
#include "profiler/table/trace_tree.h"

namespace heapkit::prof {

// A stack as the table hands it out: a trace-tree node and, for stack-form slot records, a
// leaf frame kept outside the tree (see "Object slots"): the stack is then the leaf's pc
// followed by the node's frames. leaf == 0: the node is the whole stack.
struct StackRef {
  uint32_t node;
  uint32_t leaf;  // pc-dictionary index (TraceTree::PcIndex), or 0
  bool operator==(const StackRef&) const = default;
};

// StackTable derives from it, so that the table's users name the layout through the table
// (StackTable::SlotSize, StackTable::kSlotBirthFlag).
struct SlotLayout {
 protected:
  // Slot layout (see "Object slots"): the size in the low 19 bits of both forms; stack form:
  // tag, leaf index (16 bits), node (28).
  static constexpr uint64_t kStackSlotTag = uint64_t{1} << 63;
  static constexpr int kStackSizeBits = 19;
  static constexpr int kStackLeafShift = 47;
  static constexpr uint32_t kStackNodeMask =
      (uint32_t{1} << (kStackLeafShift - kStackSizeBits)) - 1;
  static constexpr uint32_t kStackLeafMask = (uint32_t{1} << (63 - kStackLeafShift)) - 1;
  static_assert(TraceTree::kMaxNodes - 1 <= kStackNodeMask, "every node id fits a slot");
  static StackRef StackFormRef(uint64_t value) {
    return {static_cast<uint32_t>(value >> kStackSizeBits) & kStackNodeMask,
            static_cast<uint32_t>(value >> kStackLeafShift) & kStackLeafMask};
  }

 public:
  // Slot records hold objects below this size (both forms; see "Object slots").
  static constexpr size_t kMaxSlotSize = size_t{1} << kStackSizeBits;
  // A bucket-form slot value whose object's birth word (alloc/object_slots.h "Birth words";
  // profiler/record/slot_births.h) was written before the value: RecordAllocIn sets it when the
  // birth has a time (its caller wrote the word). Bucket ids stay below 2^30 (kIdChunks).
  static constexpr uint64_t kSlotBirthFlag = uint64_t{1} << 62;
  static bool SlotHasBirth(uint64_t value) {
    return (value & (kStackSlotTag | kSlotBirthFlag)) == kSlotBirthFlag;
  }
  // A bucket-form slot value keeps its object's dump interval + 1 (0: none) in the bits between
  // the size and the bucket id, saturated (HEAP_PROFILE_AGES in exact mode: object_birth.h).
  static constexpr int kSlotIntervalBits = 32 - kStackSizeBits;
  static constexpr uint32_t kMaxSlotInterval = (uint32_t{1} << kSlotIntervalBits) - 2;
  // With kSlotBirthFlag when the birth has a time (see kSlotBirthFlag).
  static uint64_t SlotInterval(const ObjectBirth& birth) {
    if (birth.thread == 0) return 0;  // no birth recorded
    const uint32_t i = birth.interval < kMaxSlotInterval ? birth.interval : kMaxSlotInterval;
    return (uint64_t{i + 1} << kStackSizeBits) | (birth.time_ns != 0 ? kSlotBirthFlag : 0);
  }
  // RecordStackIn when StackSlotTakes(stack).
  static void StoreStackSlot(std::atomic<uint64_t>* slot, StackRef stack, size_t size) {
    slot->store(kStackSlotTag | (uint64_t{stack.leaf} << kStackLeafShift) |
                    (uint64_t{stack.node} << kStackSizeBits) | size,
                std::memory_order_release);
  }
  // The requested size a slot value of either form holds.
  static size_t SlotSize(uint64_t value) { return value & (kMaxSlotSize - 1); }
  // The bucket id of a slot value (0: stack form, no bucket).
  static uint32_t SlotBucketId(uint64_t value) {
    return value & kStackSlotTag ? 0 : SlotIdOf(value);
  }
  // The bucket id field of a bucket-form slot value (without kSlotBirthFlag).
  static uint32_t SlotIdOf(uint64_t value) {
    return static_cast<uint32_t>(value >> 32) & ((uint32_t{1} << 30) - 1);
  }
};

}  // namespace heapkit::prof
