// A Symbolizer over the "--- symbol" section of a self-contained (--raw) profile.
#pragma once

#include <memory>
#include <unordered_map>

#include "pprof-tool/model/profile.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

std::unique_ptr<Symbolizer> MakeTableSymbolizer(const std::vector<EmbeddedSymbol>& symbols);

}  // namespace heapkit::pprof
