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

namespace heapkit::pprof {
namespace {

std::string Basename(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string MapsLine(const Mapping& m, const std::string& path) {
  char buf[128];
  snprintf(buf, sizeof buf, "%" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " 00:00 0    ", m.start,
           m.limit, m.perms.empty() ? "r-xp" : m.perms.c_str(), m.offset);
  return buf + path + "\n";
}

// Maps text for a binary given without a memory map: its PT_LOAD segments at link addresses.
std::string SyntheticMaps(const std::string& program, std::vector<std::string>* warnings) {
  std::string text;
  int fd = open(program.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (warnings) warnings->push_back(program + ": cannot open; addresses are not symbolized");
    return text;
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr eh;
  if (elf && gelf_getehdr(elf, &eh)) {
    if (eh.e_type == ET_DYN && warnings) {
      warnings->push_back(program + ": position-independent executable and the profile has no "
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
      text += MapsLine(m, program);
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return text;
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
      maps_only.maps_text = MapsTextForProtoMappings(profile_.mappings);
      std::unordered_map<std::string, std::string> build_ids;
      for (const Mapping& m : profile_.mappings) {
        if (!m.build_id.empty()) build_ids.emplace(m.path, m.build_id);
      }
      size_t at = 0;  // the same lines as mappings (MakeSymbolizer substitutes `program` in them)
      while (at < maps_only.maps_text.size()) {
        size_t end = maps_only.maps_text.find('\n', at);
        Mapping m;
        if (ParseMapsLine(std::string_view(maps_only.maps_text).substr(at, end - at), &m)) {
          auto id = build_ids.find(m.path);
          if (id != build_ids.end()) m.build_id = id->second;
          maps_only.mappings.push_back(std::move(m));
        }
        at = end + 1;
      }
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
      warnings->push_back(profile.file + ": no memory map (MAPPED_LIBRARIES) and no program "
                          "given; addresses are not symbolized");
    }
    return Symbolizer::FromMaps(profile.maps_text, search, warnings);
  }
  char resolved[PATH_MAX];
  std::string prog = realpath(program.c_str(), resolved) ? std::string(resolved) : program;
  if (profile.mappings.empty()) {
    return Symbolizer::FromMaps(SyntheticMaps(prog, warnings), search, warnings);
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
  std::string text;
  for (const Mapping& m : profile.mappings) {
    text += MapsLine(m, m.path == target ? prog : m.path);
  }
  auto target_id = search.build_ids.find(target);
  if (target_id != search.build_ids.end()) search.build_ids[prog] = target_id->second;
  return Symbolizer::FromMaps(text, search, warnings);
}

std::unique_ptr<Symbolizer> MakeProfileSymbolizer(const Profile& profile,
                                                  const std::string& program,
                                                  const std::vector<std::string>& symbol_path,
                                                  std::vector<std::string>* warnings) {
  if (!profile.symbols_partial) return MakeSymbolizer(profile, program, symbol_path, warnings);
  return std::make_unique<EmbeddedThenMapsSymbolizer>(profile, program, symbol_path, warnings);
}

}  // namespace heapkit::pprof
