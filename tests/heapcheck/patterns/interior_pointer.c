// A block kept only through an interior pointer 2048 bytes into it (a global holds &block[2048],
// as a program keeps a pointer to a member deep inside a large struct), next to a plain leak of
// 123 bytes. Under gperftools' rule (HEAP_CHECK_MAX_POINTER_OFFSET=1024) the 4096-byte block is
// a leak too; under LeakSanitizer's (any interior pointer) it is live. Either way the report
// says, in one line, what the other rule would change.
#include <stdio.h>
#include <stdlib.h>

char* volatile g_inside;  // the only pointer to the block: 2048 bytes past its start

int main(void) {
  char* block = malloc(4096);
  g_inside = block + 2048;
  block = NULL;
  char* volatile leaked = malloc(123);
  leaked = NULL;
  puts("done");
  return 0;
}
