/* A program with known leaks, for comparing heapkit's leak checker with LeakSanitizer and
 * valgrind memcheck (compare_leak_oracles.sh). Leaked, by construction:
 *   10 blocks of 100 B, all from one stack                       1000 B direct
 *   a 20-node singly linked list of 48 B nodes, head dropped       48 B direct + 912 B indirect
 *   a 3-node cycle of 64 B nodes, no outside pointer              192 B (how a cycle is split
 *                                                                  into direct/indirect differs)
 * total 2152 B in 33 objects. Not leaked: a 500 B block held by a global, and a 300 B block held
 * only through a global pointer 16 bytes into it (heapkit and LSan: live; valgrind: "possibly
 * lost"). Everything else the program allocates is freed. */
#include <stdlib.h>
#include <string.h>

struct Node {
  struct Node* next;
  char payload[40];
};

void* volatile g_held;
char* volatile g_interior;

__attribute__((noinline)) static void LeakBlocks(void) {
  for (int i = 0; i < 10; ++i) {
    char* p = malloc(100);
    memset(p, i, 100);
  }
}

__attribute__((noinline)) static void LeakList(void) {
  struct Node* head = NULL;
  for (int i = 0; i < 20; ++i) {
    struct Node* n = malloc(sizeof *n);
    memset(n->payload, 'l', sizeof n->payload);
    n->next = head;
    head = n;
  }
}

__attribute__((noinline)) static void LeakCycle(void) {
  struct Node* a = malloc(64);
  struct Node* b = malloc(64);
  struct Node* c = malloc(64);
  a->next = b;
  b->next = c;
  c->next = a;
}

__attribute__((noinline)) static void KeepReachable(void) {
  g_held = malloc(500);
  g_interior = (char*)malloc(300) + 16;
  for (int i = 0; i < 1000; ++i) free(malloc((size_t)(i % 64) * 8 + 1)); /* freed: not leaks */
}

/* Overwrites the dead frames the helpers left below main's frame, so no stale copy of a
 * leaked pointer survives on the stack for any checker to find. */
__attribute__((noinline)) static void ScrubStack(void) {
  volatile char buf[16384];
  for (size_t i = 0; i < sizeof buf; ++i) buf[i] = 0;
}

int main(void) {
  LeakBlocks();
  LeakList();
  LeakCycle();
  KeepReachable();
  ScrubStack();
  return 0;
}
