// Symbols for the leak report: one Symbolizer (profiler/symbolize/symbolizer.h, through its
// public header only) over the mapped objects that hold the PCs the report looks at.
//
// Which PCs: those of the groups the report may print (the first HEAP_CHECK_MAX_LEAKS), or of
// every group when suppressions must see them all. Only the objects
// holding one of those PCs are given to the symbolizer (all of each object's mappings, so that
// its load bias comes out right), plus the plugins dlclose()d before the check, as they were
// mapped (profiler/format/unloaded_modules.h): opening every library of the process, and reading
// its debug info, costs more than the lookups themselves. The files are the ones mapped, at their
// paths (no symbol path: PPROF_BINARY_PATH is pprof-tool's, for profiles read elsewhere); debug
// info as libdw finds it, when allowed.
//
// Uses the normal heap: built only after the world is restarted, with recording off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "heapcheck/leak_groups.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/proc_maps.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::check {

class LeakSymbols {
 public:
  // groups_needed: how many groups from the front of `groups` will be symbolized.
  // standard_debuginfo_search: SymbolSearch::standard_search (report.h ReportOptions).
  LeakSymbols(const ProcMaps& maps, const LeakGroups& groups, size_t groups_needed,
              bool standard_debuginfo_search);

  // The source frames of a return address (looked up at pc - 1, inside the call), innermost
  // first; nullptr when no symbolizer could be made.
  const std::vector<pprof::SourceFrame>* Frames(uintptr_t pc) {
    if (symbolizer_ == nullptr) return nullptr;
    return &symbolizer_->Symbolize(pc - 1);  // all are return addresses, the leaf too
  }
  bool available() const { return symbolizer_ != nullptr; }

 private:
  std::unique_ptr<pprof::Symbolizer> symbolizer_;
};

// The maps lines (text of /proc/self/maps format) of the mapped objects holding a PC of the
// first groups_needed groups, then those of unloaded plugins. Exposed for tests.
void CollectSymbolizedMaps(const ProcMaps& maps, const LeakGroups& groups, size_t groups_needed,
                           MmapArray<char>* out);

}  // namespace heapkit::check
