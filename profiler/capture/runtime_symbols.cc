#include "profiler/capture/runtime_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "alloc/common.h"

namespace heapkit::prof {
namespace {

struct Range {
  uintptr_t lo, hi;
};

Range* g_ranges = nullptr;
std::atomic<int> g_num_ranges{0};
bool g_from_symtab = false;

bool StartsWith(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// `name` equals `base` or is a GCC clone of it (`base.part.0`, `base.cold`, ...).
bool IsNameOrClone(const char* name, const char* base) {
  size_t n = strlen(base);
  return strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

const char* const kEntryPoints[] = {
    "malloc",       "free",        "calloc",         "realloc",
    "reallocarray", "memalign",    "posix_memalign", "aligned_alloc",
    "valloc",       "pvalloc",     "cfree",          "malloc_usable_size",
    "malloc_size",  "sdallocx",    "mallinfo",       "mallinfo2",
    "mallopt",      "malloc_trim", "malloc_stats",
};

const char* const kPrefixes[] = {
    "_ZN7heapkit",   // everything in namespace heapkit (incl. templates, anonymous namespaces)
    "_ZZN7heapkit",  // lambdas and local statics of heapkit functions
    "_ZNK7heapkit",  // const member functions
    "__libc_",       // glibc-compatible allocation aliases
    "tc_",           // gperftools-compatible C API
    "heapkit_",      // heapkit's own C API
    "_Znwm",         // operator new (all overloads)
    "_Znam",         // operator new[]
    "_ZdlPv",        // operator delete
    "_ZdaPv",        // operator delete[]
};

template <typename T>
const T* At(const char* base, size_t size, uint64_t off, uint64_t count = 1) {
  if (off > size || count > (size - off) / sizeof(T)) return nullptr;
  return reinterpret_cast<const T*>(base + off);
}

}  // namespace

bool IsRuntimeSymbolName(const char* name) {
  if (name == nullptr || name[0] == '\0') return false;
  for (const char* p : kPrefixes)
    if (StartsWith(name, p)) return true;
  for (const char* e : kEntryPoints)
    if (IsNameOrClone(name, e)) return true;
  return false;
}

int LoadRuntimeSymbolRanges(const char* path, uintptr_t bias) {
  if (g_num_ranges.load(std::memory_order_acquire) > 0) return g_num_ranges.load();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(ElfW(Ehdr)))) {
    close(fd);
    return 0;
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return 0;
  const char* base = static_cast<const char*>(map);
  int result = 0;
  do {
    auto* eh = At<ElfW(Ehdr)>(base, size, 0);
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(ElfW(Shdr)))
      break;
    auto* sh = At<ElfW(Shdr)>(base, size, eh->e_shoff, eh->e_shnum);
    if (sh == nullptr) break;
    // .symtab if present (every function), else .dynsym (exported ones only).
    const ElfW(Shdr)* symtab = nullptr;
    bool full = false;
    for (int pass = 0; pass < 2 && symtab == nullptr; ++pass)
      for (int i = 0; i < eh->e_shnum; ++i)
        if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) {
          symtab = &sh[i];
          full = pass == 0;
          break;
        }
    if (symtab == nullptr || symtab->sh_link >= eh->e_shnum ||
        symtab->sh_entsize != sizeof(ElfW(Sym)))
      break;
    const ElfW(Shdr)& strsec = sh[symtab->sh_link];
    uint64_t nsyms = symtab->sh_size / sizeof(ElfW(Sym));
    auto* syms = At<ElfW(Sym)>(base, size, symtab->sh_offset, nsyms);
    auto* strs = At<char>(base, size, strsec.sh_offset, strsec.sh_size);
    if (syms == nullptr || strs == nullptr || strsec.sh_size == 0) break;
    auto name_of = [&](const ElfW(Sym) & s) -> const char* {
      if (s.st_name >= strsec.sh_size) return nullptr;
      // The string table ends in NUL (checked below), so names are terminated.
      return strs + s.st_name;
    };
    if (strs[strsec.sh_size - 1] != '\0') break;
    auto wanted = [&](const ElfW(Sym) & s) {
      return ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_shndx != SHN_UNDEF && s.st_size > 0 &&
             IsRuntimeSymbolName(name_of(s));
    };
    uint64_t count = 0;
    for (uint64_t i = 0; i < nsyms; ++i) count += wanted(syms[i]);
    if (count == 0) break;
    size_t bytes = (count * sizeof(Range) + 4095) & ~size_t{4095};
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) break;
    auto* ranges = static_cast<Range*>(mem);
    uint64_t n = 0;
    for (uint64_t i = 0; i < nsyms; ++i)
      if (wanted(syms[i]))
        ranges[n++] = {bias + syms[i].st_value, bias + syms[i].st_value + syms[i].st_size};
    std::sort(ranges, ranges + n, [](const Range& a, const Range& b) { return a.lo < b.lo; });
    // Merge overlapping/adjacent ranges (aliases such as malloc/__libc_malloc share code).
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (m > 0 && ranges[i].lo <= ranges[m - 1].hi) {
        ranges[m - 1].hi = std::max(ranges[m - 1].hi, ranges[i].hi);
      } else {
        ranges[m++] = ranges[i];
      }
    }
    g_ranges = ranges;
    g_from_symtab = full;
    result = static_cast<int>(m);
    g_num_ranges.store(result, std::memory_order_release);
  } while (false);
  munmap(map, size);
  return result;
}

bool RuntimeSymbolsFromSymtab() { return g_from_symtab; }

int NumRuntimeSymbolRanges() { return g_num_ranges.load(std::memory_order_acquire); }

HEAPKIT_ALWAYS_RUN_CODE bool InRuntimeSymbolRange(uintptr_t pc) {
  int n = g_num_ranges.load(std::memory_order_acquire);
  if (n == 0 || pc == 0) return false;
  uintptr_t v = pc - 1;
  // Last range whose lo <= v.
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (g_ranges[mid].lo <= v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 0 && v < g_ranges[lo - 1].hi;
}

}  // namespace heapkit::prof
