// realloc keeps content across classes and to/from large; calloc zeroes reused memory and
// rejects overflowing products; reallocarray rejects overflow and leaves the block intact.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>

#include <cstdlib>

#include <initializer_list>

#include "probe.h"

namespace heapkit::probe {

PROBE_CASE(realloc_keeps_content) {
  // Growth and shrink chains crossing many classes and the small/large boundary.
  const size_t sizes[] = {1,       8,       15,      16,       17,     100,     1000,
                          4096,    8191,    32768,   100000,   262144, 262145,  300000,
                          1 << 20, 5 << 20, 1 << 20, 262145,   262144, 70000,   4097,
                          100,     17,      1,       33 << 20, 64,     1 << 19, 2};
  for (uintptr_t seed = 1; seed <= 3; ++seed) {
    size_t have = sizes[0];
    void* p = malloc(have);
    FillPattern(p, have, seed);
    for (size_t next : sizes) {
      void* q = realloc(p, next);
      PROBE_CHECK_MSG(q != nullptr, "realloc(%zu -> %zu)", have, next);
      const size_t keep = have < next ? have : next;
      const size_t bad = FindPatternMismatch(q, keep, seed);
      PROBE_CHECK_MSG(bad == keep, "realloc %zu -> %zu lost byte %zu", have, next, bad);
      PROBE_CHECK(malloc_usable_size(q) >= next);
      FillPattern(q, next, seed);
      p = q;
      have = next;
    }
    free(p);
  }
  // Every size to every nearby size, with neighbours alive so in-place growth is constrained.
  for (size_t from = 1; from < 3000; from += 37) {
    for (size_t to = 1; to < 3000; to += 101) {
      void* left = malloc(from);
      void* p = malloc(from);
      void* right = malloc(from);
      FillPattern(p, from, from ^ to);
      p = realloc(p, to);
      PROBE_CHECK(p != nullptr);
      const size_t keep = from < to ? from : to;
      PROBE_CHECK_MSG(FindPatternMismatch(p, keep, from ^ to) == keep, "%zu -> %zu", from, to);
      free(left);
      free(right);
      free(p);
    }
  }
  // Shrinking a huge block must keep the prefix, and growing in small steps must be sane.
  void* s = malloc(16);
  size_t have = 16;
  FillPattern(s, have, 9);
  for (size_t n = 32; n < (2u << 20); n = n * 5 / 4) {
    s = realloc(s, n);
    PROBE_CHECK(FindPatternMismatch(s, have, 9) == have);
    FillPattern(s, n, 9);
    have = n;
  }
  free(s);
  // realloc(p, 0) either frees and returns NULL or returns a freeable block; never crashes.
  void* z = realloc(malloc(10), 0);
  free(z);
}

PROBE_CASE(calloc_zeroes) {
  // Dirty memory of each size, free it, calloc the same size: every byte must be zero.
  const size_t sizes[] = {1,     8,     16,     24,     100,     1000,   4096,
                          10000, 65536, 262144, 262145, 1 << 20, 3 << 20};
  for (size_t n : sizes) {
    for (int round = 0; round < 4; ++round) {
      void* blocks[8];
      for (auto& b : blocks) {
        b = malloc(n);
        memset(b, 0xa5, n);
      }
      for (auto& b : blocks) free(b);
      for (auto& b : blocks) {
        auto* c = static_cast<unsigned char*>(calloc(1, n));
        PROBE_CHECK(c != nullptr);
        for (size_t i = 0; i < n; ++i) PROBE_CHECK_MSG(c[i] == 0, "calloc(%zu) byte %zu", n, i);
        memset(c, 0x5a, n);
        b = c;
      }
      for (auto& b : blocks) free(b);
    }
  }
  auto* e = static_cast<unsigned char*>(calloc(0, 10));
  free(e);
}

PROBE_CASE(calloc_overflow) {
  const size_t big = SIZE_MAX / 2 + 2;
  struct {
    size_t a, b;
  } cases[] = {{big, 2},
               {2, big},
               {size_t{1} << 32, size_t{1} << 32},
               {SIZE_MAX, SIZE_MAX},
               {SIZE_MAX / 16 + 1, 16},
               {3, SIZE_MAX / 3 + 1}};
  for (auto c : cases) {
    errno = 0;
    void* p = calloc(c.a, c.b);
    PROBE_CHECK_MSG(p == nullptr, "calloc(%zu, %zu) = %p", c.a, c.b, p);
    // gperftools 2.10 returns NULL without setting errno on overflow; glibc and heapkit set it.
    if (Expected() != Allocator::kTcmalloc)
      PROBE_CHECK_MSG(errno == ENOMEM, "calloc(%zu, %zu) errno %d", c.a, c.b, errno);
  }
  // Just below overflow but impossible to satisfy: also NULL + ENOMEM.
  errno = 0;
  PROBE_CHECK(calloc(SIZE_MAX / 4, 2) == nullptr);
  PROBE_CHECK(errno == ENOMEM);
}

PROBE_CASE(reallocarray_overflow) {
  void* p = reallocarray(nullptr, 16, 16);
  PROBE_CHECK(p != nullptr);
  FillPattern(p, 256, 5);
  errno = 0;
  void* q = reallocarray(p, SIZE_MAX / 8, 16);
  PROBE_CHECK_MSG(q == nullptr, "reallocarray overflow returned %p", q);
  PROBE_CHECK_MSG(errno == ENOMEM, "errno %d", errno);
  PROBE_CHECK(FindPatternMismatch(p, 256, 5) == 256);  // untouched, still ours
  errno = 0;
  q = reallocarray(p, size_t{1} << 33, size_t{1} << 33);
  PROBE_CHECK(q == nullptr && errno == ENOMEM);
  q = reallocarray(p, 64, 16);
  PROBE_CHECK(q != nullptr);
  PROBE_CHECK(FindPatternMismatch(q, 256, 5) == 256);
  free(q);
}

}  // namespace heapkit::probe
