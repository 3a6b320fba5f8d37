// gperftools' <gperftools/tcmalloc.h> names, compiled against gperftools' own header (Debian's)
// and run against libheapkit under TCMALLOC_HEAP_LIMIT_MB=64: tc_new/tc_delete families,
// tc_mallinfo, and tc_set_new_mode (malloc failures call the new handler only in new mode).
#include <gperftools/tcmalloc.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "check.h"

static int handler_calls = 0;
static void Handler() {
  ++handler_calls;
  std::set_new_handler(nullptr);  // give up: the allocation then fails
}

int main() {
  void* a = tc_new(100);
  void* b = tc_newarray(200);
  void* c = tc_new_nothrow(300, std::nothrow);
  void* d = tc_new_aligned(64, std::align_val_t(256));
  CHECK(a && b && c && d && reinterpret_cast<uintptr_t>(d) % 256 == 0);
  CHECK(tc_malloc_size(a) >= 100 && tc_malloc_size(b) >= 200);
  std::memset(a, 1, 100);
  tc_delete(a);
  tc_deletearray_sized(b, 200);
  tc_delete_nothrow(c, std::nothrow);
  tc_delete_aligned(d, std::align_val_t(256));
  struct mallinfo mi = tc_mallinfo();
  CHECK(mi.arena > 0);

  const size_t too_big = size_t{200} << 20;  // over the 64 MiB heap limit
  std::set_new_handler(Handler);
  CHECK(tc_malloc(too_big) == nullptr);
  CHECK(handler_calls == 0);  // new mode off: malloc does not call the handler
  CHECK(tc_set_new_mode(1) == 0);
  CHECK(tc_malloc(too_big) == nullptr);
  CHECK(handler_calls == 1);  // new mode on: called once, then it gave up
  CHECK(tc_set_new_mode(0) == 1);
  bool threw = false;
  try {
    std::set_new_handler(nullptr);
    tc_new(too_big);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK(threw);
  if (failures == 0) std::printf("PASS: tc_* names, tc_mallinfo, tc_set_new_mode\n");
  return failures == 0 ? 0 : 1;
}
