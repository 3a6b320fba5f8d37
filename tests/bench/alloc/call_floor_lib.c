// The callee half of call_floor.c: two malloc/free-shaped pairs of functions in a shared
// library, so that the driver calls them through its PLT exactly as alloc_bench calls an
// LD_PRELOADed allocator's malloc and free.
//   empty   allocate returns one static object, release does nothing: what the two calls cost
//   list    a thread-local singly linked free list (pop in allocate, push in release): what an
//           allocator's fast path cannot do without
#include <stddef.h>

static char objects[32][64] __attribute__((aligned(64)));
static __thread void* list_head __attribute__((tls_model("initial-exec")));

void* floor_empty_allocate(size_t size) {
  (void)size;
  return objects[0];
}
void floor_empty_release(void* p) { (void)p; }

void* floor_list_allocate(size_t size) {
  (void)size;
  void* p = list_head;
  if (__builtin_expect(p == NULL, 0)) return objects[1];
  list_head = *(void**)p;
  return p;
}
void floor_list_release(void* p) {
  *(void**)p = list_head;
  list_head = p;
}

// A few objects on the list, as a warm thread cache has.
__attribute__((constructor)) static void FillList(void) {
  for (int i = 2; i < 32; ++i) floor_list_release(objects[i]);
}
