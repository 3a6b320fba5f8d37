// The pipeline's frame lookup (report/pipeline.h, steps 2-4): a sample's PCs to the nodes of
// the chosen granularity, each distinct PC symbolized once (a return address minus 1: every PC
// of a heap profile is one, the leaf included), names simplified unless full_names, the
// unnamed libstdc++ frame under start_thread named (thread_trampoline.h), and the allocation
// path at the leaf end found (symbolize/allocation_frames.h, plus --drop_frames).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/stack_samples.h"
#include "pprof-tool/report/stack_filters.h"
#include "pprof-tool/report/view_options.h"
#include "profiler/symbolize/allocation_frames.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

// One frame of a stack.
struct LookupFrame {
  uint32_t node;
  bool inlined;
  FrameRole role;     // after --drop_frames / --keep_allocator_frames
  uint32_t module;    // interned module path (same id: same mapped file)
  uint32_t function;  // interned function name (allocation wrappers are found by function)
};

class FrameLookup {
 public:
  // New nodes are appended to *nodes; `filters` gives --drop_frames. All must outlive this.
  FrameLookup(Symbolizer& symbolizer, const ViewOptions& view, bool record_full_names,
              const StackFilters& filters, std::vector<NodeInfo>* nodes);
  ~FrameLookup();

  // The sample's frames, leaf first (valid until the next call), and in *first the length of
  // the allocation path at its leaf end (at least one frame stays).
  const std::vector<LookupFrame>& Stack(const RawSample& sample, size_t* first);

  // The name of an interned function id.
  const std::string& FunctionName(uint32_t function) const { return function_names_[function]; }

 private:
  class NameCache;
  const std::vector<LookupFrame>& Location(uint64_t pc);
  uint32_t NodeFor(const SourceFrame& f, uint64_t pc);
  uint32_t FunctionId(const std::string& name);
  void NameThreadTrampolines();

  Symbolizer& symbolizer_;
  const ViewOptions& view_;
  const bool record_full_names_;
  const StackFilters& filters_;
  std::vector<NodeInfo>& nodes_;
  std::unique_ptr<NameCache> names_;
  std::unordered_map<std::string, uint32_t> node_ids_;
  std::unordered_map<uint64_t, std::vector<LookupFrame>> locations_;  // by lookup pc
  std::unordered_map<std::string, uint32_t> module_ids_;
  std::unordered_map<std::string, uint32_t> function_ids_;
  std::vector<std::string> function_names_;
  std::unordered_map<uint32_t, LookupFrame> trampolines_;  // by the unnamed frame's node
  std::vector<LookupFrame> stack_;
};

}  // namespace heapkit::pprof
