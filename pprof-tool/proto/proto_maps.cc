#include "pprof-tool/proto/proto_maps.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace heapkit::pprof {
namespace {

constexpr uint64_t kPage = 4096;

void AppendSegment(const Mapping& m, uint64_t start, uint64_t limit, bool code, uint64_t offset,
                   std::vector<Mapping>* out) {
  Mapping segment = m;
  segment.start = start;
  segment.limit = limit;
  segment.offset = offset;
  segment.perms = code ? "r-xp" : "r--p";
  out->push_back(std::move(segment));
}

// The mapping cut into the file's loadable segments; false if the file gives none.
bool AppendSegments(const Mapping& m, std::vector<Mapping>* out) {
  if (m.path.empty() || m.path[0] != '/') return false;
  int fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool any = false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    size_t n = 0;
    if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
      for (size_t i = 0; i < n; ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0) continue;
        // Pages of the file the kernel maps for this segment.
        const uint64_t first = ph.p_offset & ~(kPage - 1);
        const uint64_t end = (ph.p_offset + ph.p_filesz + kPage - 1) & ~(kPage - 1);
        if (first < m.offset || first - m.offset >= m.limit - m.start) continue;
        const uint64_t start = m.start + (first - m.offset);
        const uint64_t limit = std::min<uint64_t>(m.limit, start + (end - first));
        AppendSegment(m, start, limit, (ph.p_flags & PF_X) != 0, first, out);
        any = true;
      }
    }
    if (elf) elf_end(elf);
  }
  close(fd);
  return any;
}

}  // namespace

std::vector<Mapping> SegmentsOfProtoMappings(const std::vector<Mapping>& mappings) {
  std::vector<Mapping> segments;
  for (const Mapping& m : mappings) {
    if (m.limit <= m.start) continue;
    if (!AppendSegments(m, &segments)) {
      AppendSegment(m, m.start, m.limit, true, m.offset, &segments);
    }
  }
  return segments;
}

}  // namespace heapkit::pprof
