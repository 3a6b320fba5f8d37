// Profile (legacy heap profile, summed, --base subtracted) -> profile.proto message.
//
// The samples come from one run of the report pipeline (report/pipeline.h) at address
// granularity keeping all four values, so the export holds what the text reports count: the same
// un-sampled values (the parser's one rule), allocator frames dropped, --focus/--ignore/
// --hide/--show and --noinlines applied. Each pipeline frame carries its lookup PC; runs of
// frames at one PC (inlined callees, innermost first, then the physical function) become one
// Location with one Line each. Frames the symbolizer could not name get no Line.
//
// Invariants of the output (checked by tests with go tool pprof and a Python decoder):
//   - string_table[0] == ""; every string is stored once;
//   - ids of mappings, locations and functions are 1..n, in order of first use;
//   - the main binary's mapping is mapping 1 (go pprof names the profile after it);
//   - same input, same bytes (no time stamps, no hash-order iteration).
#pragma once

#include <string>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/report/pipeline.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct ProtoWriteOptions {
  PipelineOptions pipeline;  // filters, inlines, allocator frames (sample_type, granularity unused)
  bool heapcheck = false;    // leak-checker dump: only inuse_objects/inuse_space (the leaks)
  std::string main_binary;   // path of the program; its mapping is written first
  bool gzip = false;         // *out is the .pb.gz file: serialized straight into the gzip stream
};

// profile.proto bytes in *out (gzipped with options.gzip). False with one line in *error on
// a bad option (e.g. an invalid regex).
bool EncodeProfileProto(const Profile& profile, Symbolizer& symbolizer,
                        const ProtoWriteOptions& options, std::string* out, std::string* error);

}  // namespace heapkit::pprof
