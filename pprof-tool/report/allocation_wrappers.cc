#include "pprof-tool/report/allocation_wrappers.h"

namespace heapkit::pprof {

void AllocationWrapperFinder::AddStack(const std::vector<uint32_t>& functions) {
  if (functions.empty()) return;
  seen_.clear();
  for (uint32_t f : functions) {
    if (seen_.insert(f).second) ++counts_[f].stacks;  // recursion counts once
  }
  Counts& leaf = counts_[functions[0]];
  ++leaf.leaf;
  if (functions.size() > 1 && functions[1] != functions[0] &&
      leaf.callers.size() < kWrapperMinCallers) {
    leaf.callers.insert(functions[1]);
  }
}

std::unordered_set<uint32_t> AllocationWrapperFinder::Wrappers() const {
  std::unordered_set<uint32_t> wrappers;
  for (const auto& [function, c] : counts_) {
    if (c.callers.size() >= kWrapperMinCallers &&
        double(c.leaf) >= kWrapperLeafShare * double(c.stacks)) {
      wrappers.insert(function);
    }
  }
  return wrappers;
}

}  // namespace heapkit::pprof
