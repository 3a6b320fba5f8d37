// This process's own symbolizer, for the HTTP endpoint's profiles and /pprof/symbol: one
// pprof::Symbolizer over the executable mappings of /proc/self/maps, rebuilt when those change
// (a library loaded or unloaded; data mappings come and go, libdw's own among them). Local
// files only: no debuginfod, no network. Used by the server's thread alone (no lock).
//
// Memory: the libdwfl symbolizer is the endpoint's one large allocation (libdwfl's sessions,
// the modules' symbol tables and inline trees, the ELF sections libelf reads: megabytes for a
// service linked with a few libraries), so it lives only while requests use it: it is dropped
// once the server has been idle for kSymbolizerIdleMs and before /metrics is answered, and the
// heap it and the answers freed is returned to the OS (DropSymbolizer). What stays are the names of
// the PCs the profiles held (their frames, at most 512 KiB, counted by CachedBytes): a scrape whose
// PCs were all named before builds no symbolizer; one with new PCs builds it again
// (tests/bench/profiler/RESULTS.md has both costs). Addresses a client sends (/pprof/symbol)
// are looked up without caching (FunctionsAt).
#pragma once

#include <cstddef>
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

// The symbolizer for `maps` (this process's maps text; `code` its ExecutableMappings), valid
// for the request: `maps` must live until the request's last lookup.
pprof::Symbolizer* SymbolizerFor(std::string_view maps, const std::vector<CodeMapping>& code);

// How long an unused symbolizer is kept.
constexpr int64_t kSymbolizerIdleMs = 1000;

// When the symbolizer should be dropped (CLOCK_MONOTONIC ms), -1 when no request used it since
// the last drop.
int64_t SymbolizerDropDeadlineMs();

// When a request used the symbolizer since the last call: destroys the libdwfl symbolizer, if
// built, then calls `return_memory` (ServerHooks' return_memory) so that the heap it and the
// answers freed leaves the process's RSS.
void DropSymbolizer(void (*return_memory)());

// Heap bytes the endpoint keeps between answers in its caches (the PCs' names),
// by their sizes.
size_t CachedBytes();

// The whole text of /proc/self/maps ("" if unreadable).
std::string ReadProcMaps();

// The function containing each address (its outermost, non-inlined frame), "" where unknown:
// gperftools' /pprof/symbol. One read of the maps for the whole batch; nothing is added to the
// symbolizer's cache. Stops once the calling thread has used `cpu_budget_ns` of CPU time in the
// call: the names answered so far (fewer than the addresses), *complete false.
std::vector<std::string> FunctionsAt(std::span<const uint64_t> addresses, int64_t cpu_budget_ns,
                                     bool* complete);

}  // namespace heapkit::prof::http
