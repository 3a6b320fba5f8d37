// This process's own symbolizer, for the HTTP endpoint's profiles and /pprof/symbol: one
// pprof::Symbolizer over the executable mappings of /proc/self/maps, rebuilt only when those
// change (a library loaded or unloaded; data mappings come and go, libdw's own among them), so
// that its per-PC cache makes the next scrape cheap. Local files only: no debuginfod, no network.
// Used by the server's thread alone (no lock).
//
// Memory: the per-PC cache holds the PCs of the profiles, which the program's own code bounds;
// addresses a client sends (/pprof/symbol) are looked up without caching (FunctionsAt).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::pprof {
class Symbolizer;
}

namespace heapkit::prof::http {

// An executable, file-backed mapping of the maps text (a profile's Mapping).
struct CodeMapping {
  uint64_t start, limit, offset;
  std::string path;
};

std::vector<CodeMapping> ExecutableMappings(std::string_view maps);

// The symbolizer for `maps` (this process's maps text; `code` its ExecutableMappings).
pprof::Symbolizer* SymbolizerFor(std::string_view maps, const std::vector<CodeMapping>& code);

// A file's GNU build ID as lower-case hex ("" if none), read once per path.
const std::string& BuildIdOf(const std::string& path);

// The whole text of /proc/self/maps ("" if unreadable).
std::string ReadProcMaps();

// The function containing each address (its outermost, non-inlined frame), "" where unknown:
// gperftools' /pprof/symbol. One read of the maps for the whole batch; nothing is added to the
// symbolizer's cache. Stops once the calling thread has used `cpu_budget_ns` of CPU time in the
// call: the names answered so far (fewer than the addresses), *complete false.
std::vector<std::string> FunctionsAt(std::span<const uint64_t> addresses, int64_t cpu_budget_ns,
                                     bool* complete);

}  // namespace heapkit::prof::http
