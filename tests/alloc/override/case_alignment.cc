// Alignment and usable size of every size class, and of the aligned forms up to large
// alignments; neighbouring objects never overlap.
#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>

#include <initializer_list>

#include "probe.h"

namespace heapkit::probe {
namespace {

size_t NaturalAlignment(size_t n) {
  // glibc's promise that programs rely on: 16 for n >= 16, otherwise the largest power of two
  // not above n (an object of n bytes can need no more).
  if (n >= 16) return 16;
  size_t a = 1;
  while (a * 2 <= n) a *= 2;
  return a;
}

// Sizes covering every class boundary: each byte to 4 KiB, then both sides of every 16-byte
// boundary to 64 KiB, of every 1 KiB boundary to 288 KiB (past the 256 KiB small/large limit),
// and of every 16 KiB boundary to 1 MiB.
template <typename F>
void ForEachSize(F f) {
  for (size_t n = 0; n <= 4096; ++n) f(n);
  for (size_t n = 4096 + 16; n <= 65536; n += 16) f(n - 1), f(n);
  for (size_t n = 65536 + 1024; n <= 288 * 1024; n += 1024) f(n - 1), f(n);
  for (size_t n = 288 * 1024 + 16384; n <= (1u << 20); n += 16384) f(n - 1), f(n);
}

// Pattern over the whole block when small; head, tail and one byte per 512 when large.
void Mark(void* p, size_t n, uintptr_t seed) {
  if (n <= 16384) return FillPattern(p, n, seed);
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; i += (i < 4096 || i + 4096 >= n) ? 1 : 512) b[i] = PatternByte(seed, i);
}
bool Marked(const void* p, size_t n, uintptr_t seed) {
  if (n <= 16384) return FindPatternMismatch(p, n, seed) == n;
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; i += (i < 4096 || i + 4096 >= n) ? 1 : 512)
    if (b[i] != PatternByte(seed, i)) return false;
  return true;
}

}  // namespace

PROBE_CASE(size_class_alignment) {
  size_t checked = 0;
  ForEachSize([&](size_t n) {
    constexpr int kCopies = 3;
    void* p[kCopies];
    for (int i = 0; i < kCopies; ++i) {
      p[i] = malloc(n);
      PROBE_CHECK_MSG(p[i] != nullptr, "malloc(%zu)", n);
      const uintptr_t a = reinterpret_cast<uintptr_t>(p[i]);
      PROBE_CHECK_MSG(a % NaturalAlignment(n) == 0, "malloc(%zu) = %p", n, p[i]);
      const size_t usable = malloc_usable_size(p[i]);
      PROBE_CHECK_MSG(usable >= n, "malloc_usable_size(malloc(%zu)) = %zu", n, usable);
      Mark(p[i], usable, n * 4 + i);
    }
    for (int i = 0; i < kCopies; ++i) {
      const size_t usable = malloc_usable_size(p[i]);
      PROBE_CHECK_MSG(Marked(p[i], usable, n * 4 + i), "size %zu copy %d overwritten", n, i);
      free(p[i]);
    }
    ++checked;
  });
  printf("checked %zu sizes\n", checked);
}

PROBE_CASE(usable_size_waste) {
  // Only heapkit promises bounded waste: <= 12.5% per class above the smallest classes.
  if (!ExpectHeapkit()) Skip("waste bound is heapkit's promise");
  ForEachSize([&](size_t n) {
    if (n < 64 || n > 256 * 1024) return;
    void* p = malloc(n);
    const size_t usable = malloc_usable_size(p);
    PROBE_CHECK_MSG(usable <= n + n / 8 + 8, "malloc(%zu) usable %zu (waste > 12.5%%)", n, usable);
    free(p);
  });
}

PROBE_CASE(aligned_forms) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t align = 1; align <= (4u << 20); align *= 2) {
    for (size_t n : {1ul, 7ul, 100ul, align - 1 + (align == 1), align, align + 1, 3 * align}) {
      void* m = memalign(align, n);
      PROBE_CHECK_MSG(m != nullptr && reinterpret_cast<uintptr_t>(m) % align == 0,
                      "memalign(%zu, %zu) = %p", align, n, m);
      PROBE_CHECK(malloc_usable_size(m) >= n);
      FillPattern(m, n, 1);

      void* a = aligned_alloc(align, n);
      PROBE_CHECK_MSG(a != nullptr && reinterpret_cast<uintptr_t>(a) % align == 0,
                      "aligned_alloc(%zu, %zu) = %p", align, n, a);
      FillPattern(a, n, 2);

      void* pm = nullptr;
      if (align >= sizeof(void*)) {
        int rc = posix_memalign(&pm, align, n);
        PROBE_CHECK_MSG(rc == 0 && pm != nullptr && reinterpret_cast<uintptr_t>(pm) % align == 0,
                        "posix_memalign(%zu, %zu) rc %d p %p", align, n, rc, pm);
        FillPattern(pm, n, 3);
      }
      PROBE_CHECK(FindPatternMismatch(m, n, 1) == n);
      PROBE_CHECK(FindPatternMismatch(a, n, 2) == n);
      if (pm != nullptr) PROBE_CHECK(FindPatternMismatch(pm, n, 3) == n);
      free(m);
      free(a);
      free(pm);
    }
  }
  // Many live aligned objects of one alignment interleaved with plain ones.
  void* keep[512];
  for (int i = 0; i < 512; ++i) {
    size_t align = size_t{16} << (i % 9);
    keep[i] = (i % 2) ? memalign(align, 24 + i) : malloc(24 + i);
    PROBE_CHECK(keep[i] != nullptr);
    if (i % 2) PROBE_CHECK(reinterpret_cast<uintptr_t>(keep[i]) % align == 0);
    FillPattern(keep[i], 24 + i, i);
  }
  for (int i = 0; i < 512; ++i) {
    PROBE_CHECK(FindPatternMismatch(keep[i], 24 + i, i) == 24u + i);
    free(keep[i]);
  }
  void* v = valloc(3 * page + 5);
  PROBE_CHECK(v != nullptr && reinterpret_cast<uintptr_t>(v) % page == 0);
  free(v);
}

// An alignment whose reservation would pass the largest allocation (64 TiB) fails with ENOMEM
// like glibc's, instead of reserving it; the heap does not grow for it.
PROBE_CASE(huge_alignment_fails) {
  const size_t huge = size_t{1} << 46;
  void* p = reinterpret_cast<void*>(1);
  int rc = posix_memalign(&p, huge, 16);
  PROBE_CHECK_MSG(rc == ENOMEM, "posix_memalign(2^46, 16) = %d", rc);
  PROBE_CHECK(p == reinterpret_cast<void*>(1));  // untouched on failure
  errno = 0;
  PROBE_CHECK(memalign(huge, 16) == nullptr && errno == ENOMEM);
  errno = 0;
  PROBE_CHECK(aligned_alloc(huge, 16) == nullptr && errno == ENOMEM);
  errno = 0;
  PROBE_CHECK(memalign(size_t{1} << 63, 1) == nullptr && errno == ENOMEM);
  // Still usable afterwards, and a large (1 GiB) alignment still works.
  void* q = nullptr;
  PROBE_CHECK(posix_memalign(&q, size_t{1} << 30, 64) == 0);
  PROBE_CHECK(q != nullptr && reinterpret_cast<uintptr_t>(q) % (size_t{1} << 30) == 0);
  FillPattern(q, 64, 3);
  free(q);
}

}  // namespace heapkit::probe
