#include "pprof-tool/report/stack_merge.h"

#include <cstdint>
#include <utility>

namespace heapkit::pprof {

size_t StackMerger::FramesHash::operator()(const std::vector<StackFrame>& v) const {
  size_t h = v.size();
  for (const StackFrame& f : v) h = h * 1000003u ^ (f.node * 2u + (f.inlined ? 1u : 0u));
  return h;
}

bool StackMerger::FramesEqual::operator()(const std::vector<StackFrame>& a,
                                          const std::vector<StackFrame>& b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].node != b[i].node || a[i].inlined != b[i].inlined) return false;
  }
  return true;
}

void StackMerger::Add(const std::vector<StackFrame>& frames, double value,
                      const SampleValues& values, double variance, const SampleValues& variances) {
  auto [it, inserted] = index_.emplace(frames, samples_.size());
  if (inserted) {
    samples_.push_back({frames, value, values, variance, variances});
  } else {
    samples_[it->second].value += value;
    samples_[it->second].values += values;
    samples_[it->second].variance += variance;
    samples_[it->second].variances += variances;
  }
}

void StackMerger::Finish(StackSamples* out) {
  out->samples.clear();
  out->samples.reserve(samples_.size());
  for (StackSample& s : samples_) {
    // A sampled change that nets to 0 is still uncertain: it stays, so nodes' variances add
    // up to the total's.
    if (s.value != 0 || s.variance > 0 || (all_values_ && HasAnyValue(s.values)))
      out->samples.push_back(std::move(s));
  }
  samples_.clear();
  index_.clear();
  std::vector<int64_t> remap(out->nodes.size(), -1);
  std::vector<NodeInfo> used;
  for (StackSample& s : out->samples) {
    for (StackFrame& f : s.frames) {
      if (remap[f.node] < 0) {
        remap[f.node] = int64_t(used.size());
        used.push_back(std::move(out->nodes[f.node]));  // each node is moved once
      }
      f.node = uint32_t(remap[f.node]);
    }
  }
  out->nodes = std::move(used);
}

}  // namespace heapkit::pprof
