#include "heapcheck/leak_symbols.h"

#include <span>
#include <string_view>

#include "profiler/format/unloaded_modules.h"

namespace heapkit::check {
namespace {

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
      const MapsLine* e = maps.Find(groups.Stack(r)[d]);
      if (e != nullptr) (*keep)[static_cast<size_t>(e - &maps[0])] = 1;
    }
  }
  for (size_t i = 0; i < maps.size(); ++i) {
    if ((*keep)[i] != 1 || maps[i].path.empty()) continue;
    for (size_t j = 0; j < maps.size(); ++j)
      if (!(*keep)[j] && maps[j].path == maps[i].path) (*keep)[j] = 2;
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
    const char* end = maps[i].path.data() + maps[i].path.size();
    const char* begin = maps[i].path.data();
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
  // Parsed once the text is complete: each entry's path points into it.
  MmapArray<MapsLine> mappings;
  std::string_view text(wanted.data(), wanted.size());
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end == std::string_view::npos) end = text.size();
    MapsLine m;
    if (ParseMapsLine(std::string_view(text.data(), end), &m)) mappings.PushBack(m);
    text.remove_prefix(end < text.size() ? end + 1 : end);
  }
  pprof::SymbolSearch search;
  search.standard_search = standard_debuginfo_search;
  // No warnings asked for: a missing file only costs its names ("module+0x..."), and at -O0
  // a warning destroyed here would call libstdc++'s std::allocator<char> destructor, which a
  // C program never loads (alloc/internal/cxx_runtime_weak.h).
  // Never elfutils' client in here: it would load libcurl/OpenSSL into the checked program,
  // whose own copies may be torn down already (profiler/symbolize/local_debuginfo.h).
  search.debuginfod = pprof::DebuginfodClient::kHelperProcess;
  symbolizer_ = pprof::Symbolizer::ForMappings(
      std::span<const MapsLine>(mappings.data(), mappings.size()), search, nullptr);
}

}  // namespace heapkit::check
