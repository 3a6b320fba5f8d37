// Symbolized stack samples: the output of the report pipeline (report/pipeline.h) and the
// input of the call graph (graph/), the text reports (report/) and the renderers (render/).
// Defined here, with NodeInfo::Label in stack_samples.cc, so those stages depend on the model
// only.
// The pipeline has already applied, in this order: value type selection (--inuse_space ...),
// un-sampling, summing of several profiles, --base subtraction, allocator-frame removal,
// granularity (--functions/--lines/--files/--addresses), and the --focus/--ignore/--hide/--show
// filters. Renderers (DOT/SVG/flame graph) and text reports start from here.
//
// Invariants:
//   - frames[k].node indexes StackSamples::nodes; frames are LEAF FIRST (frames[0] allocated).
//   - frames[k].inlined == true: frames[k] was inlined into frames[k+1] (the caller), so the
//     call edge frames[k+1] -> frames[k] is an inline edge.
//   - A sample may have zero frames only if every frame was hidden; such samples still count in
//     `total` (pprof does the same) but appear in no node.
//   - Values may be negative (after --base).
//   - Samples with identical frame lists are merged (value summed); samples whose value is 0
//     are dropped.
//   - total: the sum of the values that passed the filters; with a diff base (--diff_base)
//     the sum of |value| of the base's samples, which percentages then refer to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pprof-tool/model/estimate.h"
#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {

// One node of the chosen granularity. Which fields are meaningful depends on granularity:
//   functions: name (+ file of the function's first seen line, line = 0)
//   lines:     name + file + line
//   files:     name == file (the source file), line = 0
//   addresses: name + file + line + address
struct NodeInfo {
  std::string name;       // demangled function name ("module+0xoffset" if unknown)
  std::string file;       // source file, "" if unknown
  int line = 0;           // 0 unless granularity is lines/addresses
  int start_line = 0;     // the function's declaration line (SourceFrame::start_line); 0 if
                          // unknown or granularity is files
  uint64_t address = 0;   // 0 unless granularity is addresses
  std::string module;     // mapped object path, "" if unknown
  std::string full_name;  // the whole demangled name when `name` is simplified and differs
                          // (filled for pictures only: PipelineOptions::record_full_names)

  // The label pprof prints: "foo", "foo file.cc:12", "file.cc", "0x4005d0 foo file.cc:12".
  std::string Label() const;
  // The same with the full name (for hover texts: SVG <title>, DOT tooltip).
  std::string FullLabel() const;
};

struct StackFrame {
  uint32_t node = 0;     // index into StackSamples::nodes
  bool inlined = false;  // this frame was inlined into the next (caller) frame
};

struct StackSample {
  std::vector<StackFrame> frames;  // leaf first
  double value = 0;
  SampleValues values =
      {};  // all four un-sampled values, summed like `value` (PipelineOptions::all_values)
  double variance = 0;  // the sampling variance of `value` (model/estimate.h), summed likewise
  SampleValues variances = {};  // the four values' sampling variances, summed like `values`
};

enum class Granularity { kFunctions, kLines, kFiles, kAddresses };

struct StackSamples {
  std::vector<NodeInfo> nodes;  // unique per (granularity key)
  std::vector<StackSample> samples;
  double total = 0;  // see "total" above
  // The sampling variance of the sum of the values that passed the filters (also with a diff
  // base, whose total is not that sum), and how the variances were obtained.
  double total_variance = 0;
  VarianceSource variance_source = VarianceSource::kExact;
  ValueUnit unit = ValueUnit::kBytes;
  std::string sample_type;  // "inuse_space", "inuse_objects", "alloc_space", "alloc_objects"
  Granularity granularity = Granularity::kFunctions;
  std::vector<std::string> description;  // legend lines: "File: prog", "Type: inuse_space", ...
  // Allocation wrappers charged to their callers (report/allocation_wrappers.h), sorted: the
  // set decided for the whole profile or dump series, the same in each of its views.
  std::vector<std::string> folded_wrappers;

  // "Allocation wrappers charged to their callers: a, b (--keep_allocator_frames shows them)",
  // every one named, or "" when there are none.
  std::string FoldedWrappersLine() const;
};

}  // namespace heapkit::pprof
