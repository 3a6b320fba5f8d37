// Every C/C++ allocation entry point, and the libc/C++ overrides (one TU, mimalloc-style
// aliases). Compiled twice: minimal, and full (-DHEAPKIT_FULL_RUNTIME=1) which also references
// the profiler's and checker's anchors so that static linking of -lheapkit pulls them in.
// This file keeps exceptions so that operator new can throw std::bad_alloc; the C++ runtime it
// needs for that is referenced weakly (alloc/internal/cxx_runtime_weak.h).
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <unistd.h>

#include "alloc/allocator.h"
#include "alloc/internal/cxx_runtime_weak.h"
#include "alloc/internal/log.h"
#include "alloc/stats.h"

// Aliases (__libc_malloc -> malloc) need not repeat glibc's attributes of the targets.
#pragma GCC diagnostic ignored "-Wmissing-attributes"

#define HEAPKIT_EXPORT extern "C" __attribute__((visibility("default")))
#define HEAPKIT_CXX_EXPORT __attribute__((visibility("default")))
#define HEAPKIT_ALIAS(target) __attribute__((alias(#target), visibility("default")))

#if defined(HEAPKIT_FULL_RUNTIME) && HEAPKIT_FULL_RUNTIME
extern "C" int heapkit_profiler_anchor;
extern "C" int heapkit_heapcheck_anchor;
// A used reference: static links of -lheapkit pull the profiler and checker start-up objects.
__attribute__((used)) static int* const heapkit_runtime_anchors[] = {&heapkit_profiler_anchor,
                                                                     &heapkit_heapcheck_anchor};
#endif

// The helpers are in namespace heapkit: a static link's frame filter knows the runtime's own
// functions by that name (profiler/capture/runtime_symbols.cc), and at -O0 they are real frames.
namespace heapkit::alloc {
namespace {

inline bool IsPowerOfTwo(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

inline void* AlignedMalloc(size_t align, size_t size) {
  if (align <= 16) return Malloc(size < align ? align : size);
  return MallocSlow(size, align);
}

// operator new failure: call the new_handler until it succeeds or throws.
void* NewSlow(size_t size, size_t align, bool nothrow) {
  if (!heapkit::internal::CxxRuntimeLoaded()) {  // no handler can be set, nothing can catch
    if (nothrow) return nullptr;
    heapkit::internal::Fatal("operator new(%zu) failed: out of memory", size);
  }
  for (;;) {
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    if (nothrow) {
      try {
        handler();
      } catch (const std::bad_alloc&) {
        return nullptr;
      }
    } else {
      handler();
    }
    void* p = align != 0 ? AlignedMalloc(align, size) : Malloc(size);
    if (p != nullptr) return p;
  }
}

// tc_set_new_mode(1): malloc-family failures call the new handler too (nothrow: a handler that
// throws bad_alloc ends the retries with NULL). The retries allocate through the same paths, so
// a failure inside them must not re-enter: one level per thread.
__thread bool tls_in_new_mode_retry __attribute__((tls_model("initial-exec"))) = false;
void* RetryWithNewHandler(size_t size, size_t align) {
  if (tls_in_new_mode_retry) return nullptr;
  tls_in_new_mode_retry = true;
  void* p = NewSlow(size, align > 16 ? align : 0, true);
  tls_in_new_mode_retry = false;
  if (p == nullptr) errno = ENOMEM;
  return p;
}
std::atomic<int> g_new_mode{0};

inline void* NewImpl(size_t size) {
  void* p = Malloc(size);
  if (HEAPKIT_LIKELY(p != nullptr)) return p;
  return NewSlow(size, 0, false);
}
inline void* NewNothrow(size_t size) noexcept {
  void* p = Malloc(size);
  if (HEAPKIT_LIKELY(p != nullptr)) return p;
  return NewSlow(size, 0, true);
}
inline void* NewAligned(size_t size, std::align_val_t al) {
  void* p = AlignedMalloc(static_cast<size_t>(al), size);
  if (HEAPKIT_LIKELY(p != nullptr)) return p;
  return NewSlow(size, static_cast<size_t>(al), false);
}
inline void* NewAlignedNothrow(size_t size, std::align_val_t al) noexcept {
  void* p = AlignedMalloc(static_cast<size_t>(al), size);
  if (HEAPKIT_LIKELY(p != nullptr)) return p;
  return NewSlow(size, static_cast<size_t>(al), true);
}

struct HeapkitMallinfo {
  int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
struct HeapkitMallinfo2 {
  size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

HeapkitMallinfo2 Mallinfo2() {
  heapkit::alloc::AllocatorStats s;
  heapkit::alloc::GetAllocatorStats(&s);
  HeapkitMallinfo2 m{};
  m.arena = s.system_bytes - s.large_in_use_bytes;
  m.ordblks = s.spans_in_use;
  m.hblks = 0;
  m.hblkhd = 0;
  m.usmblks = 0;
  m.fsmblks = s.thread_cache_free_bytes + s.transfer_free_bytes;
  m.uordblks = s.in_use_bytes;
  m.fordblks = s.pageheap_free_bytes + s.central_free_bytes + s.transfer_free_bytes +
               s.thread_cache_free_bytes;
  m.keepcost = s.pageheap_free_bytes;
  return m;
}

}  // namespace
}  // namespace heapkit::alloc

// The entry points below call the allocator (allocator.h) and the helpers above.
using heapkit::alloc::AlignedMalloc;
using heapkit::alloc::EstimatedSize;
using heapkit::alloc::Free;
using heapkit::alloc::g_new_mode;
using heapkit::alloc::HeapkitMallinfo;
using heapkit::alloc::HeapkitMallinfo2;
using heapkit::alloc::InvalidFree;
using heapkit::alloc::IsPowerOfTwo;
using heapkit::alloc::Mallinfo2;
using heapkit::alloc::Malloc;
using heapkit::alloc::MallocSlow;
using heapkit::alloc::NewAligned;
using heapkit::alloc::NewAlignedNothrow;
using heapkit::alloc::NewImpl;
using heapkit::alloc::NewNothrow;
using heapkit::alloc::ReallocInPlace;
using heapkit::alloc::RetryWithNewHandler;
using heapkit::alloc::UsableSize;

// ---- C -----------------------------------------------------------------------------------------
HEAPKIT_EXPORT void* malloc(size_t size) noexcept { return Malloc(size); }
HEAPKIT_EXPORT void free(void* ptr) noexcept { Free(ptr); }

HEAPKIT_EXPORT void* calloc(size_t n, size_t size) noexcept {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return heapkit::alloc::Calloc(total);
}

HEAPKIT_EXPORT void* realloc(void* ptr, size_t size) noexcept {
  if (ptr == nullptr) return Malloc(size);
  if (size == 0) {
    Free(ptr);
    return nullptr;
  }
  const size_t old = UsableSize(ptr);
  if (old == 0) InvalidFree(ptr);
  // Keep the block when the new size fits (with the leak checker's byte past the end:
  // EstimatedSize includes it) and does not waste more than half of it.
  if (size <= old) {
    const size_t fit = EstimatedSize(size, 0);
    if (fit <= old && (size >= old / 2 || fit == old)) return ReallocInPlace(ptr, size);
  }
  void* q = Malloc(size);
  if (q == nullptr) return nullptr;
  memcpy(q, ptr, size < old ? size : old);
  Free(ptr);
  return q;
}

HEAPKIT_EXPORT void* reallocarray(void* ptr, size_t n, size_t size) noexcept {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(ptr, total);
}

HEAPKIT_EXPORT void* memalign(size_t align, size_t size) noexcept {
  if (!IsPowerOfTwo(align)) {
    // glibc rounds a non-power-of-two alignment up.
    if (align > (size_t{1} << 62)) {
      errno = EINVAL;
      return nullptr;
    }
    size_t a = 1;
    while (a < align) a <<= 1;
    align = a;
  }
  return AlignedMalloc(align, size);
}

HEAPKIT_EXPORT int posix_memalign(void** out, size_t align, size_t size) noexcept {
  if (!IsPowerOfTwo(align) || align % sizeof(void*) != 0) return EINVAL;
  int saved = errno;
  void* p = AlignedMalloc(align, size);
  if (p == nullptr) {
    errno = saved;
    return ENOMEM;
  }
  *out = p;
  return 0;
}

HEAPKIT_EXPORT void* aligned_alloc(size_t align, size_t size) noexcept {
  if (!IsPowerOfTwo(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return AlignedMalloc(align, size);
}

HEAPKIT_EXPORT void* valloc(size_t size) noexcept { return AlignedMalloc(4096, size); }

HEAPKIT_EXPORT void* pvalloc(size_t size) noexcept {
  if (size > heapkit::alloc::kMaxAllocSize) {
    errno = ENOMEM;
    return nullptr;
  }
  size = size == 0 ? 4096 : (size + 4095) & ~size_t{4095};
  return AlignedMalloc(4096, size);
}

HEAPKIT_EXPORT size_t malloc_usable_size(void* ptr) noexcept { return UsableSize(ptr); }
HEAPKIT_EXPORT void cfree(void* ptr) noexcept { Free(ptr); }
HEAPKIT_EXPORT void free_sized(void* ptr, size_t) noexcept { Free(ptr); }
HEAPKIT_EXPORT void free_aligned_sized(void* ptr, size_t, size_t) noexcept { Free(ptr); }

HEAPKIT_EXPORT HeapkitMallinfo mallinfo() noexcept {
  HeapkitMallinfo2 m2 = Mallinfo2();
  HeapkitMallinfo m{};
  m.arena = static_cast<int>(m2.arena);
  m.ordblks = static_cast<int>(m2.ordblks);
  m.uordblks = static_cast<int>(m2.uordblks);
  m.fordblks = static_cast<int>(m2.fordblks);
  m.fsmblks = static_cast<int>(m2.fsmblks);
  m.keepcost = static_cast<int>(m2.keepcost);
  return m;
}
HEAPKIT_EXPORT HeapkitMallinfo2 mallinfo2() noexcept { return Mallinfo2(); }

HEAPKIT_EXPORT int mallopt(int param, int) noexcept {
  // glibc's parameters are accepted (and have no effect); unknown ones fail like glibc.
  return (param == 1 || (param >= -8 && param <= -1)) ? 1 : 0;
}

// glibc's XML shape with heapkit's figures: one heap (nr 0) holding every tier; "fast" is what
// thread and transfer caches hold, "rest" the other free bytes. No free-chunk size histogram.
HEAPKIT_EXPORT int malloc_info(int options, FILE* fp) noexcept {
  if (options != 0) return EINVAL;
  HeapkitMallinfo2 m = Mallinfo2();
  heapkit::alloc::AllocatorStats s;
  heapkit::alloc::GetAllocatorStats(&s);
  const size_t fast = m.fsmblks, rest = m.fordblks - m.fsmblks, sys = s.system_bytes;
  fprintf(fp, "<malloc version=\"1\">\n<heap nr=\"0\">\n<sizes>\n</sizes>\n");
  for (int whole = 0; whole < 2; ++whole) {
    fprintf(fp, "<total type=\"fast\" count=\"0\" size=\"%zu\"/>\n", fast);
    fprintf(fp, "<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n", m.ordblks, rest);
    if (whole) fprintf(fp, "<total type=\"mmap\" count=\"0\" size=\"0\"/>\n");
    fprintf(fp, "<system type=\"current\" size=\"%zu\"/>\n<system type=\"max\" size=\"%zu\"/>\n",
            sys, sys);
    fprintf(fp, "<aspace type=\"total\" size=\"%zu\"/>\n<aspace type=\"mprotect\" size=\"%zu\"/>\n",
            sys, sys);
    if (!whole) fprintf(fp, "</heap>\n");
  }
  fprintf(fp, "</malloc>\n");
  return 0;
}

HEAPKIT_EXPORT int malloc_trim(size_t) noexcept {
  heapkit::alloc::AllocatorStats before;
  heapkit::alloc::GetAllocatorStats(&before);
  heapkit::alloc::ReleaseFreeMemory();
  heapkit::alloc::AllocatorStats after;
  heapkit::alloc::GetAllocatorStats(&after);
  return after.pageheap_unmapped_bytes > before.pageheap_unmapped_bytes ? 1 : 0;
}

HEAPKIT_EXPORT void malloc_stats() noexcept {
  char buf[4096];
  size_t n = heapkit::alloc::FormatStats(buf, sizeof(buf));
  if (n >= sizeof(buf)) n = sizeof(buf) - 1;
  heapkit::internal::WriteAll(STDERR_FILENO, buf, n);
}

// glibc's internal names (used by some programs and by libc itself in places).
HEAPKIT_EXPORT void* __libc_malloc(size_t size) noexcept HEAPKIT_ALIAS(malloc);
HEAPKIT_EXPORT void __libc_free(void* ptr) noexcept HEAPKIT_ALIAS(free);
HEAPKIT_EXPORT void* __libc_calloc(size_t n, size_t size) noexcept HEAPKIT_ALIAS(calloc);
HEAPKIT_EXPORT void* __libc_realloc(void* ptr, size_t size) noexcept HEAPKIT_ALIAS(realloc);
HEAPKIT_EXPORT void* __libc_memalign(size_t align, size_t size) noexcept HEAPKIT_ALIAS(memalign);
HEAPKIT_EXPORT void* __libc_valloc(size_t size) noexcept HEAPKIT_ALIAS(valloc);
HEAPKIT_EXPORT void* __libc_pvalloc(size_t size) noexcept HEAPKIT_ALIAS(pvalloc);
HEAPKIT_EXPORT int __posix_memalign(void** out, size_t align, size_t size) noexcept
    HEAPKIT_ALIAS(posix_memalign);
HEAPKIT_EXPORT HeapkitMallinfo __libc_mallinfo() noexcept HEAPKIT_ALIAS(mallinfo);
HEAPKIT_EXPORT int __libc_mallopt(int param, int value) noexcept HEAPKIT_ALIAS(mallopt);

// ---- C++ ---------------------------------------------------------------------------------------
HEAPKIT_CXX_EXPORT void* operator new(size_t size) { return NewImpl(size); }
HEAPKIT_CXX_EXPORT void* operator new[](size_t size) { return NewImpl(size); }
HEAPKIT_CXX_EXPORT void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return NewNothrow(size);
}
HEAPKIT_CXX_EXPORT void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return NewNothrow(size);
}
HEAPKIT_CXX_EXPORT void* operator new(size_t size, std::align_val_t al) {
  return NewAligned(size, al);
}
HEAPKIT_CXX_EXPORT void* operator new[](size_t size, std::align_val_t al) {
  return NewAligned(size, al);
}
HEAPKIT_CXX_EXPORT void* operator new(size_t size, std::align_val_t al,
                                      const std::nothrow_t&) noexcept {
  return NewAlignedNothrow(size, al);
}
HEAPKIT_CXX_EXPORT void* operator new[](size_t size, std::align_val_t al,
                                        const std::nothrow_t&) noexcept {
  return NewAlignedNothrow(size, al);
}

HEAPKIT_CXX_EXPORT void operator delete(void* p) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete[](void* p) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete(void* p, size_t) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete[](void* p, size_t) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete(void* p, std::align_val_t) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete(void* p, size_t, std::align_val_t) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete[](void* p, size_t, std::align_val_t) noexcept { Free(p); }
HEAPKIT_CXX_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  Free(p);
}
HEAPKIT_CXX_EXPORT void operator delete[](void* p, std::align_val_t,
                                          const std::nothrow_t&) noexcept {
  Free(p);
}

// ---- gperftools tc_* names (<gperftools/tcmalloc.h>) -----------------------------------------
HEAPKIT_EXPORT void* tc_malloc(size_t size) noexcept HEAPKIT_ALIAS(malloc);
HEAPKIT_EXPORT void* tc_malloc_skip_new_handler(size_t size) noexcept HEAPKIT_ALIAS(malloc);
HEAPKIT_EXPORT void tc_free(void* ptr) noexcept HEAPKIT_ALIAS(free);
HEAPKIT_EXPORT void tc_free_sized(void* ptr, size_t size) noexcept HEAPKIT_ALIAS(free_sized);
HEAPKIT_EXPORT void* tc_realloc(void* ptr, size_t size) noexcept HEAPKIT_ALIAS(realloc);
HEAPKIT_EXPORT void* tc_calloc(size_t n, size_t size) noexcept HEAPKIT_ALIAS(calloc);
HEAPKIT_EXPORT void tc_cfree(void* ptr) noexcept HEAPKIT_ALIAS(free);
HEAPKIT_EXPORT void* tc_memalign(size_t align, size_t size) noexcept HEAPKIT_ALIAS(memalign);
HEAPKIT_EXPORT int tc_posix_memalign(void** out, size_t align, size_t size) noexcept
    HEAPKIT_ALIAS(posix_memalign);
HEAPKIT_EXPORT void* tc_valloc(size_t size) noexcept HEAPKIT_ALIAS(valloc);
HEAPKIT_EXPORT void* tc_pvalloc(size_t size) noexcept HEAPKIT_ALIAS(pvalloc);
HEAPKIT_EXPORT void tc_malloc_stats() noexcept HEAPKIT_ALIAS(malloc_stats);
HEAPKIT_EXPORT int tc_mallopt(int cmd, int value) noexcept HEAPKIT_ALIAS(mallopt);
HEAPKIT_EXPORT size_t tc_malloc_size(void* ptr) noexcept HEAPKIT_ALIAS(malloc_usable_size);
HEAPKIT_EXPORT HeapkitMallinfo tc_mallinfo() noexcept HEAPKIT_ALIAS(mallinfo);
HEAPKIT_EXPORT HeapkitMallinfo2 tc_mallinfo2() noexcept HEAPKIT_ALIAS(mallinfo2);
HEAPKIT_EXPORT int tc_set_new_mode(int flag) noexcept {
  const int previous = g_new_mode.exchange(flag != 0 ? 1 : 0);
  heapkit::alloc::SetAllocationFailureHandler(flag != 0 ? &RetryWithNewHandler : nullptr);
  return previous;
}
// The C++ forms under their tc_ names (extern "C" in gperftools' header).
HEAPKIT_EXPORT void* tc_new(size_t size) { return NewImpl(size); }
HEAPKIT_EXPORT void* tc_newarray(size_t size) { return NewImpl(size); }
HEAPKIT_EXPORT void* tc_new_nothrow(size_t size, const std::nothrow_t&) noexcept {
  return NewNothrow(size);
}
HEAPKIT_EXPORT void* tc_newarray_nothrow(size_t size, const std::nothrow_t&) noexcept {
  return NewNothrow(size);
}
HEAPKIT_EXPORT void* tc_new_aligned(size_t size, std::align_val_t al) {
  return NewAligned(size, al);
}
HEAPKIT_EXPORT void* tc_newarray_aligned(size_t size, std::align_val_t al) {
  return NewAligned(size, al);
}
HEAPKIT_EXPORT void* tc_new_aligned_nothrow(size_t size, std::align_val_t al,
                                            const std::nothrow_t&) noexcept {
  return NewAlignedNothrow(size, al);
}
HEAPKIT_EXPORT void* tc_newarray_aligned_nothrow(size_t size, std::align_val_t al,
                                                 const std::nothrow_t&) noexcept {
  return NewAlignedNothrow(size, al);
}
HEAPKIT_EXPORT void tc_delete(void* p) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_deletearray(void* p) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_delete_sized(void* p, size_t) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_deletearray_sized(void* p, size_t) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_delete_nothrow(void* p, const std::nothrow_t&) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_deletearray_nothrow(void* p, const std::nothrow_t&) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_delete_aligned(void* p, std::align_val_t) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_deletearray_aligned(void* p, std::align_val_t) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_delete_sized_aligned(void* p, size_t, std::align_val_t) noexcept { Free(p); }
HEAPKIT_EXPORT void tc_deletearray_sized_aligned(void* p, size_t, std::align_val_t) noexcept {
  Free(p);
}
HEAPKIT_EXPORT void tc_delete_aligned_nothrow(void* p, std::align_val_t,
                                              const std::nothrow_t&) noexcept {
  Free(p);
}
HEAPKIT_EXPORT void tc_deletearray_aligned_nothrow(void* p, std::align_val_t,
                                                   const std::nothrow_t&) noexcept {
  Free(p);
}

HEAPKIT_EXPORT const char* tc_version(int* major, int* minor, const char** patch) noexcept {
  if (major != nullptr) *major = 2;
  if (minor != nullptr) *minor = 10;
  if (patch != nullptr) *patch = "";
  return "heapkit (gperftools 2.10 compatible)";
}
