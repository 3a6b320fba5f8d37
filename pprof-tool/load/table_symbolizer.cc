#include "pprof-tool/load/table_symbolizer.h"

#include <cinttypes>
#include <cstdio>

namespace heapkit::pprof {
namespace {

class TableSymbolizer final : public Symbolizer {
 public:
  explicit TableSymbolizer(const std::vector<EmbeddedSymbol>& symbols) {
    for (const EmbeddedSymbol& s : symbols) {
      std::vector<SourceFrame> frames;
      for (size_t i = 0; i < s.frames.size(); ++i) {
        SourceFrame f;
        f.function = s.frames[i];
        f.inlined = i + 1 < s.frames.size();
        frames.push_back(std::move(f));
      }
      if (!frames.empty()) table_[s.pc] = std::move(frames);
    }
  }
  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    // The pipeline asks for return address - 1. Tables written by pprof-tool --raw hold that
    // key; older ones (and other writers) may hold only the return address itself.
    auto it = table_.find(pc);
    if (it != table_.end()) return it->second;
    it = table_.find(pc + 1);
    if (it != table_.end()) return it->second;
    it = unknown_.find(pc);
    if (it != unknown_.end()) return it->second;
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIx64, pc);
    SourceFrame f;
    f.function = buf;
    return unknown_.emplace(pc, std::vector<SourceFrame>{f}).first->second;
  }

 private:
  std::unordered_map<uint64_t, std::vector<SourceFrame>> table_;
  std::unordered_map<uint64_t, std::vector<SourceFrame>> unknown_;  // kept apart from table_
};

}  // namespace

std::unique_ptr<Symbolizer> MakeTableSymbolizer(const std::vector<EmbeddedSymbol>& symbols) {
  return std::make_unique<TableSymbolizer>(symbols);
}

}  // namespace heapkit::pprof
