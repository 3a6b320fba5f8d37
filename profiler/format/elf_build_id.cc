#include "profiler/format/elf_build_id.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

namespace heapkit::prof {
namespace {

bool ReadAt(int fd, void* out, size_t n, off_t offset) {
  return pread(fd, out, n, offset) == static_cast<ssize_t>(n);
}

// Scans one PT_NOTE segment's notes for the build ID.
bool BuildIdInNotes(const unsigned char* notes, size_t size, char* hex, size_t hex_size) {
  size_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr nh;
    memcpy(&nh, notes + at, sizeof(nh));
    const size_t name_at = at + sizeof(nh);
    const size_t desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
    if (desc_at + nh.n_descsz > size) return false;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
        memcmp(notes + name_at, "GNU", 4) == 0 && nh.n_descsz * 2 < hex_size) {
      static const char kDigits[] = "0123456789abcdef";
      for (size_t i = 0; i < nh.n_descsz; ++i) {
        hex[2 * i] = kDigits[notes[desc_at + i] >> 4];
        hex[2 * i + 1] = kDigits[notes[desc_at + i] & 15];
      }
      hex[2 * nh.n_descsz] = '\0';
      return true;
    }
    at = desc_at + ((nh.n_descsz + 3) & ~3u);
  }
  return false;
}

}  // namespace

bool ReadElfBuildIdHex(const char* path, char* hex, size_t hex_size) {
  if (hex_size > 0) hex[0] = '\0';
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  Elf64_Ehdr eh;
  bool found = false;
  if (ReadAt(fd, &eh, sizeof(eh), 0) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
    for (int i = 0; i < eh.e_phnum && i < 64 && !found; ++i) {
      Elf64_Phdr ph;
      if (!ReadAt(fd, &ph, sizeof(ph), static_cast<off_t>(eh.e_phoff + i * sizeof(ph)))) break;
      if (ph.p_type != PT_NOTE) continue;
      unsigned char notes[1024];
      const size_t n = ph.p_filesz < sizeof(notes) ? ph.p_filesz : sizeof(notes);
      if (ReadAt(fd, notes, n, static_cast<off_t>(ph.p_offset))) {
        found = BuildIdInNotes(notes, n, hex, hex_size);
      }
    }
  }
  close(fd);
  return found;
}

}  // namespace heapkit::prof
