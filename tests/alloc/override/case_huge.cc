// Requests that cannot be met fail cleanly: NULL + ENOMEM from C, std::bad_alloc from C++,
// the new_handler is called until it gives up, nothrow new returns nullptr.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>

#include <cstdlib>
#include <new>

#include <initializer_list>

#include "probe.h"

namespace heapkit::probe {
namespace {

const size_t kHuge[] = {SIZE_MAX,        SIZE_MAX - 4096, SIZE_MAX / 2,   SIZE_MAX / 2 + 1,
                        size_t{1} << 47, size_t{1} << 50, size_t{1} << 63};

int g_handler_calls = 0;
void CountingHandler() {
  if (++g_handler_calls == 3) std::set_new_handler(nullptr);  // give up: new throws
}

}  // namespace

PROBE_CASE(huge_malloc) {
  for (size_t n : kHuge) {
    errno = 0;
    void* p = malloc(n);
    PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "malloc(%zu) = %p errno %d", n, p, errno);
    errno = 0;
    p = realloc(nullptr, n);
    PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "realloc(NULL, %zu) errno %d", n, errno);
    void* keep = malloc(100);
    FillPattern(keep, 100, 1);
    errno = 0;
    p = realloc(keep, n);
    PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "realloc(p, %zu) errno %d", n, errno);
    PROBE_CHECK(FindPatternMismatch(keep, 100, 1) == 100);
    free(keep);
    errno = 0;
    p = memalign(64, n);
    PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "memalign(64, %zu) errno %d", n, errno);
    errno = 0;
    p = aligned_alloc(4096, n);
    PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "aligned_alloc(4096, %zu)", n);
    void* pm = reinterpret_cast<void*>(1);
    PROBE_CHECK_MSG(posix_memalign(&pm, 64, n) == ENOMEM, "posix_memalign(64, %zu)", n);
    errno = 0;
    p = valloc(n);
    PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "valloc(%zu)", n);
    errno = 0;
    p = pvalloc(n);
    // gperftools 2.10 rounds pvalloc(SIZE_MAX) up to 0 and returns a page: its bug, not ours.
    if (Expected() != Allocator::kTcmalloc || n < SIZE_MAX - 4096)
      PROBE_CHECK_MSG(p == nullptr && errno == ENOMEM, "pvalloc(%zu) = %p", n, p);
  }
  // Huge alignment with a size that would wrap when rounded.
  errno = 0;
  void* p = memalign(size_t{1} << 40, SIZE_MAX - 100);
  PROBE_CHECK(p == nullptr && errno == ENOMEM);
  // The heap still works afterwards.
  p = malloc(1 << 20);
  PROBE_CHECK(p != nullptr);
  memset(p, 1, 1 << 20);
  free(p);
}

PROBE_CASE(huge_new_throws) {
  for (size_t n : kHuge) {
    bool threw = false;
    try {
      void* p = ::operator new(n);
      Escape(p);
      ::operator delete(p);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    PROBE_CHECK_MSG(threw, "operator new(%zu) did not throw", n);
    threw = false;
    try {
      void* p = ::operator new[](n);
      Escape(p);
      ::operator delete[](p);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    PROBE_CHECK_MSG(threw, "operator new[](%zu) did not throw", n);
    threw = false;
    // libstdc++'s own aligned new rounds n up to the alignment first and wraps to 0 for
    // n > SIZE_MAX - 255 (it then "succeeds"): only an allocator that replaces it must throw.
    if (Expected() == Allocator::kGlibc && n > SIZE_MAX - 256) continue;
    try {
      void* p = ::operator new(n, std::align_val_t(256));
      Escape(p);
      ::operator delete(p, std::align_val_t(256));
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    PROBE_CHECK_MSG(threw, "aligned operator new(%zu) did not throw", n);
    PROBE_CHECK(::operator new(n, std::nothrow) == nullptr);
    PROBE_CHECK(::operator new[](n, std::nothrow) == nullptr);
    PROBE_CHECK(::operator new(n, std::align_val_t(64), std::nothrow) == nullptr);
  }
}

PROBE_CASE(new_handler) {
  // The handler runs each time the allocation fails until it uninstalls itself; then bad_alloc.
  for (int form = 0; form < 3; ++form) {
    g_handler_calls = 0;
    std::set_new_handler(CountingHandler);
    bool threw = false;
    try {
      void* p = form == 0   ? ::operator new (size_t{1} << 47)
                : form == 1 ? ::operator new[](SIZE_MAX / 2)
                            : ::operator new (size_t{1} << 50, std::align_val_t(128));
      Escape(p);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    PROBE_CHECK_MSG(threw, "form %d: no bad_alloc", form);
    PROBE_CHECK_MSG(g_handler_calls == 3, "form %d: handler called %d times, want 3", form,
                    g_handler_calls);
  }
  // nothrow new also consults the handler, then returns nullptr.
  g_handler_calls = 0;
  std::set_new_handler(CountingHandler);
  void* p = ::operator new (size_t{1} << 47, std::nothrow);
  PROBE_CHECK(p == nullptr);
  PROBE_CHECK_MSG(g_handler_calls == 3, "nothrow: handler called %d times", g_handler_calls);
  std::set_new_handler(nullptr);
}

PROBE_CASE(nothrow_handler_throws) {
  // A handler that throws bad_alloc ends nothrow new's retries with nullptr (the exception
  // does not escape the noexcept operator); the throwing forms pass it on to the caller.
  struct Throwing {
    static void Handler() {
      ++g_handler_calls;
      throw std::bad_alloc();
    }
  };
  g_handler_calls = 0;
  std::set_new_handler(Throwing::Handler);
  PROBE_CHECK(::operator new (size_t{1} << 47, std::nothrow) == nullptr);
  PROBE_CHECK(::operator new[](size_t{1} << 47, std::nothrow) == nullptr);
  PROBE_CHECK(::operator new (size_t{1} << 47, std::align_val_t(256), std::nothrow) == nullptr);
  bool threw = false;
  try {
    Escape(::operator new (size_t{1} << 47));
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  std::set_new_handler(nullptr);
  PROBE_CHECK(threw);
  PROBE_CHECK_MSG(g_handler_calls == 4, "handler called %d times, want 4", g_handler_calls);
}

}  // namespace heapkit::probe
