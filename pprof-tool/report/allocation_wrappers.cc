#include "pprof-tool/report/allocation_wrappers.h"

namespace heapkit::pprof {

AllocationWrapperFinder::Counts& AllocationWrapperFinder::At(uint32_t function) {
  if (function >= counts_.size()) counts_.resize(size_t{function} + 1);
  return counts_[function];
}

void AllocationWrapperFinder::AddStack(const std::vector<uint32_t>& functions) {
  if (functions.empty()) return;
  const uint64_t serial = ++stacks_added_;
  for (uint32_t f : functions) {
    Counts& c = At(f);
    if (c.last_stack != serial) {
      c.last_stack = serial;
      ++c.stacks;
    }
  }
  Counts& leaf = At(functions[0]);
  ++leaf.leaf;
  if (functions.size() < 2 || functions[1] == functions[0] ||
      leaf.caller_count >= kWrapperMinCallers)
    return;
  for (size_t i = 0; i < leaf.caller_count; ++i) {
    if (leaf.callers[i] == functions[1]) return;
  }
  leaf.callers[leaf.caller_count++] = functions[1];
}

std::unordered_set<uint32_t> AllocationWrapperFinder::Wrappers() const {
  std::unordered_set<uint32_t> wrappers;
  for (size_t function = 0; function < counts_.size(); ++function) {
    const Counts& c = counts_[function];
    if (c.caller_count >= kWrapperMinCallers &&
        double(c.leaf) >= kWrapperLeafShare * double(c.stacks)) {
      wrappers.insert(static_cast<uint32_t>(function));
    }
  }
  return wrappers;
}

}  // namespace heapkit::pprof
