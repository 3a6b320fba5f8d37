// Old code includes <google/...> and <gperftools/nallocx.h>: they resolve to heapkit's headers
// and the names they declare link and answer.
#include <google/heap-checker.h>
#include <google/heap-profiler.h>
#include <google/malloc_extension.h>
#include <google/malloc_extension_c.h>
#include <google/malloc_hook.h>
#include <google/malloc_hook_c.h>
#include <google/tcmalloc.h>
#include <gperftools/nallocx.h>

#include <cstdio>
#include <cstdlib>

int main() {
  const size_t n = nallocx(100, 0);
  const size_t aligned = tc_nallocx(100, MALLOCX_LG_ALIGN(12));
  void* p = tc_malloc(100);
  const size_t usable = tc_malloc_size(p);
  tc_free(p);
  size_t heap = 0;
  const bool have = MallocExtension::instance()->GetNumericProperty("generic.heap_size", &heap);
  const bool ok = n >= 100 && n == usable && aligned >= 4096 && have && heap > 0 &&
                  !IsHeapProfilerRunning() && MallocHook::GetNewHook() == nullptr &&
                  MallocHook_RemoveDeleteHook(nullptr) == 0;
  std::printf("%s: nallocx(100)=%zu tc_malloc_size=%zu tc_nallocx(100, 4 KiB)=%zu heap=%zu\n",
              ok ? "PASS" : "FAIL", n, usable, aligned, heap);
  return ok ? 0 : 1;
}
