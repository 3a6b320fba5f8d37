// The pipeline's last step: identical stacks are one sample (values and variances summed),
// samples that cancelled out exactly are dropped (e.g. with --base of an exact profile; a
// sampled one keeps its variance), and the nodes no sample uses any more
// (allocator frames, hidden frames...) are removed, the others renumbered in order of use.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/stack_samples.h"

namespace heapkit::pprof {

// A sample with any of its four heap values not 0.
inline bool HasAnyValue(const SampleValues& v) {
  return v.inuse_objects != 0 || v.inuse_bytes != 0 || v.alloc_objects != 0 || v.alloc_bytes != 0;
}

class StackMerger {
 public:
  // all_values: keep a sample whose value is 0 while another of its values is not
  // (PipelineOptions::all_values).
  explicit StackMerger(bool all_values) : all_values_(all_values) {}

  void Add(const std::vector<StackFrame>& frames, double value, const SampleValues& values,
           double variance, const SampleValues& variances);

  // The merged samples into out->samples; out->nodes keeps the nodes they use.
  void Finish(StackSamples* out);

 private:
  struct FramesHash {
    size_t operator()(const std::vector<StackFrame>& v) const;
  };
  struct FramesEqual {
    bool operator()(const std::vector<StackFrame>& a, const std::vector<StackFrame>& b) const;
  };

  bool all_values_;
  std::vector<StackSample> samples_;
  std::unordered_map<std::vector<StackFrame>, size_t, FramesHash, FramesEqual> index_;
};

}  // namespace heapkit::pprof
