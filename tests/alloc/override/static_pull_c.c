/* Linked by the C compiler driver with nothing but libheapkit_minimal.a: malloc and friends
 * come from the archive, which needs no C++ runtime (alloc/internal/cxx_runtime_weak.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char __executable_start[];
extern char etext[];

int main(void) {
  const char* p = (const char*)&malloc;
  if (p < __executable_start || p >= etext) {
    fprintf(stderr, "malloc is not heapkit's (not in the executable)\n");
    return 1;
  }
  char* blocks[1000];
  for (int i = 0; i < 1000; ++i) {
    blocks[i] = malloc((size_t)i * 7 + 1);
    if (blocks[i] == NULL) return 1;
    memset(blocks[i], i & 0xff, (size_t)i * 7 + 1);
  }
  for (int i = 0; i < 1000; ++i) {
    if (blocks[i][i * 7] != (char)(i & 0xff) || malloc_usable_size(blocks[i]) < (size_t)i * 7 + 1)
      return 1;
    free(blocks[i]);
  }
  puts("ok");
  return 0;
}
