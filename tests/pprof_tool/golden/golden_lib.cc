// Shared library for the golden tests: a frame in a second module, with an inlined helper.
#include <cstdlib>

namespace lib {

static inline __attribute__((always_inline)) void* LibInlineHelper(size_t n) { return malloc(n); }

__attribute__((noinline)) void* LibAlloc(size_t n) { return LibInlineHelper(n); }

}  // namespace lib
