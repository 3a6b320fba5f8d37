#include "pprof-tool/load/symbolizer_choice.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "pprof-tool/load/table_symbolizer.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/proto/proto_maps.h"
#include "profiler/symbolize/file_name.h"

namespace heapkit::pprof {
namespace {

// The symbolizer's view of a mapping, named `path` (both must outlive the view). A mapping
// without permissions (profile.proto keeps none) is taken for code.
MapsLine ViewOf(const Mapping& m, std::string_view path) {
  MapsLine v;
  v.start = m.start;
  v.limit = m.limit;
  v.offset = m.offset;
  v.perms = m.perms.empty() ? std::string_view("r-xp") : std::string_view(m.perms);
  v.readable = v.perms[0] == 'r';
  v.writable = v.perms.size() > 1 && v.perms[1] == 'w';
  v.executable = v.perms.size() > 2 && v.perms[2] == 'x';
  v.path = path;
  return v;
}

// The views of `mappings`, those named `target` renamed to `program`. Empty ranges (a
// profile.proto may hold them) map nothing and are left out.
std::vector<MapsLine> ViewsOf(const std::vector<Mapping>& mappings, const std::string& target,
                              const std::string& program) {
  std::vector<MapsLine> views;
  views.reserve(mappings.size());
  for (const Mapping& m : mappings) {
    if (m.limit > m.start) views.push_back(ViewOf(m, m.path == target ? program : m.path));
  }
  return views;
}

// The mappings of a binary given without a memory map: its PT_LOAD segments at link addresses.
std::vector<Mapping> SyntheticMappings(const std::string& program,
                                       std::vector<std::string>* warnings) {
  std::vector<Mapping> segments;
  int fd = open(program.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (warnings) warnings->push_back(program + ": cannot open; addresses are not symbolized");
    return segments;
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr eh;
  if (elf && gelf_getehdr(elf, &eh)) {
    if (eh.e_type == ET_DYN && warnings) {
      warnings->push_back(program +
                          ": position-independent executable and the profile has no "
                          "memory map; assuming it was loaded at address 0");
    }
    size_t n = 0;
    if (elf_getphdrnum(elf, &n) != 0) n = 0;
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_LOAD) continue;
      Mapping m;
      m.start = ph.p_vaddr & ~uint64_t(4095);
      m.limit = ph.p_vaddr + ph.p_memsz;
      m.offset = ph.p_offset & ~uint64_t(4095);
      // Code is mapped like the kernel does it (whole pages of the file): the symbolizer
      // checks executable mappings against their segments to detect changed binaries.
      if (ph.p_flags & PF_X)
        m.limit = m.start + (((ph.p_offset + ph.p_filesz + 4095) & ~uint64_t(4095)) - m.offset);
      m.perms = (ph.p_flags & PF_X) ? "r-xp" : "r--p";
      m.path = program;
      segments.push_back(std::move(m));
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return segments;
}

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

std::unique_ptr<Symbolizer> MakeSymbolizer(const Profile& profile, const std::string& program,
                                           const std::vector<std::string>& symbol_path,
                                           std::vector<std::string>* warnings) {
  if (!profile.symbols.empty()) return MakeTableSymbolizer(profile.symbols);
  SymbolSearch search;
  search.dirs = symbol_path;
  for (const Mapping& m : profile.mappings) {
    if (!m.build_id.empty() && !m.path.empty()) search.build_ids.emplace(m.path, m.build_id);
  }
  if (program.empty()) {
    if (profile.mappings.empty() && warnings) {
      warnings->push_back(profile.file +
                          ": no memory map (MAPPED_LIBRARIES) and no program "
                          "given; addresses are not symbolized");
    }
    return Symbolizer::ForMappings(ViewsOf(profile.mappings, "", ""), search, warnings);
  }
  char resolved[PATH_MAX];
  std::string prog = realpath(program.c_str(), resolved) ? std::string(resolved) : program;
  if (profile.mappings.empty()) {
    const std::vector<Mapping> segments = SyntheticMappings(prog, warnings);
    return Symbolizer::ForMappings(ViewsOf(segments, "", ""), search, warnings);
  }
  // Substitute the given binary for the main executable's mapping lines.
  std::string target;
  for (const Mapping& m : profile.mappings) {
    if (!m.path.empty() && m.path[0] == '/' && Basename(m.path) == Basename(prog)) {
      target = m.path;
      break;
    }
  }
  if (target.empty()) {
    for (const Mapping& m : profile.mappings) {
      if (!m.path.empty() && m.path[0] == '/') {
        target = m.path;
        break;
      }
    }
  }
  auto target_id = search.build_ids.find(target);
  if (target_id != search.build_ids.end()) search.build_ids[prog] = target_id->second;
  return Symbolizer::ForMappings(ViewsOf(profile.mappings, target, prog), search, warnings);
}

std::unique_ptr<Symbolizer> MakeProfileSymbolizer(const Profile& profile,
                                                  const std::string& program,
                                                  const std::vector<std::string>& symbol_path,
                                                  std::vector<std::string>* warnings) {
  if (!profile.symbols_partial) return MakeSymbolizer(profile, program, symbol_path, warnings);
  return std::make_unique<EmbeddedThenMapsSymbolizer>(profile, program, symbol_path, warnings);
}

}  // namespace heapkit::pprof
