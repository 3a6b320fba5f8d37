// Stop-the-world cost with many threads: N threads, each holding the only pointer to a 64-byte
// block on its stack and sleeping, while main exits (the leak check stops them all).
//   many_threads <threads> signal|blocking
// signal: the threads take the suspend signal; blocking: every thread blocks every signal
// (stopped with ptrace, or not at all).
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t g_started;
static int g_blocking;

static void* Worker(void* arg) {
  (void)arg;
  if (g_blocking) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
  }
  char* volatile held = malloc(64);
  memset(held, 1, 64);
  pthread_barrier_wait(&g_started);
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  g_blocking = argc > 2 && strcmp(argv[2], "blocking") == 0;
  pthread_barrier_init(&g_started, NULL, (unsigned)n + 1);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (int i = 0; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, Worker, NULL) != 0) {
      perror("pthread_create");
      return 2;
    }
  }
  pthread_barrier_wait(&g_started);
  return 0;
}
