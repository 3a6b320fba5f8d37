// Symbolizer::ForMappings — libdwfl over a process's memory map, as saved in a profile or read
// from a live /proc/<pid>/maps.
//
// The profiled process may be gone, so modules are reported from the mappings ourselves: for
// each file-backed mapping we open the ELF file, find the PT_LOAD segment holding the mapping's
// file offset and derive the load bias (runtime address - link-time address). That works the
// same for PIE/non-PIE executables and shared libraries. The file is the first of
// CandidateFiles (binary_lookup.h: the symbol path by build-id and by base name, then the
// recorded path) that fits: the build-id the profile recorded, when it has one, and the
// mapping's segments. Modules are reported with dwfl_report_elf under the recorded path;
// the find_debuginfo callback then finds separate debug info by build-id under the symbol
// path and /usr/lib/debug, by .gnu_debuglink, and through debuginfod only when asked
// (SymbolSearch::standard_search and ::debuginfod; local_debuginfo.h). Lookups go through
// ModuleIndex (sorted symbols, per-CU inline index; built for a module on the first lookup in it)
// and a per-PC cache.
//
// Skipped: anonymous mappings, [vdso]/[heap]/[stack], /dev/*, memfd:, "(deleted)" files, and
// (with a warning) anything that is not a regular file once opened: a FIFO, or a link to a
// device or to /proc/self/fd/N, is never read.
// When no candidate fits — missing, a different build-id, segments that do not match the
// mapping — one warning names the first refusal and addresses get "module+0xoffset" names; a
// file that is not ELF is skipped silently.
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "alloc/internal/safe_file.h"
#include "profiler/symbolize/binary_lookup.h"
#include "profiler/symbolize/local_debuginfo.h"
#include "profiler/symbolize/module_index.h"
#include "profiler/symbolize/symbolizer.h"
#include "profiler/symbolize/file_name.h"

namespace heapkit::pprof {
namespace {

struct MapLine {
  uint64_t start = 0, limit = 0, offset = 0;
  bool exec = false;
  std::string path;
};

MapLine FromMapsLine(const MapsLine& m) {
  return MapLine{m.start, m.limit, m.offset, m.executable, std::string(m.path)};
}

bool Symbolizable(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;  // anonymous, [vdso], [heap], memfd:...
  if (path.compare(0, 5, "/dev/") == 0) return false;
  if (path.find(" (deleted)") != std::string::npos) return false;
  if (path.compare(0, 6, "/memfd") == 0 || path.compare(0, 5, "/SYSV") == 0) return false;
  return true;
}

std::string Hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// Mapped data files that are not ELF (locale archives, gconv-modules.cache, fonts: never
// mapped executable) are skipped without a warning; an executable mapping of a non-ELF file is
// a replaced binary and gets its warning.
constexpr const char* kNotElf = "not an ELF file";

std::string BuildIdHex(Elf* elf) {
  const void* bits = nullptr;
  const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
  std::string hex;
  for (ssize_t i = 0; i < n; ++i) {
    char b[3];
    snprintf(b, sizeof b, "%02x", static_cast<const unsigned char*>(bits)[i]);
    hex += b;
  }
  return hex;
}

constexpr uint64_t kPage = 4096;

// The file's PT_LOAD segments.
std::vector<GElf_Phdr> LoadSegments(Elf* elf) {
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) phnum = 0;
  std::vector<GElf_Phdr> loads;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, int(i), &ph) && ph.p_type == PT_LOAD) loads.push_back(ph);
  }
  return loads;
}

// The mappings that decide the bias. Only executable mappings: a RELRO mapping shares its file
// page with the preceding read-only segment, so data mappings are ambiguous. Without any
// executable mapping (odd maps), the first line.
std::vector<const MapLine*> BiasDecidingLines(const std::vector<const MapLine*>& lines) {
  std::vector<const MapLine*> exec_lines;
  for (const MapLine* m : lines) {
    if (m->exec) exec_lines.push_back(m);
  }
  if (exec_lines.empty() && !lines.empty()) exec_lines.push_back(lines.front());
  return exec_lines;
}

// The segment whose file range holds the mapping's offset (an executable one for an executable
// mapping), or null.
const GElf_Phdr* SegmentOf(const MapLine& m, const std::vector<GElf_Phdr>& loads) {
  for (const GElf_Phdr& ph : loads) {
    const uint64_t lo = ph.p_offset & ~(kPage - 1);
    if (m.exec && !(ph.p_flags & PF_X)) continue;
    if (m.offset >= lo && m.offset < ph.p_offset + std::max<uint64_t>(ph.p_filesz, 1)) return &ph;
  }
  return nullptr;
}

// The load bias that places the file's segments at its mappings `lines`. A different binary at
// the same path can match a mapping's offset by chance (most ELF files start their code at
// 0x1000 or 0x2000): the executable mappings must also cover their segments exactly (the
// kernel maps a PT_LOAD's whole page range), else the file changed and its symbols would give
// wrong names. False when they do not fit (or no mapping decides the bias).
bool BiasFromMappings(const std::vector<GElf_Phdr>& loads, const std::vector<const MapLine*>& lines,
                      uint64_t* bias) {
  bool have_bias = false;
  bool mismatch = false;
  std::map<const GElf_Phdr*, uint64_t> exec_bytes;
  for (const MapLine* m : BiasDecidingLines(lines)) {
    const GElf_Phdr* seg = SegmentOf(*m, loads);
    if (seg == nullptr) {
      if (m->exec) mismatch = true;
      continue;
    }
    if (m->exec) {
      const uint64_t seg_end = (seg->p_offset + seg->p_filesz + kPage - 1) & ~(kPage - 1);
      if (m->offset + (m->limit - m->start) > seg_end) mismatch = true;
      exec_bytes[seg] += m->limit - m->start;
    }
    uint64_t b =
        m->start - ((seg->p_vaddr & ~(kPage - 1)) + (m->offset - (seg->p_offset & ~(kPage - 1))));
    if (!have_bias) {
      *bias = b;
      have_bias = true;
    } else if (b != *bias) {
      mismatch = true;
    }
  }
  for (const auto& [seg, bytes] : exec_bytes) {
    const uint64_t lo = seg->p_offset & ~(kPage - 1);
    const uint64_t hi = (seg->p_offset + seg->p_filesz + kPage - 1) & ~(kPage - 1);
    if (bytes != hi - lo) mismatch = true;
  }
  return have_bias && !mismatch;
}

// Opens `path` and computes its load bias given its mapping lines; when `build_id` is not
// empty the file's build-id must equal it. Returns the open descriptor, or -1 with *why set.
int OpenMatching(const std::string& path, const std::vector<const MapLine*>& lines,
                 const std::string& build_id, uint64_t* bias, std::string* why) {
  int err = 0;
  const int fd = internal::OpenRegularFile(path.c_str(), &err);
  if (fd < 0) {
    *why = err == EINVAL ? std::string("not a regular file")
                         : std::string("cannot open (") + strerror(err) + ")";
    return -1;
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  bool ok = false;
  std::string id;
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    *why = kNotElf;
  } else if (!build_id.empty() && (id = BuildIdHex(elf)) != build_id) {
    *why = "build-id " + (id.empty() ? std::string("(none)") : id) + " differs from the " +
           "profile's " + build_id;
  } else if (const std::vector<GElf_Phdr> loads = LoadSegments(elf); loads.empty()) {
    *why = "has no loadable segments";
  } else if (!BiasFromMappings(loads, lines, bias)) {
    *why = "does not match the profile's memory map (changed since the profile was taken?)";
  } else {
    ok = true;
  }
  if (elf) elf_end(elf);
  if (ok) return fd;
  close(fd);
  return -1;
}

class DwflSymbolizer final : public Symbolizer {
 public:
  explicit DwflSymbolizer(const SymbolSearch& search)
      : search_(search), debuginfo_path_(DebuginfoPath(search.dirs)) {
    callbacks_.find_elf = dwfl_build_id_find_elf;
    // Never dwfl_standard_find_debuginfo directly: it loads elfutils' debuginfod client (and
    // libcurl, OpenSSL...) for any module without local debug info (local_debuginfo.h).
    callbacks_.find_debuginfo =
        search.standard_search ? FindDebuginfoWithoutClient : dwfl_build_id_find_debuginfo;
    local_search_.debuginfod = search.debuginfod;
    for (const std::string& dir : search.dirs) {
      if (!dir.empty() && dir[0] == '/') local_search_.debug_dirs.push_back(dir);
    }
    local_search_.debug_dirs.push_back("/usr/lib/debug");
    callbacks_.section_address = dwfl_offline_section_address;
    debuginfo_path_ptr_ = debuginfo_path_.data();
    callbacks_.debuginfo_path = &debuginfo_path_ptr_;
    dwfl_ = dwfl_begin(&callbacks_);
  }
  ~DwflSymbolizer() override {
    modules_.clear();
    if (dwfl_) dwfl_end(dwfl_);
  }

  void Init(std::span<const MapsLine> mappings, std::vector<std::string>* warnings) {
    std::vector<MapLine> lines;
    lines.reserve(mappings.size());
    for (const MapsLine& m : mappings) lines.push_back(FromMapsLine(m));
    std::map<std::string, std::vector<const MapLine*>> by_path;
    std::vector<std::string> order;
    for (const MapLine& m : lines) {
      if (!Symbolizable(m.path)) continue;
      auto& v = by_path[m.path];
      if (v.empty()) order.push_back(m.path);
      v.push_back(&m);
    }
    if (dwfl_) dwfl_report_begin(dwfl_);
    std::unordered_map<std::string, int> module_of_path;
    std::vector<std::pair<Dwfl_Module*, std::string>> reported;
    for (const std::string& path : order) {
      uint64_t bias = 0;
      std::string why, refused;
      int index = -1;
      auto id = search_.build_ids.find(path);
      const std::string build_id = id == search_.build_ids.end() ? std::string() : id->second;
      for (const std::string& file : CandidateFiles(path, build_id, search_.dirs)) {
        std::string why_not;
        const int fd = OpenMatching(file, by_path[path], build_id, &bias, &why_not);
        if (fd < 0) {
          // A symbol-path candidate that is absent is not worth a word; one that is there but
          // does not fit is (it is what the user pointed at).
          if (refused.empty() && (file == path || why_not.compare(0, 11, "cannot open") != 0)) {
            refused = file;
            why = why_not;
          }
          continue;
        }
        Dwfl_Module* mod =
            dwfl_ ? dwfl_report_elf(dwfl_, path.c_str(), file.c_str(), fd, bias, true) : nullptr;
        if (mod == nullptr) {
          close(fd);
          if (refused.empty()) {
            refused = file;
            why = std::string("cannot be loaded (") + dwfl_errmsg(-1) + ")";
          }
          continue;
        }
        void** userdata = nullptr;
        dwfl_module_info(mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
        if (userdata != nullptr) *userdata = &local_search_;
        index = int(reported.size());
        reported.emplace_back(mod, path);
        break;
      }
      const std::vector<const MapLine*>& maps = by_path[path];
      bool executable =
          std::any_of(maps.begin(), maps.end(), [](const MapLine* m) { return m->exec; });
      if (index < 0 && warnings && (why != kNotElf || executable)) {
        warnings->push_back(refused + ": " + why + "; its addresses are shown as " +
                            Basename(path) + "+0x<offset>");
      }
      module_of_path[path] = index;
    }
    if (dwfl_) dwfl_report_end(dwfl_, nullptr, nullptr);
    // Indexed on the first lookup that lands in them (Module): a report that names three frames
    // of libc does not pay for indexing libstdc++ because one of its PCs was mapped.
    reported_ = std::move(reported);
    modules_.resize(reported_.size());
    for (const MapLine& m : lines) {
      if (m.path.empty() || m.path[0] == '[') continue;
      Region r{m.start, m.limit, m.offset, -1, m.path};
      auto it = module_of_path.find(m.path);
      if (it != module_of_path.end()) r.module = it->second;
      regions_.push_back(std::move(r));
    }
    std::sort(regions_.begin(), regions_.end(),
              [](const Region& a, const Region& b) { return a.start < b.start; });
  }

  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    auto it = cache_.find(pc);
    if (it != cache_.end()) return it->second;
    std::vector<SourceFrame> frames;
    LookUp(pc, &frames);
    return cache_.emplace(pc, std::move(frames)).first->second;
  }

  void SymbolizeWithoutCaching(uint64_t pc, std::vector<SourceFrame>* frames) override {
    auto it = cache_.find(pc);
    if (it != cache_.end()) {
      *frames = it->second;
      return;
    }
    frames->clear();
    LookUp(pc, frames);
  }

 private:
  // The frames of pc (never none: a placeholder names an unknown address).
  void LookUp(uint64_t pc, std::vector<SourceFrame>* frames) {
    const Region* region = FindRegion(pc);
    if (region != nullptr && region->module >= 0) {
      Module(size_t(region->module))->Lookup(pc, frames);
    }
    if (frames->empty()) {
      SourceFrame f;
      f.placeholder = true;
      if (region != nullptr) {
        f.function = Basename(region->path) + "+" + Hex(pc - region->start + region->offset);
        f.module = region->path;
      } else {
        f.function = Hex(pc);
      }
      frames->push_back(std::move(f));
    }
  }

  struct Region {
    uint64_t start, limit, offset;
    int module;
    std::string path;
  };

  ModuleIndex* Module(size_t index) {
    std::unique_ptr<ModuleIndex>& m = modules_[index];
    if (m == nullptr) {
      m = std::make_unique<ModuleIndex>(reported_[index].first, reported_[index].second);
    }
    return m.get();
  }

  const Region* FindRegion(uint64_t pc) const {
    auto it = std::upper_bound(regions_.begin(), regions_.end(), pc,
                               [](uint64_t a, const Region& r) { return a < r.start; });
    if (it == regions_.begin()) return nullptr;
    --it;
    return pc < it->limit ? &*it : nullptr;
  }

  const SymbolSearch search_;
  LocalDebuginfoSearch local_search_;  // each module's userdata (FindDebuginfoWithoutClient)
  std::string debuginfo_path_;
  char* debuginfo_path_ptr_ = nullptr;
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
  std::vector<std::pair<Dwfl_Module*, std::string>> reported_;  // by module index
  std::vector<std::unique_ptr<ModuleIndex>> modules_;  // the same; nullptr until first used
  std::vector<Region> regions_;
  std::unordered_map<uint64_t, std::vector<SourceFrame>> cache_;
};

}  // namespace

std::vector<MapsLine> ParseMapsText(std::string_view maps_text) {
  std::vector<MapsLine> lines;
  while (!maps_text.empty()) {
    const size_t end = std::min(maps_text.find('\n'), maps_text.size());
    MapsLine m;
    if (ParseMapsLine(maps_text.substr(0, end), &m)) lines.push_back(m);
    maps_text.remove_prefix(std::min(end + 1, maps_text.size()));
  }
  return lines;
}

std::unique_ptr<Symbolizer> Symbolizer::ForMappings(std::span<const MapsLine> mappings,
                                                    const SymbolSearch& search,
                                                    std::vector<std::string>* warnings) {
  auto s = std::make_unique<DwflSymbolizer>(search);
  s->Init(mappings, warnings);
  return s;
}

}  // namespace heapkit::pprof
