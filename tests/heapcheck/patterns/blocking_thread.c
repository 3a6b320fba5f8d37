// A worker thread that blocks every signal (xz -T2's workers, jemalloc's background thread)
// and holds the only pointer to a heap object on its stack while main exits. It prints its tid.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t g_started;

static void* Worker(void* arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
  char* volatile held = malloc(96);
  memset(held, 7, 96);
  printf("worker %d\n", gettid());
  fflush(stdout);
  pthread_barrier_wait(&g_started);
  for (;;) pause();
  return NULL;
}

int main(void) {
  pthread_barrier_init(&g_started, NULL, 2);
  pthread_t t;
  pthread_create(&t, NULL, Worker, NULL);
  pthread_barrier_wait(&g_started);
  return 0;
}
