// Threads keep starting while main exits (a pool growing under load, a server taking
// connections): each new thread is handed a 64-byte block by the thread that starts it, which
// then forgets it, so the block's only pointers are in the new thread's stack and its struct
// pthread. The exit check must scan the stacks of threads started a moment before it stopped
// the world: it reports no leak. The blocks are allocated at start (so the profiler recorded
// them: an object allocated while the check runs is unrecorded, and the check keeps those) and
// wait in a heap array, whose slot the spawner clears as it hands a block on.
//   thread_spawner [before_exit]
// main returns once `before_exit` threads (default 100) have started; the spawner goes on
// starting threads (at most 3000, 64 KiB stacks) during the check.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kMostThreads = 3000 };

static atomic_int g_started;
static void** g_blocks;

static void* Hold(void* arg) {
  void* volatile held = arg;
  for (;;) pause();
  return held;
}

static void* Spawn(void* unused) {
  (void)unused;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (int i = 0; i < kMostThreads; ++i) {
    void* block = g_blocks[i];
    g_blocks[i] = NULL;
    pthread_t thread;
    if (pthread_create(&thread, &attr, Hold, block) != 0) {
      free(block);
      break;
    }
    atomic_fetch_add(&g_started, 1);
  }
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  const int before_exit = argc > 1 ? atoi(argv[1]) : 100;
  g_blocks = calloc(kMostThreads, sizeof(void*));
  if (g_blocks == NULL) return 2;
  for (int i = 0; i < kMostThreads; ++i) {
    g_blocks[i] = malloc(64);
    memset(g_blocks[i], i, 64);
  }
  pthread_t spawner;
  if (pthread_create(&spawner, NULL, Spawn, NULL) != 0) return 2;
  while (atomic_load(&g_started) < before_exit) usleep(100);
  printf("started %d threads, exiting while more start\n", atomic_load(&g_started));
  fflush(stdout);
  return 0;
}
