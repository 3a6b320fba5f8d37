#include "pprof-tool/proto/profile_symbolizer.h"

#include <unordered_map>

#include "pprof-tool/proto/proto_maps.h"
#include "pprof-tool/report/pipeline.h"

namespace heapkit::pprof {
namespace {

class EmbeddedThenMapsSymbolizer final : public Symbolizer {
 public:
  EmbeddedThenMapsSymbolizer(const Profile& profile, const std::string& program,
                             const std::vector<std::string>& symbol_path,
                             std::vector<std::string>* warnings)
      : profile_(profile), program_(program), symbol_path_(symbol_path), warnings_(warnings) {
    for (const EmbeddedSymbol& s : profile.symbols) {
      std::vector<SourceFrame> frames;
      for (size_t i = 0; i < s.frames.size(); ++i) {
        SourceFrame f;
        f.function = s.frames[i];
        if (i < s.files.size()) f.file = s.files[i];
        if (i < s.lines.size()) f.line = s.lines[i];
        if (i < s.start_lines.size()) f.start_line = s.start_lines[i];
        f.inlined = i + 1 < s.frames.size();
        f.module = s.module;
        frames.push_back(std::move(f));
      }
      if (!frames.empty()) table_.emplace(s.pc, std::move(frames));
    }
  }

  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    auto it = table_.find(pc);
    if (it != table_.end()) return it->second;
    if (!maps_) {
      Profile maps_only;  // same mappings, no embedded symbols: libdwfl over the maps
      maps_only.file = profile_.file;
      maps_only.mappings = SegmentsOfProtoMappings(profile_.mappings);
      maps_ = MakeSymbolizer(maps_only, program_, symbol_path_, warnings_);
    }
    return maps_->Symbolize(pc);
  }

 private:
  const Profile& profile_;
  std::string program_;
  std::vector<std::string> symbol_path_;
  std::vector<std::string>* warnings_;
  std::unordered_map<uint64_t, std::vector<SourceFrame>> table_;
  std::unique_ptr<Symbolizer> maps_;
};

}  // namespace

std::unique_ptr<Symbolizer> MakeProfileSymbolizer(const Profile& profile,
                                                  const std::string& program,
                                                  const std::vector<std::string>& symbol_path,
                                                  std::vector<std::string>* warnings) {
  if (!profile.symbols_partial) return MakeSymbolizer(profile, program, symbol_path, warnings);
  return std::make_unique<EmbeddedThenMapsSymbolizer>(profile, program, symbol_path, warnings);
}

}  // namespace heapkit::pprof
