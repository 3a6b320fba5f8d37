// The program run_robustness.py starts under heapkit (LD_PRELOAD=libheapkit{,_minimal}.so, or
// linked with libheapkit.a) with bad input. One mode per argv[1]:
//   work <stacks>    allocate from <stacks> distinct call stacks (binary recursion tree: a
//                    big profile), leak 3 objects, dump a heap profile when profiling, exit 0
//   badfree <kind>   one invalid free (see kBadFrees); heapkit must abort with one line
//   sizes            allocation sizes near SIZE_MAX through every entry point; prints one
//                    "FAIL ..." line per broken promise, "sizes ok" when all hold
// Prints "victim done" on a normal exit so the harness can tell "ran normally" apart.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include <gperftools/heap-profiler.h>

// Preloaded heapkit supplies these at run time; the static flavour links them for real (a weak
// reference would not pull them out of libheapkit.a).
#ifndef HEAPKIT_VICTIM_LINKED
#pragma weak HeapProfilerDump
#pragma weak IsHeapProfilerRunning
#endif

namespace {

// Keeps the compiler from proving anything about a pointer (no allocation elision).
void* volatile g_sink;
void Escape(void* p) { g_sink = p; }

void* g_kept[1 << 16];
int g_kept_count = 0;

// Binary recursion with two distinct call sites: 2^depth distinct stacks at the leaves.
__attribute__((noinline)) void Grow(int depth, unsigned path);
__attribute__((noinline)) void GrowLeft(int depth, unsigned path) {
  Grow(depth - 1, path << 1);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void GrowRight(int depth, unsigned path) {
  Grow(depth - 1, (path << 1) | 1);
  asm volatile("nop" ::: "memory");
}
__attribute__((noinline)) void Grow(int depth, unsigned path) {
  if (depth == 0) {
    if (g_kept_count < (1 << 16)) g_kept[g_kept_count++] = malloc(64 + (path % 7) * 16);
    return;
  }
  GrowLeft(depth, path);
  GrowRight(depth, path);
  asm volatile("" ::: "memory");
}

int Work(int stacks) {
  int depth = 0;
  while ((1 << depth) < stacks && depth < 16) ++depth;
  Grow(depth, 0);
  for (int i = 0; i < 3; ++i) Escape(malloc(1000 + i));  // leaked: g_sink keeps only the last
  g_sink = nullptr;
#ifdef HEAPKIT_VICTIM_LINKED
  const bool have_api = true;
#else
  const bool have_api = &IsHeapProfilerRunning != nullptr;
#endif
  if (have_api && IsHeapProfilerRunning()) HeapProfilerDump("victim");
  printf("victim done\n");
  fflush(stdout);
  return 0;
}

char g_global[64];

int BadFree(const char* kind) {
  char on_stack[64];
  Escape(on_stack);
  if (strcmp(kind, "stack") == 0) {
    free(on_stack);
  } else if (strcmp(kind, "global") == 0) {
    free(g_global);
  } else if (strcmp(kind, "interior_small") == 0) {  // misaligned pointer into a live object
    char* p = static_cast<char*>(malloc(64));
    free(p + 8);
  } else if (strcmp(kind, "misaligned") == 0) {
    char* p = static_cast<char*>(malloc(256));
    free(p + 1);
  } else if (strcmp(kind, "interior_large") == 0) {
    char* p = static_cast<char*>(malloc(1 << 20));
    free(p + 4096 * 5);
  } else if (strcmp(kind, "never_allocated") == 0) {  // a page heapkit never saw
    void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    free(m);
  } else if (strcmp(kind, "wild") == 0) {
    free(reinterpret_cast<void*>(uintptr_t{0x10000}));
  } else if (strcmp(kind, "double_small") == 0) {
    void* p = malloc(48);
    free(p);
    free(p);
  } else if (strcmp(kind, "double_large") == 0) {
    void* p = malloc(3 << 20);
    free(p);
    free(p);
  } else if (strcmp(kind, "delete_stack") == 0) {
    ::operator delete(static_cast<void*>(on_stack));
  } else if (strcmp(kind, "delete_array_interior") == 0) {
    char* p = new char[200];
    delete[](p + 16);
  } else if (strcmp(kind, "realloc_stack") == 0) {
    Escape(realloc(on_stack, 100));
  } else if (strcmp(kind, "realloc_interior") == 0) {
    char* p = static_cast<char*>(malloc(128));
    Escape(realloc(p + 16, 1000));
  } else if (strcmp(kind, "realloc_freed_large") == 0) {
    void* p = malloc(2 << 20);
    free(p);
    Escape(realloc(p, 10));
  } else if (strcmp(kind, "sized_delete_wrong_size") == 0) {  // undefined, must not corrupt
    void* p = ::operator new(64);
    ::operator delete (p, size_t{4096});
  } else if (strcmp(kind, "delete_of_malloc") == 0) {  // mismatched, same heap: harmless
    void* p = malloc(64);
    ::operator delete(p);
  } else if (strcmp(kind, "double_free_delayed") == 0) {  // a, b, a: not detected (documented)
    void* a = malloc(32);
    void* b = malloc(32);
    free(a);
    free(b);
    free(a);
    void* x = malloc(32);
    void* y = malloc(32);
    printf("delayed double free: %s\n", x == y ? "same block twice" : "distinct blocks");
    _exit(0);
  } else {
    fprintf(stderr, "victim: unknown badfree kind %s\n", kind);
    return 2;
  }
  printf("victim done\n");
  fflush(stdout);
  return 0;
}

int g_failures = 0;
void Expect(bool ok, const char* what) {
  if (!ok) {
    printf("FAIL %s (errno %d)\n", what, errno);
    ++g_failures;
  }
}

// Each call must fail: NULL with errno ENOMEM (or EINVAL for a bad alignment; 0: either).
void ExpectNull(void* p, int want_errno, const char* what) {
  Expect(p == nullptr &&
             (errno == want_errno || (want_errno == 0 && (errno == ENOMEM || errno == EINVAL))),
         what);
  if (p != nullptr) free(p);
}

template <typename F>
bool Throws(F f) {
  try {
    Escape(f());
  } catch (const std::bad_alloc&) {
    return true;
  }
  return false;
}

int Sizes() {
  const size_t kMax = SIZE_MAX;
  const size_t kNear[] = {kMax,
                          kMax - 1,
                          kMax - 7,
                          kMax - 15,
                          kMax - 4095,
                          kMax - 4096,
                          kMax - (size_t{1} << 21),
                          kMax / 2 + 1};
  for (size_t n : kNear) {
    errno = 0;
    ExpectNull(malloc(n), ENOMEM, "malloc(near SIZE_MAX)");
    errno = 0;
    ExpectNull(calloc(1, n), ENOMEM, "calloc(1, near SIZE_MAX)");
    errno = 0;
    ExpectNull(calloc(n, 1), ENOMEM, "calloc(near SIZE_MAX, 1)");
    errno = 0;
    ExpectNull(realloc(nullptr, n), ENOMEM, "realloc(NULL, near SIZE_MAX)");
    void* keep = malloc(24);
    memset(keep, 0x5a, 24);
    errno = 0;
    ExpectNull(realloc(keep, n), ENOMEM, "realloc(p, near SIZE_MAX)");
    Expect(static_cast<unsigned char*>(keep)[23] == 0x5a, "realloc failure kept the block");
    free(keep);
    errno = 0;
    ExpectNull(memalign(16, n), ENOMEM, "memalign(16, near SIZE_MAX)");
    errno = 0;
    ExpectNull(memalign(size_t{1} << 20, n), ENOMEM, "memalign(1 MiB, near SIZE_MAX)");
    errno = 0;
    ExpectNull(aligned_alloc(64, n), ENOMEM, "aligned_alloc(64, near SIZE_MAX)");
    errno = 0;
    ExpectNull(valloc(n), ENOMEM, "valloc(near SIZE_MAX)");
    errno = 0;
    ExpectNull(pvalloc(n), ENOMEM, "pvalloc(near SIZE_MAX)");
    void* out = reinterpret_cast<void*>(1);
    Expect(posix_memalign(&out, 4096, n) == ENOMEM && out == reinterpret_cast<void*>(1),
           "posix_memalign(4096, near SIZE_MAX) == ENOMEM, output untouched");
    Expect(Throws([n] { return ::operator new(n); }), "new(near SIZE_MAX) throws");
    Expect(Throws([n] { return ::operator new[](n); }), "new[](near SIZE_MAX) throws");
    Expect(Throws([n] { return ::operator new(n, std::align_val_t(4096)); }),
           "aligned new(near SIZE_MAX) throws");
    Expect(::operator new(n, std::nothrow) == nullptr, "nothrow new(near SIZE_MAX) is null");
    Expect(::operator new[](n, std::align_val_t(64), std::nothrow) == nullptr,
           "nothrow aligned new[](near SIZE_MAX) is null");
  }
  // Products that wrap to small numbers: must not "succeed" with a tiny block.
  const size_t kHalf = size_t{1} << 32;
  errno = 0;
  ExpectNull(calloc(kHalf, kHalf), ENOMEM, "calloc(2^32, 2^32) (wraps to 0)");
  errno = 0;
  ExpectNull(calloc(kHalf + 1, kHalf - 1), ENOMEM, "calloc(2^32+1, 2^32-1) (wraps)");
  errno = 0;
  ExpectNull(calloc(kMax, kMax), ENOMEM, "calloc(SIZE_MAX, SIZE_MAX)");
  errno = 0;
  ExpectNull(reallocarray(nullptr, kHalf, kHalf), ENOMEM, "reallocarray(NULL, 2^32, 2^32)");
  void* ra = malloc(16);
  errno = 0;
  ExpectNull(reallocarray(ra, kMax / 8 + 2, 8), ENOMEM, "reallocarray(p, wraps)");
  free(ra);
  // Invalid alignments.
  void* out = reinterpret_cast<void*>(1);
  Expect(posix_memalign(&out, 0, 16) == EINVAL, "posix_memalign(alignment 0) == EINVAL");
  Expect(posix_memalign(&out, 48, 16) == EINVAL, "posix_memalign(alignment 48) == EINVAL");
  Expect(posix_memalign(&out, size_t{1} << 63, 16) != 0, "posix_memalign(alignment 2^63) fails");
  Expect(out == reinterpret_cast<void*>(1), "posix_memalign failures leave the output untouched");
  errno = 0;
  ExpectNull(aligned_alloc(size_t{1} << 63, 64), ENOMEM, "aligned_alloc(2^63, 64)");
  errno = 0;
  ExpectNull(memalign(size_t{1} << 63, 64), ENOMEM, "memalign(2^63, 64)");
  // Not a power of two: glibc says EINVAL (alignment > SIZE_MAX/2+1), ENOMEM is fine too.
  errno = 0;
  ExpectNull(memalign(kMax, 64), 0, "memalign(SIZE_MAX, 64)");
  errno = 0;
  ExpectNull(aligned_alloc(size_t{1} << 62, size_t{1} << 62), ENOMEM, "aligned_alloc(2^62, 2^62)");
  // glibc (2.38+) and C17 DR 460 let aligned_alloc fail EINVAL for a non-power-of-two alignment;
  // glibc 2.36 and heapkit round it up: either is fine, a crash or a misaligned block is not.
  errno = 0;
  void* odd = aligned_alloc(24, 48);
  Expect(odd == nullptr ? errno == EINVAL : reinterpret_cast<uintptr_t>(odd) % 8 == 0,
         "aligned_alloc(24, 48) is NULL+EINVAL or 8-aligned");
  free(odd);
  Expect(Throws([] { return ::operator new (size_t{1} << 50, std::align_val_t(size_t{1} << 40)); }),
         "new(2^50, align 2^40) throws");
  // new[] with an overflowing element count: std::bad_array_new_length (a bad_alloc).
  volatile size_t count = kMax / 4;
  Expect(Throws([&] { return static_cast<void*>(new int[count]); }), "new int[SIZE_MAX/4] throws");
  // The heap still works.
  void* p = malloc(1 << 20);
  Expect(p != nullptr, "malloc(1 MiB) after the failures");
  memset(p, 1, 1 << 20);
  free(p);
  if (g_failures == 0) printf("sizes ok\n");
  printf("victim done\n");
  fflush(stdout);
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "work") == 0) return Work(argc >= 3 ? atoi(argv[2]) : 16);
  if (argc >= 3 && strcmp(argv[1], "badfree") == 0) return BadFree(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "sizes") == 0) return Sizes();
  fprintf(stderr, "usage: victim work [stacks] | badfree <kind> | sizes\n");
  return 2;
}
