// Every C and C++ allocation entry point is callable, returns usable memory, and pairs with its
// release function; the allocator the ctest flavour names is really the one answering.
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <initializer_list>

#include "probe.h"

extern "C" void* __libc_malloc(size_t);
extern "C" void __libc_free(void*);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void* __libc_memalign(size_t, size_t);

namespace heapkit::probe {
namespace {

void UseBlock(void* p, size_t n, uintptr_t seed) {
  PROBE_CHECK_MSG(p != nullptr, "null for %zu bytes", n);
  Escape(p);
  FillPattern(p, n, seed);
  PROBE_CHECK(FindPatternMismatch(p, n, seed) == n);
  PROBE_CHECK_MSG(malloc_usable_size(p) >= n, "usable %zu < %zu", malloc_usable_size(p), n);
}

const char* ObjectOf(void* fn) {
  Dl_info info{};
  if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

}  // namespace

// The ctest flavour's claim is true: malloc and friends come from the expected library.
PROBE_CASE(identity) {
  void* fn = dlsym(RTLD_DEFAULT, "malloc");
  const char* where = ObjectOf(fn);
  printf("malloc from %s\n", where);
  if (IsStaticFlavour()) {
    // Statically linked: malloc lives in the executable itself and heapkit counts our bytes.
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    PROBE_CHECK(n > 0);
    self[n] = '\0';
    PROBE_CHECK_MSG(strcmp(where, self) == 0, "malloc resolved to %s, not %s", where, self);
    size_t before = Property("generic.current_allocated_bytes");
    void* p = malloc(100000);
    Escape(p);
    size_t after = Property("generic.current_allocated_bytes");
    PROBE_CHECK_MSG(after >= before + 100000, "before %zu after %zu", before, after);
    free(p);
    return;
  }
  switch (Expected()) {
    case Allocator::kGlibc:
      PROBE_CHECK_MSG(strstr(where, "libc.so") != nullptr, "%s", where);
      break;
    case Allocator::kTcmalloc:
      PROBE_CHECK_MSG(strstr(where, "tcmalloc") != nullptr, "%s", where);
      break;
    case Allocator::kHeapkit:
      PROBE_CHECK_MSG(strstr(where, "libheapkit") != nullptr, "%s", where);
      // A packed list of names (clang-format would put them one per line).
      // clang-format off
      for (const char* name : {"free", "calloc", "realloc", "memalign", "posix_memalign",
                               "aligned_alloc", "valloc", "pvalloc", "malloc_usable_size",
                               "reallocarray", "__libc_malloc", "__libc_free", "__libc_calloc",
                               "__libc_realloc", "__libc_memalign", "mallinfo", "mallinfo2",
                               "mallopt", "malloc_trim", "malloc_info", "_Znwm", "_ZdlPv", "_ZdlPvm",
                               "_ZnwmSt11align_val_t", "_ZnamRKSt9nothrow_t"}) {
        // clang-format on
        const char* w = ObjectOf(dlsym(RTLD_DEFAULT, name));
        PROBE_CHECK_MSG(strstr(w, "libheapkit") != nullptr, "%s resolved to %s", name, w);
      }
      break;
  }
}

PROBE_CASE(c_entry_points) {
  void* p = malloc(100);
  UseBlock(p, 100, 1);
  free(p);

  void* z = malloc(0);  // unique, freeable
  void* z2 = malloc(0);
  PROBE_CHECK(z != nullptr && z2 != nullptr && z != z2);
  free(z);
  free(z2);
  free(nullptr);
  PROBE_CHECK(malloc_usable_size(nullptr) == 0);

  auto* c = static_cast<unsigned char*>(calloc(10, 37));
  PROBE_CHECK(c != nullptr);
  for (int i = 0; i < 370; ++i) PROBE_CHECK(c[i] == 0);
  UseBlock(c, 370, 2);
  free(c);

  void* r = realloc(nullptr, 50);  // realloc(NULL, n) == malloc(n)
  UseBlock(r, 50, 3);
  r = realloc(r, 5000);
  PROBE_CHECK(FindPatternMismatch(r, 50, 3) == 50);
  free(r);

  errno = 0;
  void* ra = reallocarray(nullptr, 10, 20);
  UseBlock(ra, 200, 4);
  ra = reallocarray(ra, 100, 20);
  PROBE_CHECK(FindPatternMismatch(ra, 200, 4) == 200);
  free(ra);

  void* m = memalign(64, 100);
  UseBlock(m, 100, 5);
  PROBE_CHECK(reinterpret_cast<uintptr_t>(m) % 64 == 0);
  free(m);

  void* pm = nullptr;
  PROBE_CHECK(posix_memalign(&pm, 256, 1000) == 0);
  UseBlock(pm, 1000, 6);
  PROBE_CHECK(reinterpret_cast<uintptr_t>(pm) % 256 == 0);
  free(pm);
  void* untouched = reinterpret_cast<void*>(0x1234);
  PROBE_CHECK(posix_memalign(&untouched, 24, 10) == EINVAL);  // not a power of two
  PROBE_CHECK(posix_memalign(&untouched, 4, 10) == EINVAL);   // < sizeof(void*)
  PROBE_CHECK(untouched == reinterpret_cast<void*>(0x1234));

  void* aa = aligned_alloc(128, 384);
  UseBlock(aa, 384, 7);
  PROBE_CHECK(reinterpret_cast<uintptr_t>(aa) % 128 == 0);
  free(aa);

  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* v = valloc(10);
  UseBlock(v, 10, 8);
  PROBE_CHECK(reinterpret_cast<uintptr_t>(v) % page == 0);
  free(v);

  void* pv = pvalloc(page + 1);  // rounded up to whole pages
  PROBE_CHECK(pv != nullptr && reinterpret_cast<uintptr_t>(pv) % page == 0);
  UseBlock(pv, 2 * page, 9);
  free(pv);
  void* pv0 = pvalloc(0);  // glibc: a minimal block; tcmalloc and heapkit: one page
  PROBE_CHECK(pv0 != nullptr && reinterpret_cast<uintptr_t>(pv0) % page == 0);
  UseBlock(pv0, Expected() == Allocator::kGlibc ? 0 : page, 10);
  free(pv0);

  // glibc's extra names.
  void* lm = __libc_malloc(77);
  UseBlock(lm, 77, 11);
  lm = __libc_realloc(lm, 7000);
  PROBE_CHECK(FindPatternMismatch(lm, 77, 11) == 77);
  __libc_free(lm);
  auto* lc = static_cast<unsigned char*>(__libc_calloc(3, 100));
  PROBE_CHECK(lc != nullptr);
  for (int i = 0; i < 300; ++i) PROBE_CHECK(lc[i] == 0);
  __libc_free(lc);
  void* lmm = __libc_memalign(4096, 100);
  PROBE_CHECK(lmm != nullptr && reinterpret_cast<uintptr_t>(lmm) % 4096 == 0);
  free(lmm);

  // mallopt / malloc_trim answer without crashing.
  (void)mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  (void)malloc_trim(0);
}

PROBE_CASE(cxx_entry_points) {
  // Scalar, array, nothrow, sized, aligned and aligned+sized forms, each paired correctly.
  {
    void* p = ::operator new(24);
    UseBlock(p, 24, 1);
    ::operator delete(p);
    p = ::operator new(24);
    ::operator delete(p, 24);
    p = ::operator new[](300);
    UseBlock(p, 300, 2);
    ::operator delete[](p);
    p = ::operator new[](300);
    ::operator delete[](p, 300);
  }
  {
    void* p = ::operator new(40, std::nothrow);
    UseBlock(p, 40, 3);
    ::operator delete(p, std::nothrow);
    p = ::operator new[](40, std::nothrow);
    UseBlock(p, 40, 4);
    ::operator delete[](p, std::nothrow);
  }
  for (size_t align : {16ul, 32ul, 64ul, 256ul, 4096ul, 65536ul, 1ul << 21}) {
    const auto al = std::align_val_t(align);
    for (size_t n : {1ul, align / 2 + 1, align, 3 * align + 5}) {
      void* p = ::operator new(n, al);
      UseBlock(p, n, align);
      PROBE_CHECK_MSG(reinterpret_cast<uintptr_t>(p) % align == 0, "align %zu n %zu", align, n);
      ::operator delete(p, al);
      p = ::operator new(n, al);
      ::operator delete(p, n, al);
      p = ::operator new[](n, al);
      UseBlock(p, n, align + 1);
      PROBE_CHECK(reinterpret_cast<uintptr_t>(p) % align == 0);
      ::operator delete[](p, al);
      p = ::operator new[](n, al);
      ::operator delete[](p, n, al);
      p = ::operator new(n, al, std::nothrow);
      PROBE_CHECK(p != nullptr && reinterpret_cast<uintptr_t>(p) % align == 0);
      ::operator delete(p, al, std::nothrow);
      p = ::operator new[](n, al, std::nothrow);
      PROBE_CHECK(p != nullptr && reinterpret_cast<uintptr_t>(p) % align == 0);
      ::operator delete[](p, al, std::nothrow);
    }
  }
  // new-expressions through the same operators; default new alignment for n >= 16.
  for (size_t n = 1; n < 2000; n += 7) {
    char* a = new char[n];
    Escape(a);
    if (n >= 16) {
      PROBE_CHECK_MSG(reinterpret_cast<uintptr_t>(a) % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0,
                      "new char[%zu] = %p", n, static_cast<void*>(a));
    }
    memset(a, 1, n);
    delete[] a;
  }
  struct alignas(128) Wide {
    char bytes[200];
  };
  Wide* w = new Wide[3];
  PROBE_CHECK(reinterpret_cast<uintptr_t>(w) % 128 == 0);
  delete[] w;
  // Memory from malloc is visible to the C++ side and vice versa (one heap).
  void* p = ::operator new(64);
  PROBE_CHECK(malloc_usable_size(p) >= 64);
  ::operator delete(p);
}

// malloc_info: glibc's XML document (EINVAL for options other than 0), with the allocator's
// own heap size; one heap.
PROBE_CASE(malloc_info_xml) {
  if (Expected() == Allocator::kTcmalloc)
    Skip("gperftools does not override malloc_info: glibc's reports its own, empty, arena");
  PROBE_CHECK(malloc_info(1, stdout) == EINVAL);
  void* keep = malloc(100000);
  Escape(keep);
  char* text = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  PROBE_CHECK(f != nullptr);
  PROBE_CHECK(malloc_info(0, f) == 0);
  fclose(f);
  const char* head = "<malloc version=\"1\">\n<heap nr=\"0\">\n";
  PROBE_CHECK_MSG(strncmp(text, head, strlen(head)) == 0, "%s", text);
  PROBE_CHECK_MSG(len > 10 && strcmp(text + len - 10, "</malloc>\n") == 0, "%s", text);
  const char* cur = strstr(text, "<system type=\"current\" size=\"");
  PROBE_CHECK_MSG(cur != nullptr, "%s", text);
  size_t system = strtoull(cur + strlen("<system type=\"current\" size=\""), nullptr, 10);
  PROBE_CHECK_MSG(system >= 100000, "system current %zu", system);
  PROBE_CHECK(strstr(text, "<total type=\"mmap\"") != nullptr);
  free(text);
  free(keep);
}

}  // namespace heapkit::probe
