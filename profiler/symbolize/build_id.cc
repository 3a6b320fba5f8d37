#include "profiler/symbolize/build_id.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit::pprof {
namespace {

std::string Hex(const unsigned char* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s;
}

// Searches the note segments (present in every linked object, stripped or not).
std::string FromNotes(Elf* elf) {
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0) return "";
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_NOTE) continue;
    Elf_Data* data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
    if (data == nullptr) continue;
    size_t off = 0, name_off = 0, desc_off = 0;
    GElf_Nhdr nh;
    while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
      const char* name = static_cast<const char*>(data->d_buf) + name_off;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::string(name, 3) == "GNU") {
        return Hex(static_cast<const unsigned char*>(data->d_buf) + desc_off, nh.n_descsz);
      }
    }
  }
  return "";
}

}  // namespace

std::string ReadBuildIdHex(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // a device or FIFO named by a mapping
    close(fd);
    return "";
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  std::string id = elf && elf_kind(elf) == ELF_K_ELF ? FromNotes(elf) : "";
  if (elf) elf_end(elf);
  close(fd);
  return id;
}

}  // namespace heapkit::pprof
