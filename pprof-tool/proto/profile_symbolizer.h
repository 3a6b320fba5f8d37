// The symbolizer for a loaded profile, whatever its format: a profile.proto's own Lines for
// the locations that carry them, libdwfl over the mappings for the others (created only when
// such a PC is met, so fully symbolized profiles never look for binaries); legacy and --raw
// profiles as MakeSymbolizer (report/pipeline.h) decides.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

// `profile` must outlive the result; `warnings` too (the fallback may add some later).
std::unique_ptr<Symbolizer> MakeProfileSymbolizer(const Profile& profile,
                                                  const std::string& program,
                                                  const std::vector<std::string>& symbol_path,
                                                  std::vector<std::string>* warnings);

}  // namespace heapkit::pprof
