// The GNU build ID of an ELF file on disk, as lowercase hex (profile.proto's Mapping.build_id,
// by which go pprof, Parca, debuginfod and pprof-tool find a mapping's symbols). The one reader
// for the runtime's profile files, the HTTP endpoint, /metrics and pprof-tool.
//
// Header-only, libc-only and malloc-free (pread into stack buffers), so the runtime may call it
// while a dump runs inside an allocation. Only the program headers' PT_NOTE segments are read:
// every linked object has them, stripped or not. 64-bit ELF only (the platforms heapkit runs
// on); files that are not regular (a device or FIFO named by a mapping) are not read.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <string>

namespace heapkit::pprof {
namespace build_id_internal {

inline bool ReadAt(int fd, void* out, size_t n, off_t offset) {
  return pread(fd, out, n, offset) == static_cast<ssize_t>(n);
}

// Scans one PT_NOTE segment's notes for NT_GNU_BUILD_ID.
inline bool FindInNotes(const unsigned char* notes, size_t size, char* hex, size_t hex_size) {
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

}  // namespace build_id_internal

// `path`'s build ID into hex (NUL-terminated); false (hex = "") if the file cannot be read, is
// not a regular 64-bit ELF file, has no build ID or hex_size is too small for it.
inline bool ReadElfBuildIdHex(const char* path, char* hex, size_t hex_size) {
  if (hex_size > 0) hex[0] = '\0';
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  Elf64_Ehdr eh;
  bool found = false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      build_id_internal::ReadAt(fd, &eh, sizeof(eh), 0) &&
      memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
      eh.e_phentsize == sizeof(Elf64_Phdr)) {
    for (int i = 0; i < eh.e_phnum && i < 64 && !found; ++i) {
      Elf64_Phdr ph;
      const off_t at = static_cast<off_t>(eh.e_phoff + i * sizeof(ph));
      if (!build_id_internal::ReadAt(fd, &ph, sizeof(ph), at)) break;
      if (ph.p_type != PT_NOTE) continue;
      unsigned char notes[1024];
      const size_t n = ph.p_filesz < sizeof(notes) ? ph.p_filesz : sizeof(notes);
      if (build_id_internal::ReadAt(fd, notes, n, static_cast<off_t>(ph.p_offset))) {
        found = build_id_internal::FindInNotes(notes, n, hex, hex_size);
      }
    }
  }
  close(fd);
  return found;
}

// The same as a string ("" when there is none), for code that may allocate.
inline std::string ReadBuildIdHex(const std::string& path) {
  char hex[2 * 64 + 1];  // build IDs are 20 bytes (SHA-1); longer than 64 bytes: none
  ReadElfBuildIdHex(path.c_str(), hex, sizeof(hex));
  return hex;
}

}  // namespace heapkit::pprof
