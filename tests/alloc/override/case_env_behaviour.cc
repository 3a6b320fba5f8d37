// Environment variables change behaviour as documented. ctest sets the variable for these cases
// (heapkit flavours only; the references skip).
#include <errno.h>
#include <malloc.h>

#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "probe.h"

namespace heapkit::probe {

PROBE_CASE(heap_limit) {
  // TCMALLOC_HEAP_LIMIT_MB=64: the heap never grows past 64 MiB; requests beyond fail cleanly.
  if (!ExpectHeapkit()) Skip("TCMALLOC_HEAP_LIMIT_MB is checked for heapkit");
  const char* v = getenv("TCMALLOC_HEAP_LIMIT_MB");
  PROBE_CHECK_MSG(v != nullptr && strcmp(v, "64") == 0, "run with TCMALLOC_HEAP_LIMIT_MB=64");
  errno = 0;
  void* big = malloc(100u << 20);
  PROBE_CHECK_MSG(big == nullptr && errno == ENOMEM, "malloc(100 MiB) = %p errno %d", big, errno);
  bool threw = false;
  try {
    Escape(::operator new(80u << 20));
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  PROBE_CHECK(threw);
  // Fill up to the limit with 1 MiB blocks: some succeed, then NULL + ENOMEM, never a crash.
  std::vector<void*> blocks;
  blocks.reserve(200);
  for (int i = 0; i < 200; ++i) {
    errno = 0;
    void* p = malloc(1u << 20);
    if (p == nullptr) {
      PROBE_CHECK(errno == ENOMEM);
      break;
    }
    memset(p, 1, 1u << 20);
    blocks.push_back(p);
  }
  printf("%zu x 1 MiB fit under the 64 MiB limit\n", blocks.size());
  PROBE_CHECK_MSG(blocks.size() >= 40 && blocks.size() <= 64, "%zu MiB fit", blocks.size());
  for (void* p : blocks) free(p);
  // After freeing, the memory is available again.
  void* again = malloc(32u << 20);
  PROBE_CHECK(again != nullptr);
  free(again);
}

PROBE_CASE(sample_every_allocation) {
  // TCMALLOC_SAMPLE_PARAMETER=1: every allocation takes the sampling slow path. Results must
  // not change: usable sizes, contents, alignment, cross-thread frees.
  if (!ExpectHeapkit()) Skip("sampling is heapkit's");
  const char* v = getenv("TCMALLOC_SAMPLE_PARAMETER");
  PROBE_CHECK_MSG(v != nullptr && strcmp(v, "1") == 0, "run with TCMALLOC_SAMPLE_PARAMETER=1");
  const MallocExt& e = RequireExt();
  for (size_t n = 1; n < 300000; n = n * 9 / 8 + 1) {
    void* p = malloc(n);
    PROBE_CHECK(p != nullptr);
    PROBE_CHECK_MSG(malloc_usable_size(p) == e.nallocx(n, 0),
                    "sampled malloc(%zu): usable %zu, "
                    "nallocx %zu",
                    n, malloc_usable_size(p), e.nallocx(n, 0));
    if (n >= 16) PROBE_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == 0);
    FillPattern(p, n, n);
    void* q = realloc(p, n * 3);
    PROBE_CHECK(FindPatternMismatch(q, n, n) == n);
    free(q);
  }
  // A sampled object must not cost a whole span: many small sampled objects stay compact.
  const size_t before = Property("generic.heap_size");
  std::vector<void*> keep(20000);
  for (auto& k : keep) k = malloc(32);
  const size_t after = Property("generic.heap_size");
  printf("heap_size grew by %zu KiB for 20000 sampled 32-byte objects\n", (after - before) >> 10);
  PROBE_CHECK_MSG(after - before < (8u << 20), "heap grew %zu bytes", after - before);
  std::thread t([&] {
    for (auto& k : keep) free(k);  // cross-thread frees of sampled objects
  });
  t.join();
}

}  // namespace heapkit::probe
