#include "heapcheck/leak_symbols.h"

#include <string_view>

#include "profiler/unloaded_modules.h"

namespace heapkit::check {
namespace {

std::string_view PathOf(const ProcMaps& maps, size_t i) {
  return std::string_view(maps.text() + maps[i].path_offset, maps[i].path_length);
}

// keep[i] != 0: mapping i holds a PC of the first groups_needed groups, or belongs to the same
// file as one that does.
void MarkHoldingMappings(const ProcMaps& maps, const LeakGroups& groups, size_t groups_needed,
                         MmapArray<uint8_t>* keep) {
  keep->Resize(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) (*keep)[i] = 0;
  size_t seen = 0;
  for (const LeakGroup& g : groups) {
    if (seen++ == groups_needed) break;
    const LeakRecord& r = groups.Head(g);
    for (int d = 0; d < r.depth; ++d) {
      const MapEntry* e = maps.Find(groups.Stack(r)[d]);
      if (e != nullptr) (*keep)[static_cast<size_t>(e - &maps[0])] = 1;
    }
  }
  for (size_t i = 0; i < maps.size(); ++i) {
    if ((*keep)[i] != 1 || maps[i].path_length == 0) continue;
    for (size_t j = 0; j < maps.size(); ++j)
      if (!(*keep)[j] && PathOf(maps, j) == PathOf(maps, i)) (*keep)[j] = 2;
  }
}

void AppendLine(void* out, const char* text, size_t length) {
  auto* w = static_cast<MmapArray<char>*>(out);
  for (size_t i = 0; i < length; ++i) w->PushBack(text[i]);
  w->PushBack('\n');
}

}  // namespace

void CollectSymbolizedMaps(const ProcMaps& maps, const LeakGroups& groups, size_t groups_needed,
                           MmapArray<char>* out) {
  MmapArray<uint8_t> keep;
  MarkHoldingMappings(maps, groups, groups_needed, &keep);
  for (size_t i = 0; i < maps.size(); ++i) {
    if (!keep[i]) continue;
    // The line starts where the previous one ended; find it from the path backwards.
    const char* end = maps.text() + maps[i].path_offset + maps[i].path_length;
    const char* begin = maps.text() + maps[i].path_offset;
    while (begin > maps.text() && begin[-1] != '\n') --begin;
    AppendLine(out, begin, static_cast<size_t>(end - begin));
  }
  // Plugins dlclose()d before the check: their mappings as they were (unloaded_modules.h).
  prof::LiveModuleScan live;
  live.Feed(maps.text(), maps.text_size());
  prof::ForEachUnloadedModuleLine(live, AppendLine, out);
}

LeakSymbols::LeakSymbols(const ProcMaps& maps, const LeakGroups& groups, size_t groups_needed,
                         bool standard_debuginfo_search) {
  MmapArray<char> wanted;
  CollectSymbolizedMaps(maps, groups, groups_needed, &wanted);
  pprof::SymbolSearch search;
  search.standard_search = standard_debuginfo_search;
  // No warnings asked for: a missing file only costs its names ("module+0x..."), and at -O0
  // a warning destroyed here would call libstdc++'s std::allocator<char> destructor, which a
  // C program never loads (alloc/internal/cxx_runtime_weak.h).
  // Never elfutils' client in here: it would load libcurl/OpenSSL into the checked program,
  // whose own copies may be torn down already (profiler/symbolize/local_debuginfo.h).
  search.debuginfod = pprof::DebuginfodClient::kHelperProcess;
  symbolizer_ = pprof::Symbolizer::FromMaps(std::string_view(wanted.data(), wanted.size()),
                                            search, nullptr);
}

}  // namespace heapkit::check
