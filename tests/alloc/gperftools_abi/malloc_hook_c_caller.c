/* MallocHook's C API from a C program compiled against gperftools 2.10's
 * <gperftools/malloc_hook_c.h> (Debian's) and linked with libheapkit.so: Add/Remove and the
 * deprecated Set of New and Delete hooks, what they are called with, and that removed hooks are not
 * called. */
#include <gperftools/malloc_hook_c.h>
#include <stdio.h>
#include <stdlib.h>

static const void* last_new;
static size_t last_size;
static const void* last_delete;
static int calls;

static void on_new(const void* p, size_t size) {
  last_new = p;
  last_size = size;
  ++calls;
}
static void on_delete(const void* p) {
  last_delete = p;
  ++calls;
}

static int failures;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

int main(void) {
  void* volatile p;
  CHECK(MallocHook_AddNewHook(on_new) == 1);
  CHECK(MallocHook_AddDeleteHook(on_delete) == 1);
  p = malloc(4242);
  CHECK(last_new == p && last_size == 4242);
  free(p);
  CHECK(last_delete == p);
  CHECK(MallocHook_RemoveNewHook(on_new) == 1);
  CHECK(MallocHook_RemoveDeleteHook(on_delete) == 1);
  CHECK(MallocHook_RemoveNewHook(on_new) == 0);
  calls = 0;
  free(malloc(100));
  CHECK(calls == 0);

  CHECK(MallocHook_SetNewHook(on_new) == NULL);
  CHECK(MallocHook_SetDeleteHook(on_delete) == NULL);
  p = calloc(7, 9);
  CHECK(last_new == p && last_size == 63);
  free(p);
  CHECK(last_delete == p);
  CHECK(MallocHook_SetNewHook(NULL) == on_new);
  CHECK(MallocHook_SetDeleteHook(NULL) == on_delete);
  calls = 0;
  free(malloc(100));
  CHECK(calls == 0);
  printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
