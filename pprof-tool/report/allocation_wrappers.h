// Allocation wrappers: functions of the program (or of a library it uses) that only hand a
// request on to the allocator — xmalloc, Lua's luaM_malloc_, CPython's PyMem_Malloc, LLVM's
// SmallVectorBase::grow_pod. Left as the leaf, they top every report and say nothing about who
// needed the memory. They are recognised from the profile itself, after the allocation path
// (symbolize/allocation_frames.h) is dropped from each stack:
//   - the function is the leaf (the frame just above malloc/new) in at least kLeafShare of the
//     stacks it appears in, and
//   - those stacks reach it from at least kMinCallers distinct calling functions.
// The pipeline then charges their memory to their callers, as it does for the C++ library's
// allocation frames, and names them in the report header; --keep_allocator_frames keeps them.
// A function that allocates for a few callers of its own (a constructor helper called from one
// place) stays the leaf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace heapkit::pprof {

inline constexpr double kWrapperLeafShare = 0.9;
inline constexpr size_t kWrapperMinCallers = 4;

class AllocationWrapperFinder {
 public:
  // One stack, leaf first after the allocation path, as function ids (any dense numbering).
  void AddStack(const std::vector<uint32_t>& functions);
  // The function ids that are allocation wrappers.
  std::unordered_set<uint32_t> Wrappers() const;

 private:
  // Per function id (the ids are dense: a vector, no hashing per frame).
  struct Counts {
    size_t stacks = 0;        // stacks it appears in
    size_t leaf = 0;          // stacks where it is the leaf
    uint64_t last_stack = 0;  // the serial of the last stack counted (recursion counts once)
    size_t caller_count = 0;  // distinct callers in those, up to kWrapperMinCallers
    uint32_t callers[kWrapperMinCallers] = {};
  };
  Counts& At(uint32_t function);
  std::vector<Counts> counts_;
  uint64_t stacks_added_ = 0;
};

}  // namespace heapkit::pprof
